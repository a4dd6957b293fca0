"""Page speed as a phone sees it: bytes transferred per page, and Lighthouse's scores.

    python -m rec11_tools.pagespeed [--html _build/html] [--pages book/vae ...] [--no-lighthouse] [--http1]
                                    [--json FILE]

The built site is served from 127.0.0.1 the way GitHub Pages serves it (gzip for text:
``PagesLikeHandler``, which the browser tests use too). Nothing leaves the machine.

* **Weight** (Debian's Chromium through Playwright, a phone-sized viewport, 390 x 844):
  what the page transfers before Live Code, from the Resource Timing entries: ``first
  screen`` is what loads when the page opens; ``whole page`` adds what loads as the
  reader scrolls to the end (lazy figures); ``every dropdown open`` adds the figures
  inside collapsed sections ("Going further", hidden outputs), opened and scrolled
  through. The budget applies to the last, the most a reader can fetch before Live Code.
* **Lighthouse** 12.2.3 (npm, pinned in package-lock.json) with its default mobile
  preset (a Moto G Power-sized screen, simulated slow 4G and a 4x slower CPU):
  performance, accessibility and best-practices scores and the cumulative layout shift.
  The site is served over HTTP/2 with TLS, as GitHub Pages serves it (``serve_h2``;
  ``--http1`` for the HTTP/1.1 server). Lighthouse simulates the network from what it
  sees, and over HTTP/1.1 it models six connections to the site, each request waiting a
  round trip: the page's dozen stylesheets then load in two rounds, which they never do
  on GitHub Pages. The machine is shared and noisy, so a page that misses a score is
  run once more, and the better run counts (``RETRIES``).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import select
import statistics
import subprocess
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

# the one browser the book drives, and how the handout waits for a page to load
from rec11_book.commands.handout import CHROMIUM, CHROMIUM_ARGS, settle, watch_requests

ROOT = Path(__file__).resolve().parents[2]
PHONE = {"width": 390, "height": 844}

# The targets (docs/architecture.md, "Speed, and what a rebuild costs"): whole-page weight,
# and Lighthouse on every page.
MAX_PAGE_BYTES = 400_000
MIN_SCORES = {"performance": 90, "accessibility": 100, "best-practices": 95}
MAX_CLS = 0.05
RETRIES = 1
SETTLE_SECONDS = 90  # a page's load on a machine running two test suites: well under a minute

GZIP_TYPES = (".html", ".js", ".css", ".json", ".svg", ".txt", ".inv", ".xml", ".ttf", ".otf", ".eot")


class PagesLikeHandler(SimpleHTTPRequestHandler):
    """Static files, gzipped when the browser accepts it, as GitHub Pages serves them."""

    cache: ClassVar[dict[Path, bytes]] = {}  # one cache, shared by every request

    def log_message(self, *args):  # quiet
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if (path.suffix in GZIP_TYPES and path.is_file()
                and "gzip" in self.headers.get("Accept-Encoding", "")):
            key = (path, path.stat().st_mtime_ns)
            if key not in self.cache:
                self.cache[key] = gzip.compress(path.read_bytes(), compresslevel=6)
            body = self.cache[key]
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)
        return super().send_head()


@contextlib.contextmanager
def serve(html: Path):
    """Serve ``html`` from 127.0.0.1; yield the base URL (ending in /)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(PagesLikeHandler, directory=str(html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


H2_SERVER = Path(__file__).with_name("node") / "pages-h2.js"


def _self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that Chromium is told to accept (``--ignore-certificate-errors``)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    except FileNotFoundError as err:
        raise FileNotFoundError("serving the site over HTTP/2 needs the openssl command: "
                                "apt-get install openssl") from err
    return cert, key


@contextlib.contextmanager
def serve_h2(html: Path):
    """Serve ``html`` over HTTP/2 with TLS from 127.0.0.1, as GitHub Pages serves it (``node/pages-h2.js``);
    yield the base URL (https://127.0.0.1:PORT/). The certificate is self-signed: Lighthouse's
    Chromium accepts it (``lighthouse_once``), and nothing else should be pointed at it."""
    with tempfile.TemporaryDirectory(prefix="rec11-h2-") as tmp:
        cert, key = _self_signed_certificate(Path(tmp))
        proc = subprocess.Popen(["node", str(H2_SERVER), str(html), str(cert), str(key), ",".join(GZIP_TYPES)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            port = proc.stdout.readline().strip() if ready else ""
            if not port.isdigit():
                why = proc.stderr.read()[-2000:] if proc.poll() is not None else "no port printed within 30 s"
                raise RuntimeError(f"{H2_SERVER} did not start: {why}")
            yield f"https://127.0.0.1:{port}/"
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()


# --- weight ---------------------------------------------------------------------------------

ENTRIES = """() => [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
    .map(e => ({name: e.name, transfer: e.transferSize}))"""
SCROLL = """async () => {
    for (let y = 0; y < document.body.scrollHeight; y += window.innerHeight / 2) {
        window.scrollTo(0, y);
        await new Promise(r => setTimeout(r, 30));
    }
    window.scrollTo(0, document.body.scrollHeight);
}"""


def _off_site_guard(blocked: list[str]):
    def route(r):
        url = r.request.url
        if url.startswith(("http://127.0.0.1", "data:", "blob:")):
            return r.continue_()
        blocked.append(url)
        return r.abort("blockedbyclient")
    return route


def weigh(browser, url: str) -> dict:
    """{first_screen, whole_page, requests, off_site}: bytes transferred by one page on a phone screen.
    Each step waits until every request the page made has its answer (``settle``, the page's
    own ledger: Playwright's "networkidle", once lost to a late request, may not come back)."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True, has_touch=True)
    blocked: list[str] = []
    context.route("**/*", _off_site_guard(blocked))
    try:
        page = context.new_page()
        in_flight, crashed = watch_requests(page)
        page.goto(url, timeout=SETTLE_SECONDS * 1000)
        settle(page, in_flight, crashed, SETTLE_SECONDS, url)
        first = page.evaluate(ENTRIES)
        page.evaluate(SCROLL)
        settle(page, in_flight, crashed, SETTLE_SECONDS, f"{url}, scrolled to its end")
        whole = page.evaluate(ENTRIES)
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        page.evaluate(SCROLL)
        settle(page, in_flight, crashed, SETTLE_SECONDS, f"{url}, every dropdown open")
        everything = page.evaluate(ENTRIES)
    finally:
        context.close()
    return {"first_screen": sum(e["transfer"] for e in first), "whole_page": sum(e["transfer"] for e in whole),
            "every_dropdown_open": sum(e["transfer"] for e in everything),
            "requests": len(whole), "off_site": blocked,
            "files": sorted(((e["transfer"], e["name"]) for e in everything), reverse=True)}


def weights(base: str, pages: list[str]) -> dict[str, dict]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return {page: weigh(browser, f"{base}{page}.html") for page in pages}
        finally:
            browser.close()


# --- Lighthouse -----------------------------------------------------------------------------


def lighthouse_cli(node_modules: Path | None = None) -> Path:
    modules = node_modules or Path(os.environ.get("REC11_NODE_MODULES") or ROOT / "node_modules")
    cli = modules / "lighthouse" / "cli" / "index.js"
    if not cli.is_file():
        raise FileNotFoundError(f"{cli} is missing: run `npm ci` (lighthouse is pinned in package.json)")
    return cli


def lighthouse_once(url: str) -> dict:
    """One Lighthouse run, mobile preset: the three scores (0-100), CLS, the timings, and the
    host's ``benchmark_index`` (Lighthouse's measure of this machine's CPU). The preset slows the
    host's CPU 4x whatever its speed, so performance scores compare only between hosts whose
    indices are alike: the index goes beside every score."""
    with tempfile.TemporaryDirectory(prefix="rec11-lh-") as tmp:
        report = Path(tmp) / "report.json"
        # serve_h2's certificate is self-signed, for 127.0.0.1 only
        own_certificate = ["--ignore-certificate-errors"] if url.startswith("https://127.0.0.1:") else []
        flags = " ".join(["--headless=new", *CHROMIUM_ARGS, *own_certificate])
        cmd = ["node", str(lighthouse_cli()), url, "--quiet", "--output=json", f"--output-path={report}",
               "--only-categories=performance,accessibility,best-practices", f"--chrome-flags={flags}",
               "--max-wait-for-load=60000"]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "CHROME_PATH": CHROMIUM, "TMPDIR": tmp})
        if proc.returncode != 0 or not report.is_file():
            raise RuntimeError(f"lighthouse failed on {url}:\n{proc.stderr[-2000:]}")
        data = json.loads(report.read_text())
    cats = data["categories"]
    audits = data["audits"]
    failing = sorted(a["id"] for a in audits.values()
                     if a.get("scoreDisplayMode") == "binary" and a.get("score") == 0)
    return {
        "performance": round(100 * (cats["performance"]["score"] or 0)),
        "accessibility": round(100 * (cats["accessibility"]["score"] or 0)),
        "best-practices": round(100 * (cats["best-practices"]["score"] or 0)),
        "cls": float(audits["cumulative-layout-shift"]["numericValue"]),
        "lcp_s": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "fcp_s": audits["first-contentful-paint"]["numericValue"] / 1000,
        "tbt_ms": audits["total-blocking-time"]["numericValue"],
        "failing_audits": failing,
        "runtime_error": (data.get("runtimeError") or {}).get("code"),
        "benchmark_index": round(data["environment"]["benchmarkIndex"]),
    }


def meets(scores: dict) -> bool:
    return all(scores[k] >= v for k, v in MIN_SCORES.items()) and scores["cls"] <= MAX_CLS


def lighthouse(url: str, retries: int = RETRIES) -> dict:
    """Lighthouse on ``url``; run again (up to ``retries`` times) if a score misses, keep the best."""
    runs = [lighthouse_once(url)]
    while not meets(runs[-1]) and len(runs) <= retries:
        runs.append(lighthouse_once(url))
    best = max(runs, key=lambda r: (meets(r), r["performance"] + r["accessibility"] + r["best-practices"]))
    return {**best, "runs": len(runs)}


# --- the report -----------------------------------------------------------------------------


def measure(html: Path, pages: list[str], with_lighthouse: bool = True, http2: bool = True) -> dict:
    """Each page's weight, and (``with_lighthouse``) its Lighthouse scores, served over HTTP/2 as
    GitHub Pages serves the site, or over HTTP/1.1 (``http2=False``)."""
    with serve(html) as base:
        found = weights(base, pages)
    if with_lighthouse:
        with serve_h2(html) if http2 else serve(html) as base:
            for page in pages:
                scores = lighthouse(f"{base}{page}.html")
                found[page]["lighthouse"] = {**scores, "protocol": "h2" if http2 else "http/1.1"}
    return found


def summary(found: dict) -> dict:
    whole = {page: row["every_dropdown_open"] for page, row in found.items()}
    heaviest = max(whole, key=whole.get)
    return {"heaviest": heaviest, "heaviest_bytes": whole[heaviest], "median_bytes": statistics.median(whole.values())}


def table(found: dict) -> list[str]:
    lines = ["| page | first screen (kB) | whole page (kB) | every dropdown open (kB) | requests | performance | "
             "accessibility | best practices | CLS | LCP (s) | host CPU index |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for page, row in found.items():
        lh = row.get("lighthouse")
        scores = (f"{lh['performance']} | {lh['accessibility']} | {lh['best-practices']} | {lh['cls']:.3f} | "
                  f"{lh['lcp_s']:.1f} | {lh['benchmark_index']}") if lh else "– | – | – | – | – | –"
        lines.append(f"| {page} | {row['first_screen'] / 1000:.0f} | {row['whole_page'] / 1000:.0f} | "
                     f"{row['every_dropdown_open'] / 1000:.0f} | {row['requests']} | {scores} |")
    return lines


def main(argv=None) -> int:
    from rec11.chapter import toc_pages

    parser = argparse.ArgumentParser(description="Page weight and Lighthouse scores of the built site.")
    parser.add_argument("--book", type=Path, default=Path("."))
    parser.add_argument("--html", type=Path, default=None, help="the built site (default: BOOK/_build/html)")
    parser.add_argument("--pages", nargs="*", default=None, help="docnames (default: every toc page)")
    parser.add_argument("--no-lighthouse", action="store_true")
    parser.add_argument("--http1", action="store_true",
                        help="run Lighthouse over HTTP/1.1 (default: HTTP/2 with TLS, as GitHub Pages serves the site)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    html = args.html or args.book / "_build" / "html"
    pages = args.pages or [p for p in toc_pages(args.book) if (html / f"{p}.html").is_file()]
    found = measure(html, pages, not args.no_lighthouse, http2=not args.http1)
    print("\n".join(table(found)))
    s = summary(found)
    print(f"\nheaviest: {s['heaviest']} {s['heaviest_bytes'] / 1e6:.3f} MB; median {s['median_bytes'] / 1e6:.3f} MB")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
