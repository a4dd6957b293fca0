"""How long ``make preview`` takes from saving a prose edit to the new page on disk.

    python -m rec11_tools.previewtime [--book DIR] [--runs 3] [--page book/vae.md]

Starts the preview server on a free port (``python -m rec11_book.commands.preview``), waits for
its first build, then, ``runs`` times: saves a one-word prose edit to a page, and times
from the save to the moment the page's HTML on disk carries the new word; then puts the
sentence back and waits until that rebuild has finished, so that each save is timed from an
idle preview. The book folder is left as it was.
Used by ``make bench`` (in its clone); reported, not asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

PAGE = "book/attention.md"
SENTENCE = ("Everything else in this session depends", "Everything {word} else in this session depends")


def free_port() -> int:
    """A port on 127.0.0.1 that is free now and that the system will not hand out meanwhile.

    Binding port 0 and letting go returns a port from the ephemeral range, which the system
    hands to the next socket that binds port 0 and uses as the source port of outgoing
    connections; a server started minutes later (the tests' jupyter server starts after the
    book is built) can then find it taken. A port below that range is never handed out, so
    only another caller of this function can take it: it is drawn at random, and checked.
    """
    low = _ephemeral_low()
    for port in random.sample(range(PORTS_FROM, low), min(64, low - PORTS_FROM)):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # in use: try another
                continue
            return port
    with socket.socket() as s:  # nothing free below the range: any port the system gives
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORTS_FROM = 20000  # well above the ports common services listen on


def _ephemeral_low() -> int:
    """The first port of the system's ephemeral range (Linux; 32768 where it cannot be read)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return max(low, PORTS_FROM + 1)


def wait_for(predicate, timeout: float, poll: float = 0.01) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError
        time.sleep(poll)
    return time.perf_counter() - start


def idle(book: Path) -> bool:
    """Whether every build the preview started has finished, by its log: a "rebuilt in" line
    for the first build and for each save's ("changed ...")."""
    text = (book / "_build" / "preview-bench.log").read_text(errors="ignore")
    return text.count("preview: rebuilt in") >= 1 + text.count("preview: changed ")


def first_sentence(text: str) -> tuple[str, str]:
    """(the first line of prose on a page, the same line with ``{word}`` after its first
    word): outside the front matter, code cells and directives, not a heading or a list."""
    fence = None
    lines = text.splitlines()
    start = lines.index("---", 1) + 1 if lines and lines[0] == "---" else 0
    for line in lines[start:]:
        stripped = line.strip()
        marker = stripped[:3] if stripped[:3] in ("```", ":::") else None
        if fence:
            fence = None if stripped.startswith(fence) and not stripped.rstrip("`:").strip() else fence
            continue
        if marker:
            fence = stripped[:len(stripped) - len(stripped.lstrip(marker[0]))]
            continue
        if line[:1].isupper() and " " in line:
            first, rest = line.split(" ", 1)
            return line, f"{first} {{word}} {rest}"
    raise ValueError("no line of prose found outside the front matter, code cells and directives")


def measure(book: Path, runs: int = 3, command: list[str] | None = None, env: dict | None = None,
            page: str = PAGE) -> list[float]:
    """Seconds from each save to the new HTML on disk (``page``: the page edited; by default
    ``PAGE``, at ``SENTENCE``, else at its first line of prose)."""
    source = book / page
    html = book / "_build" / "html" / page.replace(".md", ".html")
    original = source.read_text()
    sentence = SENTENCE if page == PAGE else first_sentence(original)
    assert sentence[0] in original, f"{source}: the benchmark's sentence is gone; update previewtime.SENTENCE"
    port = free_port()
    cmd = command or [sys.executable, "-m", "rec11_book.commands.preview", "--book", str(book), "--port", str(port)]
    log = (open(book / "_build" / "preview-bench.log", "w")  # noqa: SIM115  (the server writes it until the finally)
           if (book / "_build").is_dir() else subprocess.DEVNULL)
    # a session of its own, so that the end stops the rebuild children it forked too: one left
    # running wrote into the next measurement's log and made it look idle a build too early
    proc = subprocess.Popen(cmd, cwd=book, stdout=log, stderr=subprocess.STDOUT, env=env or os.environ.copy(),
                            start_new_session=True)
    times = []
    try:
        import urllib.request

        def up():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/{page.replace('.md', '.html')}", timeout=1):
                    return True
            except OSError:
                return False

        wait_for(up, timeout=300, poll=0.2)
        time.sleep(1.0)  # let the watcher settle
        for run in range(runs):
            word = f"previewrun{run}"
            source.write_text(original.replace(sentence[0], sentence[1].replace("{word}", word), 1))
            saved = time.perf_counter()
            # wait_for calls its lambda before the loop moves on, so word is this run's
            wait_for(lambda: html.is_file() and word in html.read_text(errors="ignore"), timeout=120)  # noqa: B023
            times.append(time.perf_counter() - saved)
            source.write_text(original)
            wait_for(lambda: word not in html.read_text(errors="ignore"), timeout=120)  # noqa: B023
            # the next save is timed from an idle preview: the undo's build goes on after its page
            # is written (the deck, the downloads), and a save made meanwhile would wait for it
            if log is subprocess.DEVNULL:
                time.sleep(3.0)
            else:
                wait_for(lambda: idle(book), timeout=120)
                time.sleep(0.3)  # the server's own bookkeeping after the build
    finally:
        if source.read_text() != original:
            source.write_text(original)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:  # the server and its children are gone already
            pass
        if log is not subprocess.DEVNULL:
            log.close()
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=Path("."))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--page", default=PAGE, help=f"the page to edit (default {PAGE})")
    args = parser.parse_args(argv)
    times = measure(args.book.resolve(), args.runs, page=args.page)
    print(f"preview: {args.page}, save to new HTML on disk: {', '.join(f'{t:.2f}' for t in times)} s; "
          f"median {statistics.median(times):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
