"""Page kernels forked from a process that has already imported torch and matplotlib.

A page's kernel spends about 4 s before the page's first line runs: 0.5 s importing ipykernel,
2.5 to 3.4 s importing torch (2 cores, 2026-12-07, ``python -X importtime``), then 0.6 s
importing ``matplotlib.pyplot`` and, on its first ``glue``, 1 to 2 s importing nbformat. A
cold build runs 22 pages, each of which imports torch or matplotlib (20 import torch), so that
is over a minute of the build's CPU time.

So the build (``rec11_book.commands.preexecute``) starts one fork server (:func:`serve`, in a
process of its own) that imports ipykernel, torch, pyplot and nbformat once, and each page
whose code imports torch or matplotlib gets a kernel forked from it
(:func:`kernel_manager_class`, through nbclient's ``kernel_manager_class``). Everything else
about the run is as before: the same notebook, connection file, working folder and
environment, and jupyter_client drives the kernel as it drives any other (its provisioner,
signals to the kernel's process group, its exit code).

What a fork inherits that a fresh kernel would not have, and what this does about it:

* the random seeds drawn at import (torch draws one per process; numpy's global generator
  draws one if ``numpy.random`` was imported): each kernel draws them again (``_fresh_seeds``);
* matplotlib's settings, read when it is imported: the server imports it with the backend
  ipykernel gives a kernel (``MPLBACKEND``), and a kernel asked for in a folder that holds a
  ``matplotlibrc`` (matplotlib reads one there) starts fresh (``folder_settings``); pyplot's
  backend itself is loaded in the kernel, on its first figure, where it hooks into IPython;
* the working folder, ``sys.argv`` and the environment: each kernel sets them from the
  launch it was asked for (``sys.path`` is as ipykernel's launcher leaves it: without the
  server's folder, and IPython adds the kernel's own, ``''``, as it does for any kernel);
* ipykernel's watch on its parent: a kernel's parent here is the fork server, which leaves
  when the build does, so the kernel stops then too, as a fresh kernel stops with the build;
* Python's string hashing seed, which is the server's: it orders sets of strings, which no
  page's output may depend on anyway (its order changes from run to run as it is).

A kernel asked for with other load-time settings than the server's (``changed_settings``:
torch reads ``ATEN_CPU_CAPABILITY`` or ``OMP_NUM_THREADS`` when it loads, matplotlib
``MPLBACKEND`` or ``HOME``), a kernel of another command,
a machine without ``os.fork`` and ``os.pidfd_open`` (not Linux), or a server that did not
start, gets a fresh kernel, as before. Sphinx-side code: this module
imports neither torch nor ipykernel except inside the server's own process.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rec11_book.compat.ipykernel import KERNEL_MODULE, inline_backend, launch_kernel_app, launcher_path
from rec11_book.compat.jupyter_client import local_provisioner, set_provisioner

PRELOAD = ("torch", "matplotlib.pyplot")  # imported once by the server; a page that imports one is forked
# Imported by the server too, for what the pages' code imports on its own: nbformat, which
# myst-nb's glue (through rec11.glue) imports on its first call, 1 to 2 s, most of it
# jsonschema's format checkers (rfc3987-syntax builds a grammar when it is imported)
ALSO_PRELOADED = ("nbformat",)
FORKED: list[int] = []  # the pid of every kernel forked for this process, for the build's summary
READY_SECONDS = 120  # the server's imports, on a machine busy with other work


def available() -> bool:
    """Whether kernels can be forked here (Linux: ``os.fork`` and ``os.pidfd_open``)."""
    return hasattr(os, "fork") and hasattr(os, "pidfd_open")


def imports_preloaded(cells: list[str]) -> bool:
    """Whether any of these code cells imports a package of :data:`PRELOAD` (or one of its parts)."""
    packages = {name.split(".")[0] for name in PRELOAD}
    for code in cells:
        try:
            tree = ast.parse(code)
        except SyntaxError:  # a cell with IPython's magics: no syntax tree to read
            continue
        for node in ast.walk(tree):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(name.split(".")[0] in packages for name in names):
                return True
    return False


# ---------------------------------------------------------------------------------------------
# The build's side: the server's lifetime, the kernel manager, the provisioner


@contextmanager
def fork_server(log=print, wanted: bool = True) -> Iterator[str | None]:
    """Start a fork server for the duration of the block; yields its socket's path, or None
    where it is not ``wanted`` (fewer than two kernels to fork: no time saved), kernels cannot
    be forked here, or the server did not start (fresh kernels then).

    The server inherits the build's standard output and error, which its kernels then write
    to, as fresh kernels do. It stops when its standard input closes, so a build that dies
    takes it (and, through ipykernel's watch on its parent, its kernels) along.
    """
    if not (wanted and available()):
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="rec11-fork-") as folder:
        path = os.path.join(folder, "server")
        ready_read, ready_write = os.pipe()
        server = subprocess.Popen([sys.executable, "-m", __name__, path, str(ready_write), *PRELOAD, *ALSO_PRELOADED],
                                  stdin=subprocess.PIPE, pass_fds=(ready_write,), cwd=folder)
        os.close(ready_write)
        try:
            if _wait_ready(ready_read, server):
                yield path
            else:
                log(f"rec11: the kernel fork server did not start ({_stopped(server)});"
                    " each page starts a fresh kernel")
                yield None
        finally:
            os.close(ready_read)
            server.stdin.close()  # the server's signal to stop
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _stopped(server: subprocess.Popen) -> str:
    """Why a server that never got ready stopped (it is stopped here if it had not)."""
    try:
        return f"exit code {server.wait(timeout=5)}; its error is in the build's output"
    except subprocess.TimeoutExpired:
        server.kill()
        return f"not ready after {READY_SECONDS} s"


def _wait_ready(ready_read: int, server: subprocess.Popen) -> bool:
    """Whether the server wrote its ready line before it exited or the time ran out."""
    selector = selectors.DefaultSelector()
    selector.register(ready_read, selectors.EVENT_READ)
    deadline = time.monotonic() + READY_SECONDS
    while (left := deadline - time.monotonic()) > 0:
        if selector.select(timeout=min(left, 1.0)):
            selector.close()
            return os.read(ready_read, 64).startswith(b"ready")
        if server.poll() is not None:
            break
    selector.close()
    return False


def client_settings(server: str | None, config=None) -> dict:
    """Keyword arguments for nbclient's ``NotebookClient`` that fork its kernel from ``server``
    (None: nbclient's own kernel manager), with ``config`` (a traitlets ``Config``) kept."""
    from traitlets.config import Config

    config = Config(config or {})
    if server is None:
        return {"config": config} if config else {}
    config.merge(Config({"WarmKernelManager": {"fork_server": server}}))
    return {"kernel_manager_class": kernel_manager_class(), "config": config}


class ForkedKernel:
    """A forked kernel, seen as ``subprocess.Popen`` is by jupyter_client's local provisioner:
    its pid, its exit code once the server has collected it, and signals to it."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, connection: socket.socket):
        self.pid, self._connection, self.returncode = pid, connection, None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._connection.setblocking(False)
            try:
                self._read_exit()
            except BlockingIOError:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._connection.setblocking(True)
            self._connection.settimeout(timeout)
            try:
                self._read_exit()
            except TimeoutError:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout) from None
        return self.returncode

    def _read_exit(self) -> None:
        reply = self._connection.recv(256)
        # the server writes the exit code once the kernel has exited; a server that is gone
        # reports nothing, and its kernel stopped with it
        self.returncode = json.loads(reply)["exit"] if reply else -signal.SIGKILL
        self._connection.close()

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:  # never a signal to a pid the system may have given to another process
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _launch(server: str, cmd: list[str], env: dict, cwd: str | None) -> ForkedKernel | None:
    """Ask the server for a kernel running ``cmd``; None if ``cmd`` is not this Python's
    ipykernel (the caller then starts it as a process of its own)."""
    if cmd[:3] != [sys.executable, "-m", KERNEL_MODULE]:
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(server)
        request = {"argv": cmd[3:], "env": env, "cwd": os.path.abspath(cwd or os.getcwd())}
        connection.sendall(json.dumps(request).encode() + b"\n")
        reply = _read_line(connection)
    except OSError:
        reply = b""
    answer = json.loads(reply) if reply else {}
    if "pid" not in answer:  # the server is gone, or the kernel asks for other settings: a fresh kernel
        connection.close()
        return None
    return ForkedKernel(answer["pid"], connection)


def _read_line(connection: socket.socket) -> bytes:
    """One line from ``connection``, or what came before it closed."""
    line = b""
    while not line.endswith(b"\n") and (part := connection.recv(4096)):
        line += part
    return line


@functools.cache
def _provisioner_class():
    """The local provisioner, with a forked kernel in place of the process it would start."""
    base = local_provisioner()

    class ForkedProvisioner(base):
        async def launch_kernel(self, cmd, **kwargs):
            server = self.parent.fork_server if self.parent is not None else ""
            kernel = _launch(server, cmd, kwargs.get("env") or dict(os.environ), kwargs.get("cwd")) if server else None
            if kernel is None:
                return await super().launch_kernel(cmd, **kwargs)
            self.process, self.pid, self.pgid = kernel, kernel.pid, kernel.pid  # its own session
            FORKED.append(kernel.pid)
            self.cwd = kwargs.get("cwd", os.getcwd())
            return self.connection_info

    return ForkedProvisioner


@functools.cache
def kernel_manager_class():
    from jupyter_client.manager import AsyncKernelManager  # nbclient's default kernel manager
    from traitlets import Unicode

    class WarmKernelManager(AsyncKernelManager):
        """nbclient's kernel manager, whose kernels are forked from ``fork_server``."""

        fork_server = Unicode("", config=True, help="the fork server's socket; empty: fresh kernels")

        async def start_kernel(self, **kw):
            set_provisioner(self, _provisioner_class())
            await super().start_kernel(**kw)

    return WarmKernelManager  # made on first use: importing this module imports no jupyter_client


# ---------------------------------------------------------------------------------------------
# The server's side: a process of its own (python -m rec11_book.shared.warmkernels)


def serve(path: str, ready_fd: int, preload: list[str]) -> dict | None:
    """Import ``preload`` and ipykernel, then fork a kernel for each request on ``path`` until
    standard input closes. Returns None in the server, and the request in each forked kernel."""
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # the server's folder, as ipykernel_launcher removes its working folder
    # a Ctrl-C at the terminal reaches the build, which then closes standard input: the server's
    # signal to stop (its kernels, each in a session of its own, are shut down by the build)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    imported_with = dict(os.environ)
    os.environ["JPY_PARENT_PID"] = str(os.getpid())  # ipykernel reads it on import: the kernels' parent
    # matplotlib reads its backend on import: the one ipykernel sets in a kernel before any cell
    # runs, unless the build's environment names one (then the kernel's names the same)
    os.environ.setdefault("MPLBACKEND", inline_backend())
    for name in preload:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # a book without it: its pages do not import it either
    launch_kernel_app(start=False)  # imports ipykernel's application, starts nothing
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    os.write(ready_fd, b"ready\n")
    os.close(ready_fd)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "request")
    selector.register(sys.stdin, selectors.EVENT_READ, "stop")
    kernels: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the connection that asked for it)
    while True:
        for key, _ in selector.select():
            if key.data == "stop":
                return None
            if key.data == "request":
                connection, _ = listener.accept()
                request = json.loads(_read_line(connection))
                changed = changed_settings(imported_with, request["env"]) + folder_settings(request["cwd"])
                if changed:  # what was imported here read other settings: a fresh kernel instead
                    connection.sendall(json.dumps({"refused": changed}).encode() + b"\n")
                    connection.close()
                    continue
                pid = os.fork()
                if pid == 0:  # the kernel: nothing of the server's stays open
                    selector.close()
                    listener.close()
                    connection.close()
                    for pidfd, (_, other) in kernels.items():
                        os.close(pidfd)
                        other.close()
                    return request
                pidfd = os.pidfd_open(pid)
                kernels[pidfd] = (pid, connection)
                selector.register(pidfd, selectors.EVENT_READ, "exit")
                connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            else:  # a kernel exited: collect it, tell whoever asked for it
                pidfd = key.fd
                pid, connection = kernels.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                try:
                    connection.sendall(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
                except OSError:
                    pass  # the build stopped listening to this kernel
                connection.close()


# Settings read when a process starts or a library loads, which a fork keeps from the server:
# Python's own, the dynamic loader's and the C library's, and those of torch, its CPU kernels
# and thread pools (OpenMP, MKL, oneDNN, OpenBLAS) and numpy. (Not torch's compiler's,
# TORCHINDUCTOR_ and TORCHDYNAMO_: read when something compiles, and torch writes
# TORCHINDUCTOR_CACHE_DIR into the environment of a process that used it.)
LOAD_TIME_SETTINGS = ("PYTHON", "LD_", "MALLOC_", "GLIBC_", "ATEN_", "TORCH_", "PYTORCH_", "OMP_", "KMP_",
                      "GOMP_", "MKL", "DNNL_", "ONEDNN_", "OPENBLAS", "GOTO", "NPY_", "NUMPY_",
                      # matplotlib's: its backend and rc file, and the folders its configuration
                      # and font cache are found in
                      "MPL", "MATPLOTLIB", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
# Files a library reads from the working folder when it loads: matplotlib's settings
FOLDER_SETTINGS = ("matplotlibrc",)


def changed_settings(imported_with: dict, wanted: dict) -> list[str]:
    """The load-time settings (:data:`LOAD_TIME_SETTINGS`) a kernel is asked to start with that
    differ from those the server started with. A forked kernel would keep the server's, so
    such a kernel starts fresh instead."""
    names = {name for name in imported_with.keys() | wanted.keys() if name.startswith(LOAD_TIME_SETTINGS)}
    return sorted(name for name in names if imported_with.get(name) != wanted.get(name))


def folder_settings(folder: str) -> list[str]:
    """The files of :data:`FOLDER_SETTINGS` in ``folder``, a kernel's working folder. The
    server loaded its libraries in a folder of its own, so such a kernel starts fresh."""
    return [name for name in FOLDER_SETTINGS if os.path.exists(os.path.join(folder, name))]


def become_kernel(request: dict) -> None:
    """In the forked child: take the launch's folder, environment and arguments, then run
    ipykernel as ``python -m ipykernel_launcher`` would."""
    os.setsid()  # a process group of its own, as jupyter_client starts a kernel
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for name in ("SIGTERM", "SIGHUP", "SIGCHLD"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(request["cwd"])
    parent = os.getppid()
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ["JPY_PARENT_PID"] = str(parent)
    sys.argv = [launcher_path(), *request["argv"]]
    _fresh_seeds()
    launch_kernel_app(start=True)


def _fresh_seeds() -> None:
    """Draw again the seeds a process draws at import, so that kernels share none."""
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    # Python's random module draws its own again after a fork (os.register_at_fork)


def main(argv: list[str]) -> None:
    path, ready_fd, *preload = argv
    request = serve(path, int(ready_fd), preload)
    if request is not None:
        become_kernel(request)


if __name__ == "__main__":
    main(sys.argv[1:])
