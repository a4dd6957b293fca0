"""`make build` stops at once when everything is as the last passing build left it
(rec11_book.commands.build.build_state): what counts as a change, and what does not."""

import json
import os

from rec11_book.commands import build


def a_book(tmp_path):
    book = tmp_path / "book-folder"
    for name, text in {"_config.yml": "title: t\n", "_toc.yml": "root: book/home\n", "book/home.md": "# Home\n",
                       "src/rec11/__init__.py": "", "_build/html/index.html": "<p>Home</p>",
                       "figures/attention.svg": "<svg/>"}.items():
        (book / name).parent.mkdir(parents=True, exist_ok=True)
        (book / name).write_text(text)
    return book


def full_state(book, environ=None):
    return build.build_state(book, book, book / "figures", environ if environ is not None else {})


def state(book, environ=None):
    return full_state(book, environ).whole


def later(path, text):
    """Write ``text`` with a modification time clearly after the file's last one."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_every_input_and_output_counts_and_nothing_else(tmp_path):
    book = a_book(tmp_path)
    first = state(book)
    assert state(book) == first, "nothing changed"

    (book / "src/rec11/__pycache__").mkdir()
    (book / "src/rec11/__pycache__/x.pyc").write_bytes(b"\0")  # Python's bytecode is not an input
    (book / ".cache/robustness").mkdir(parents=True)
    (book / ".cache/robustness/run.log").write_text("a retraining's log")
    assert state(book, {"REC11_TRAINING_LOG": "/tmp/x", "HOME": "/elsewhere"}) == first

    changes = {
        "a page edited": lambda: later(book / "book/home.md", "# Home, edited\n"),
        "the package edited": lambda: later(book / "src/rec11/__init__.py", "X = 1\n"),
        "a setting": lambda: later(book / "_config.yml", "title: u\n"),
        "a page of the site overwritten": lambda: later(book / "_build/html/index.html", "<p>Other</p>"),
        "a figure deleted": lambda: (book / "figures/attention.svg").unlink(),
        "a model cache file added": lambda: later(book / ".cache/models/gpt.pt", "weights"),
    }
    seen = {first}
    for what, change in changes.items():
        change()
        now = state(book)
        assert now not in seen, f"{what}: not seen as a change"
        seen.add(now)
    assert state(book, {"REC11_SEED": "7"}) not in seen, "another seed is another build"


def test_only_a_build_that_passed_is_a_reason_to_stop(tmp_path, capsys):
    book = a_book(tmp_path)
    record = book / "_build" / ".doctrees" / build.LAST_PASSED
    assert not build.unchanged(book, full_state(book)), "no build has passed yet"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"state": state(book, {"REC11_SEED": "7"})}))
    assert not build.unchanged(book, full_state(book)), "the last build passed from another state"
    record.write_text(json.dumps({"state": state(book)}))
    assert build.unchanged(book, full_state(book))
    # the command itself: with the record written from the environment it runs in, it stops before
    # it trains or runs anything, and says so (a book of one page with no package runs nothing else)
    environ = {k: v for k, v in os.environ.items() if k.startswith("REC11_") or k == "GITHUB_SHA"}
    record.write_text(json.dumps({"state": state(book, environ)}))
    assert build.main(["--book", str(book)]) == 0
    assert "nothing changed since the last build passed" in capsys.readouterr().out
