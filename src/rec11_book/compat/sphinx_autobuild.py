"""What the preview relies on in sphinx-autobuild (pinned 2025.8.25): its server, file watcher
and reload script, used as a library (sphinx-autobuild documents only its command line)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rec11_book.compat import lacks_attributes, lacks_text, reliance


def _probe() -> list[str]:
    import inspect

    missing = lacks_attributes("sphinx_autobuild.server.RebuildServer", "sphinx_autobuild.filter.IgnoreFilter",
                               "sphinx_autobuild.middleware.JavascriptInjectorMiddleware")
    if missing:
        return missing
    from sphinx_autobuild.middleware import JavascriptInjectorMiddleware
    from sphinx_autobuild.server import RebuildServer

    source = inspect.getsource(RebuildServer)
    missing = [] if inspect.iscoroutinefunction(getattr(RebuildServer, "watch", None)) else ["async watch()"]
    missing += [n for n in ("self.paths", "self.ignore", "self.change_callback", "self.flag", "def lifespan",
                            'send_text("refresh")') if n not in source]
    missing += lacks_text("sphinx_autobuild", "/websocket-reload")
    if "ws_url" not in inspect.signature(JavascriptInjectorMiddleware).parameters:
        missing.append("JavascriptInjectorMiddleware(app, ws_url=)")
    return missing


@reliance(probe=_probe)
def reloading_site(html: Path, watch: list[Path], ignore_paths: list[str], ignore_regexes: list[str],
                   rebuild: Callable, pages_of: Callable[[list[Path]], list[Path]], url_host: str):
    """An ASGI app that serves ``html``, watches ``watch`` (less what the ignores match), calls
    ``rebuild(changed_paths=...)`` in a thread on each change, and reloads the open tab as soon
    as every page in ``pages_of(changed paths)`` has been written again (the rest of the build,
    the deck and the downloads, finishes behind it), else when the rebuild ends.

    Relies on: sphinx-autobuild's ``RebuildServer(paths, ignore_filter, change_callback)``,
    whose coroutine ``watch()`` (replaced here: the stock one forks a pool per save) watches
    ``self.paths`` through ``self.ignore`` and sets ``self.flag`` to reload the tab, with its
    ``lifespan``; ``IgnoreFilter(paths, regexes)``; and ``JavascriptInjectorMiddleware(app,
    ws_url=)``, which injects the reload script that connects to ``/websocket-reload``.
    Package: sphinx-autobuild. Checked against: 2025.8.25.
    Public alternative: the ``sphinx-autobuild`` command, which starts a new build process on
    every save (seconds of imports; the preview's forked rebuilds start warm).
    """
    import asyncio

    import watchfiles
    from sphinx_autobuild.filter import IgnoreFilter
    from sphinx_autobuild.middleware import JavascriptInjectorMiddleware
    from sphinx_autobuild.server import RebuildServer
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Mount, WebSocketRoute
    from starlette.staticfiles import StaticFiles

    class Watcher(RebuildServer):
        """Rebuild in the caller's forked child (the stock one forks a pool per save)."""

        async def watch(self):
            async for changes in watchfiles.awatch(*self.paths, watch_filter=lambda _, p: not self.ignore(p)):
                paths = [Path(p).resolve() for _, p in changes]
                pages = pages_of(paths)
                before = {page: page.stat().st_mtime_ns if page.exists() else 0 for page in pages}
                build = asyncio.ensure_future(asyncio.to_thread(self.change_callback, changed_paths=paths))
                reloaded = False
                while not build.done():
                    await asyncio.sleep(0.05)
                    if pages and not reloaded and all(
                            page.exists() and page.stat().st_mtime_ns != before[page] for page in pages):
                        self.flag.set()
                        reloaded = True
                await build
                if not reloaded:
                    self.flag.set()

    watcher = Watcher(watch, IgnoreFilter(ignore_paths, ignore_regexes), change_callback=rebuild)
    return Starlette(
        routes=[WebSocketRoute("/websocket-reload", watcher, name="reload"),
                Mount("/", app=StaticFiles(directory=html, html=True), name="static")],
        middleware=[Middleware(JavascriptInjectorMiddleware, ws_url=url_host)],
        lifespan=watcher.lifespan,
    )
