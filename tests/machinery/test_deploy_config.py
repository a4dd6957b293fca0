"""deploy/jupyterhub: the Zero to JupyterHub config agrees with the measurements and the guide.

* its per-user memory and CPU are what ``rec11_tools.hubsize`` derives from the measured
  ``sizing.json``, and SIZING.md is that file's current rendering;
* CORS names the book's GitHub Pages origin, on the hub and on the single-user servers;
* single-user servers accept the token on the kernel's websocket (JUPYTERHUB_ALLOW_TOKEN_IN_URL);
* idle servers are culled, the image is pre-pulled, the models are in the image;
* the real hub of the browser tests (tests/browser/hub_support.py) is set up the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from rec11_tools import hubsize

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "jupyterhub"


@pytest.fixture(scope="module")
def config() -> dict:
    return yaml.safe_load((DEPLOY / "config.yaml").read_text())


@pytest.fixture(scope="module")
def measured() -> dict:
    return hubsize.load(DEPLOY / "sizing.json")


def pages_origin() -> str:
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    owner = urlparse(repo).path.strip("/").split("/")[0]
    return f"https://{owner.lower()}.github.io"


def test_the_measurements_cover_one_to_eight_kernels_with_the_load_they_ran_under(measured):
    assert [r["n"] for r in measured["rounds"]] == [1, 2, 4, 8]
    for r in measured["rounds"]:
        assert len(r["students"]) == r["n"] and len(r["load_before"]) == 3 and len(r["load_after"]) == 3
        for student in r["students"]:
            assert set(student) == set(measured["pages"])
            for row in student.values():
                assert row["peak_mb"] > 100 and row["cpu_s"] > 0 and row["first_output_s"] > 0
    assert 30 < measured["server_mb"] < 500


def test_memory_and_cpu_are_the_measured_ones(config, measured):
    rec = hubsize.recommend(measured)
    single = config["singleuser"]
    assert single["memory"]["guarantee"] == hubsize.gigabytes(rec["memory_guarantee_mb"])
    assert single["memory"]["limit"] == hubsize.gigabytes(rec["memory_limit_mb"])
    assert float(single["cpu"]["guarantee"]) == rec["cpu_guarantee"]
    assert float(single["cpu"]["limit"]) == rec["cpu_limit"]
    guide = (DEPLOY / "README.md").read_text()
    assert (f"memory guarantee {hubsize.gigabytes(rec['memory_guarantee_mb'])} and limit "
            f"{hubsize.gigabytes(rec['memory_limit_mb'])}") in guide, "the guide's numbers differ from the measured"
    # the heaviest page fits the guarantee, and the limit stays within Binder's 2 GB
    assert rec["memory_guarantee_mb"] >= rec["server_mb"] + rec["kernel_peak_max_mb"]
    assert rec["memory_guarantee_mb"] < rec["memory_limit_mb"] <= 2048


def test_the_sizing_report_is_the_current_rendering_of_the_measurements(measured):
    assert (DEPLOY / "SIZING.md").read_text() == hubsize.markdown(measured), (
        "deploy/jupyterhub/SIZING.md is stale: run `python -m rec11_tools.hubsize`")


def test_cors_names_the_books_pages_origin_on_the_hub_and_its_servers(config):
    origin = pages_origin()
    headers = config["hub"]["config"]["JupyterHub"]["tornado_settings"]["headers"]
    assert headers["Access-Control-Allow-Origin"] == origin
    assert f"--ServerApp.allow_origin={origin}" in config["hub"]["config"]["Spawner"]["args"]


def test_servers_accept_the_token_on_the_kernels_websocket(config):
    assert config["singleuser"]["extraEnv"]["JUPYTERHUB_ALLOW_TOKEN_IN_URL"] == "1"


def test_idle_servers_are_culled_the_image_is_prepulled_and_has_the_models(config):
    assert config["cull"]["enabled"] is True and 600 <= config["cull"]["timeout"] <= 3600
    assert config["prePuller"]["hook"]["enabled"] and config["prePuller"]["continuous"]["enabled"]
    guide = (DEPLOY / "README.md").read_text()
    assert "--target-repo-dir /srv/rec11" in guide and "repo2docker" in guide
    assert config["singleuser"]["extraEnv"]["REC11_CACHE_DIR"].startswith("/srv/rec11/")
    assert config["singleuser"]["extraEnv"]["REC11_THREADS"] == "1"
    spawner_args = config["hub"]["config"]["Spawner"]["args"]
    assert any(a.startswith("--MappingKernelManager.cull_idle_timeout=") for a in spawner_args)


def test_the_browser_tests_hub_is_set_up_as_the_guide_says():
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    try:
        import hub_support
    finally:
        sys.path.pop(0)
    text = hub_support.HUB_CONFIG
    assert 'c.JupyterHub.tornado_settings = {{"headers": {{"Access-Control-Allow-Origin": {origin!r}}}}}' in text
    assert 'c.Spawner.args = ["--ServerApp.allow_origin=" + {origin!r}]' in text
    assert "JUPYTERHUB_ALLOW_TOKEN_IN_URL" in Path(hub_support.__file__).read_text()
