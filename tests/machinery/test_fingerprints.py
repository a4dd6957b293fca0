"""A page's fingerprint (rec11_book.extensions.fingerprints): the package's hash, kept between builds,
is what rec11.sources.code_hash gives for the package as it is now, edits included."""

from __future__ import annotations

import json
import os

from rec11.sources import code_hash
from rec11_book.extensions import fingerprints


def test_the_kept_hash_is_code_hash_and_follows_every_edit(mini_book):
    package = mini_book.path / "src" / "rec11"
    modules = {"rec11.style", "rec11.seeds"}
    first = fingerprints.package_hash(mini_book.path, modules, package)
    assert first == code_hash(modules, package)
    kept = json.loads((mini_book.path / fingerprints.HASHES).read_text())
    assert list(kept["hashes"].values()) == [first]

    # read back, not recomputed: a hash planted for this state of the package is what comes out
    kept["hashes"]["rec11.seeds,rec11.style"] = "planted"
    (mini_book.path / fingerprints.HASHES).write_text(json.dumps(kept))
    assert fingerprints.package_hash(mini_book.path, modules, package) == "planted"

    # an edit to a module the pages reach, even one of the same size at the same second: computed again
    seeds = package / "seeds.py"
    stat = seeds.stat()
    seeds.write_text(seeds.read_text().replace('get("REC11_SEED", "0")', 'get("REC11_SEED", "7")', 1))
    os.utime(seeds, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert seeds.stat().st_size == stat.st_size
    edited = fingerprints.package_hash(mini_book.path, modules, package)
    assert edited == code_hash(modules, package) and edited not in {"planted", first}


def test_a_broken_hash_file_is_computed_again(mini_book):
    package = mini_book.path / "src" / "rec11"
    (mini_book.path / fingerprints.HASHES).parent.mkdir(parents=True, exist_ok=True)
    (mini_book.path / fingerprints.HASHES).write_text("{ not json")
    assert fingerprints.package_hash(mini_book.path, {"rec11.seeds"}, package) == code_hash({"rec11.seeds"}, package)


def test_a_pages_imports_are_parsed_once_per_text(mini_book, monkeypatch):
    from rec11_book.shared import execution

    text = "```{code-cell} ipython3\nfrom rec11 import seeds\n```\n"
    modules = execution.page_modules_kept(mini_book.path, text)
    assert "rec11.seeds" in modules and modules == execution.facts(text).modules
    kept = json.loads((mini_book.path / execution.PAGE_MODULES).read_text())
    assert list(kept["pages"].values()) == [sorted(modules)]

    def parsed(_):
        raise AssertionError("parsed again")

    monkeypatch.setattr(execution, "facts", parsed)
    assert execution.page_modules_kept(mini_book.path, text) == modules, "read from the kept file"
    monkeypatch.undo()
    edited = text.replace("seeds", "claims")
    assert "rec11.claims" in execution.page_modules_kept(mini_book.path, edited), "a new text is parsed"
