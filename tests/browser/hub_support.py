"""A real JupyterHub on 127.0.0.1 for the browser tests (tests/browser/test_hub.py).

JupyterHub 6.1.1 (PyPI, pinned in requirements.txt) behind configurable-http-proxy
5.3.0 (npm, pinned in package-lock.json, found in ``node_modules/.bin``), with the
dummy authenticator and the simple local-process spawner. Each reader's server is
``jupyterhub-singleuser`` from the book's own environment, so a live cell can
``import rec11`` and load the cached models, as on the course's hub.

The hub is configured the way ``deploy/jupyterhub/README.md`` tells an admin to
configure theirs: CORS for the book's origin on the hub and on the single-user
servers, and ``JUPYTERHUB_ALLOW_TOKEN_IN_URL=1`` in the single-user servers'
environment (the kernel's websocket carries the token in its URL). A test-only service
holds an admin API token: it creates users and their API tokens (what a student does on
the hub's Token page) and stops servers (what the idle culler does).

Test-only knobs, by user name: ``slow…`` waits ``SLOW_SPAWN`` seconds before its
single-user server starts (a busy cluster pulling an image); ``strict…`` gets a server
without ``JUPYTERHUB_ALLOW_TOKEN_IN_URL`` (a hub whose admins did not set it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from browser_support import ROOT

from rec11_tools.previewtime import free_port

SLOW_SPAWN = 12  # s: the slow spawn a test shows progress for
CHP = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"

# The settings an admin makes (deploy/jupyterhub/README.md says the same, for Zero to JupyterHub).
HUB_CONFIG = """\
import os
c = get_config()  # noqa: F821

# --- what deploy/jupyterhub/README.md asks a hub's admins for ----------------------------
# CORS: the book's pages (ORIGIN) call the hub's API with the reader's token ...
c.JupyterHub.tornado_settings = {{"headers": {{"Access-Control-Allow-Origin": {origin!r}}}}}
# ... and the reader's own server (REST calls carry the token in a header) ...
c.Spawner.args = ["--ServerApp.allow_origin=" + {origin!r}]
# ... whose kernel websocket can only carry the token in its URL (?token=): JupyterHub 5+
# honours that on websockets only for requests marked `Sec-Fetch-Mode: websocket`, which
# Chromium does not send, so the single-user servers must allow tokens in URLs.
c.Spawner.environment = {environment!r}

# --- this machine: 127.0.0.1, dummy logins, servers as local processes ---------------------
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.ConfigurableHTTPProxy.pid_file = {folder!r} + "/proxy.pid"
c.JupyterHub.db_url = "sqlite:///" + {folder!r} + "/hub.sqlite"
c.JupyterHub.cookie_secret_file = {folder!r} + "/cookie_secret"
c.JupyterHub.pid_file = {folder!r} + "/hub.pid"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {folder!r} + "/home/{{username}}"
c.Spawner.args.append("--allow-root")  # these sessions run as root
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.poll_interval = 2  # notice a dead server quickly
# the book's environment: its jupyterhub-singleuser, its package (PYTHONPATH), its model cache
c.Spawner.cmd = ["/bin/sh", "-c", 'sleep "${{REC11_SPAWN_DELAY:-0}}"; exec "$0" "$@"', {singleuser!r}]
c.Spawner.env_keep = ["PATH", "PYTHONPATH", "LANG", "LC_ALL"]


def test_users(spawner):
    env = dict(spawner.environment)
    if spawner.user.name.startswith("slow"):  # a busy cluster: the server takes a while to start
        env["REC11_SPAWN_DELAY"] = "{slow}"
    if spawner.user.name.startswith("strict"):  # a hub whose admins did not allow tokens in URLs
        env.pop("JUPYTERHUB_ALLOW_TOKEN_IN_URL", None)
    spawner.environment = env


c.Spawner.pre_spawn_hook = test_users

# a test-only service: creates users and tokens, stops servers (as the idle culler does)
c.JupyterHub.services = [{{"name": "rec11-tests", "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [{{"name": "rec11-tests", "services": ["rec11-tests"],
                             "scopes": ["admin:users", "admin:servers", "tokens", "read:users"]}}]
"""




class Hub:
    """One JupyterHub process (and its proxy), its admin API and its log."""

    def __init__(self, folder: Path, port: int, origin: str, environment: dict | None = None):
        self.folder = folder
        self.url = f"http://127.0.0.1:{port}/"
        self.admin_token = secrets.token_hex(24)
        self.log_path = folder / "hub.log"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "home").mkdir(exist_ok=True)
        cache = Path(os.environ.get("REC11_CACHE_DIR") or ROOT / ".cache" / "models").resolve()
        self.environment = {"JUPYTERHUB_ALLOW_TOKEN_IN_URL": "1", "REC11_CACHE_DIR": str(cache),
                            **(environment or {})}
        self.config = HUB_CONFIG.format(
            origin=origin.rstrip("/"), environment=self.environment, port=port, hub_port=free_port(),
            proxy_api_port=free_port(), chp=str(CHP), folder=str(folder),
            singleuser=str(Path(sys.executable).with_name("jupyterhub-singleuser")),
            slow=SLOW_SPAWN, admin_token=self.admin_token)
        (folder / "jupyterhub_config.py").write_text(self.config)
        self.proc = None

    # --- the process ---------------------------------------------------------------------

    def start(self, timeout: float = 90) -> Hub:
        assert CHP.is_file(), f"{CHP} is missing: run `npm ci` (configurable-http-proxy is in package.json)"
        env = {**os.environ, "PATH": f"{CHP.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("jupyterhub")), "-f", str(self.folder / "jupyterhub_config.py")],
            cwd=self.folder, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.api("GET", "")  # the version: needs no scope
                return self
            except (OSError, urllib.error.HTTPError):
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"JupyterHub did not start; its log:\n{self.log_text()[-4000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()  # the hub stops the proxy and every server it spawned (cleanup_servers)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
        if getattr(self, "log", None):
            self.log.close()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.is_file() else ""

    # --- the hub's REST API, as the test service --------------------------------------------

    def api(self, method: str, path: str, body: dict | None = None, token: str | None = None):
        data = json.dumps(body).encode() if body is not None else (b"" if method in {"POST", "DELETE"} else None)
        request = urllib.request.Request(f"{self.url}hub/api/{path}", data=data, method=method, headers={
            "Authorization": f"token {token or self.admin_token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
        return json.loads(text) if text else None

    def add_user(self, name: str) -> None:
        try:
            self.api("POST", f"users/{name}")
        except urllib.error.HTTPError as err:
            if err.code != 409:  # already there
                raise

    def new_token(self, name: str, expires_in: int | None = None, note: str = "rec11 book") -> str:
        """What a student does on the hub's Token page: a new API token, with the user's permissions."""
        self.add_user(name)
        body = {"note": note}
        if expires_in:
            body["expires_in"] = expires_in
        return self.api("POST", f"users/{name}/tokens", body)["token"]

    def accepts(self, token: str) -> bool:
        """Whether the hub still takes ``token`` (its own user's model answers to it)."""
        try:
            self.api("GET", "user", token=token)
            return True
        except urllib.error.HTTPError as err:
            if err.code in (401, 403):
                return False
            raise

    def user(self, name: str) -> dict:
        return self.api("GET", f"users/{name}")

    def server_url(self, name: str) -> str | None:
        server = self.user(name).get("servers", {}).get("")
        return server["url"] if server and server.get("ready") else None

    def kernels(self, name: str, token: str) -> list[dict]:
        """The kernels running on the user's server (asked with the user's token)."""
        request = urllib.request.Request(f"{self.url}user/{name}/api/kernels",
                                         headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stop_server(self, name: str, timeout: float = 60) -> None:
        """Stop the user's server, as the idle culler does, and wait until it is gone."""
        self.api("DELETE", f"users/{name}/server")
        deadline = time.monotonic() + timeout
        while self.user(name).get("servers", {}).get(""):
            assert time.monotonic() < deadline, f"{name}'s server did not stop"
            time.sleep(0.5)

    def remove_home(self, name: str) -> None:
        shutil.rmtree(self.folder / "home" / name, ignore_errors=True)
