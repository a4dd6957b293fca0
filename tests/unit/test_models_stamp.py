"""The stamp `python -m rec11.models` leaves is the one the build looks for: no torch when nothing trains."""

import os
import subprocess
import sys

from rec11.models import stamp


def test_the_stamp_written_as_a_script_is_the_one_looked_up_on_import(tmp_path, monkeypatch):
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path))
    subprocess.run([sys.executable, "-m", "rec11.models", "--modules"], env=dict(os.environ), check=True,
                   capture_output=True)
    assert stamp([]).is_file(), f"python -m rec11.models wrote {[p.name for p in tmp_path.iterdir()]}"
