"""rec11_book.shared.warmkernels: a kernel forked from a process that imported torch and pyplot
runs a page as a fresh kernel does, and stops, is stopped and is cleaned up as one is."""

import json
import os
import signal
import time
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from rec11_book.compat.jupyter_cache import execute_notebook
from rec11_book.shared import warmkernels
from rec11_book.shared.execution import kernel_sockets

pytestmark = pytest.mark.skipif(not warmkernels.available(), reason="kernels are forked on Linux only")

# What a page's kernel can see of how it was started, printed as one line of JSON.
FACTS = """
import json, os, sys
nbformat_loaded = "nbformat" in sys.modules  # which the pages' glue imports on its first call
import torch
import helper  # a module beside the page, found through the kernel's working folder
print(json.dumps({
    "cwd": os.getcwd(),
    "path": sys.path,
    "argv0": os.path.basename(sys.argv[0]),
    "env": os.environ.get("REC11_TEST_VALUE"),
    "own_group": os.getpgid(0) == os.getpid(),
    "seed": torch.initial_seed(),
    "first_draw": torch.rand(1).item(),
    "pid": os.getpid(),
    "parent": os.getppid(),
    "helper": helper.VALUE,
    "nbformat_loaded": nbformat_loaded,
}))
"""


def notebook(*sources: str):
    return new_notebook(cells=[new_code_cell(source) for source in sources],
                        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def run(nb, folder, server, timeout=60):
    """Run ``nb`` in ``folder`` as the build does; returns (error, the first cell's printed text)."""
    with kernel_sockets() as sockets:
        client = warmkernels.client_settings(server, sockets.get("config"))
        result = execute_notebook(nb, cwd=str(folder), timeout=timeout, **client)
    outputs = nb.cells[0].get("outputs", [])
    return result.err, "".join(o.get("text", "") for o in outputs)


@pytest.fixture(scope="module")
def server():
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("REC11_TEST_VALUE", "from the build")  # before the server: its kernels see it
        with warmkernels.fork_server() as path:
            assert path is not None, "the fork server did not start"
            yield path


@pytest.fixture
def page_folder(tmp_path, server):
    (tmp_path / "helper.py").write_text("VALUE = 41 + 1\n")
    return tmp_path


def test_a_forked_kernel_starts_where_a_fresh_one_does(server, page_folder):
    forked = len(warmkernels.FORKED)
    err, warm = run(notebook(FACTS), page_folder, server)
    assert err is None, err
    assert len(warmkernels.FORKED) == forked + 1  # what the build's summary counts
    err, fresh = run(notebook(FACTS), page_folder, None)
    assert err is None, err
    assert len(warmkernels.FORKED) == forked + 1
    warm, fresh = json.loads(warm), json.loads(fresh)
    for same in ("cwd", "path", "argv0", "env", "own_group", "helper"):
        assert warm[same] == fresh[same], same
    assert warm["cwd"] == str(page_folder) and warm["env"] == "from the build" and warm["helper"] == 42
    assert warm["nbformat_loaded"] and not fresh["nbformat_loaded"]  # imported once, in the server
    assert warm["own_group"]  # signals to its process group reach it and its children only
    assert warm["parent"] != os.getpid()  # it is the server's child, not a process this one started


# A figure and what matplotlib read when it loaded, the way a page makes and shows one.
FIGURE = """
import json
import matplotlib
import matplotlib.pyplot as plt
plt.plot([1, 3, 2])
print(json.dumps({
    "backend": matplotlib.get_backend(),
    "interactive": matplotlib.is_interactive(),
    "rc": {key: repr(value) for key, value in matplotlib.rcParams.items()},
    "parent": os.getppid(),
}))
from myst_nb import glue
glue("answer", 41 + 1)
"""


def figure_run(folder, server):
    """(what FIGURE printed, the figures it showed as PNG, what it glued) in a kernel started in ``folder``."""
    nb = notebook("import os", FIGURE)
    with kernel_sockets() as sockets:
        client = warmkernels.client_settings(server, sockets.get("config"))
        result = execute_notebook(nb, cwd=str(folder), timeout=60, **client)
    assert result.err is None, result.err
    outputs = nb.cells[1].outputs
    printed = json.loads("".join(o.get("text", "") for o in outputs))
    shown = [o["data"] for o in outputs if o.output_type == "display_data"]
    return (printed, [data["image/png"] for data in shown if "image/png" in data],
            [data for data in shown if "image/png" not in data])


def test_a_forked_kernel_shows_a_figure_and_glues_as_a_fresh_one_does(server, page_folder):
    warm, warm_pngs, warm_glued = figure_run(page_folder, server)
    fresh, fresh_pngs, fresh_glued = figure_run(page_folder, None)
    assert warm["parent"] != os.getpid() and fresh["parent"] == os.getpid()
    assert warm["backend"] == fresh["backend"] == "module://matplotlib_inline.backend_inline"
    assert warm["interactive"] == fresh["interactive"]
    assert warm["rc"] == fresh["rc"]
    assert len(warm_pngs) == 1 and warm_pngs == fresh_pngs  # shown once, at the cell's end, the same picture
    assert len(warm_glued) == 1 and warm_glued == fresh_glued and "42" in json.dumps(warm_glued)


def test_a_kernel_in_a_folder_with_a_matplotlibrc_starts_fresh_and_reads_it(server, page_folder):
    (page_folder / "matplotlibrc").write_text("lines.linewidth: 7\n")
    printed, pngs, _ = figure_run(page_folder, server)
    assert printed["parent"] == os.getpid(), "forked from a server that loaded matplotlib elsewhere"
    assert printed["rc"]["lines.linewidth"] == "7.0" and len(pngs) == 1


def test_each_forked_kernel_draws_its_own_seeds(server, page_folder):
    draws = []
    for _ in range(2):
        err, text = run(notebook(FACTS), page_folder, server)
        assert err is None, err
        draws.append(json.loads(text))
    assert draws[0]["pid"] != draws[1]["pid"]
    assert draws[0]["seed"] != draws[1]["seed"]  # a fresh process draws torch's seed at import
    assert draws[0]["first_draw"] != draws[1]["first_draw"]


def test_a_failing_cell_and_a_timeout_are_reported_and_the_kernel_is_collected(server, page_folder):
    err, _ = run(notebook("print('before')", "1 / 0"), page_folder, server)
    assert err is not None and "ZeroDivisionError" in str(err)
    nb = notebook("import os; print(os.getpid())", "import time; time.sleep(60)")
    err, text = run(nb, page_folder, server, timeout=3)
    assert type(err).__name__ == "CellTimeoutError", err
    pid = int(text)
    deadline = time.monotonic() + 10
    while _exists(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _exists(pid), "the timed-out kernel is still there (or was never collected)"


def _exists(pid: int) -> bool:
    """Whether a process (a zombie included) has this pid."""
    return os.path.exists(f"/proc/{pid}")


@pytest.mark.parametrize(("variable", "fresh"), [("ATEN_CPU_CAPABILITY", True), ("OMP_NUM_THREADS", True),
                                               ("PYTHONHASHSEED", True), ("MPLBACKEND", True),
                                               ("MATPLOTLIBRC", True), ("REC11_TEST_VALUE", False)])
def test_a_kernel_asked_for_with_other_load_time_settings_starts_fresh(server, page_folder, monkeypatch,
                                                                       variable, fresh):
    # torch and matplotlib read their settings from the server's environment when imported there
    monkeypatch.setenv(variable, "3")  # a value no run of the tests sets
    err, text = run(notebook(f"import os; print(os.getppid(), os.environ[{variable!r}])"), page_folder, server)
    assert err is None, err
    parent, value = text.split()
    assert (int(parent) == os.getpid()) is fresh and value == "3"


def test_a_server_that_cannot_start_says_so_and_leaves_fresh_kernels(monkeypatch):
    monkeypatch.setattr(warmkernels, "__name__", "rec11_book.shared.no_such_module")  # what the server runs
    said = []
    with warmkernels.fork_server(log=said.append) as path:
        assert path is None
    assert len(said) == 1 and "did not start (exit code 1;" in said[0] and "fresh kernel" in said[0]


def test_without_a_server_the_kernel_is_a_fresh_one(page_folder, tmp_path):
    gone = str(tmp_path / "no-server-here")
    err, text = run(notebook("import os; print(os.getppid())"), page_folder, gone)
    assert err is None, err
    assert int(text) == os.getpid()  # started by this process, as nbclient starts one


def test_the_server_stops_when_its_block_ends_not_on_ctrl_c_and_a_kernel_left_running_stops_with_it(page_folder):
    import asyncio

    with warmkernels.fork_server() as path:
        assert path is not None
        manager_class = warmkernels.client_settings(path)["kernel_manager_class"]
        manager = manager_class(kernel_name="python3", fork_server=path)
        asyncio.run(manager.start_kernel(cwd=str(page_folder)))
        kernel = manager.provisioner.pid
        assert _exists(kernel) and os.getppid() != kernel
        server_pid = int(_stat(kernel)[1])  # the kernel's parent
        os.kill(server_pid, signal.SIGINT)  # a Ctrl-C at the terminal: the build decides, not the server
        time.sleep(1)
        assert _alive(server_pid) and _alive(kernel)
    deadline = time.monotonic() + 15
    while (_exists(server_pid) or _alive(kernel)) and time.monotonic() < deadline:
        time.sleep(0.2)
    outlived = _alive(kernel)
    if outlived:
        os.kill(kernel, signal.SIGKILL)  # not left behind by a failing run of this test
    assert not _exists(server_pid), "the fork server outlived its block"
    assert not outlived, "a kernel outlived the fork server that forked it"


def _stat(pid: int) -> list[str]:
    """A process's state and then its parent's pid, and the rest of /proc/PID/stat."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _alive(pid: int) -> bool:
    try:
        return _stat(pid)[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(("code", "imports"), [
    ("import torch", True),
    ("import torch.nn as nn", True),
    ("from torch import nn", True),
    ("from torch.nn import functional as F", True),
    ("import numpy, torch", True),
    ("def f():\n    import torch\n    return torch", True),
    ("import numpy", False),
    ("from . import torch", False),  # a module of the page's own folder
    ("import torchvision", False),
    ("import matplotlib.pyplot as plt", True),
    ("from matplotlib import pyplot", True),
    ("from matplotlib.colors import to_rgb", True),
    ("import matplotlib_inline", False),
    ("%timeit import torch", False),  # not Python: IPython's magic, no syntax tree
    ("x = 'import torch'", False),
])
def test_a_page_is_forked_when_its_code_imports_torch_or_matplotlib(code, imports):
    assert warmkernels.imports_preloaded([code]) is imports
