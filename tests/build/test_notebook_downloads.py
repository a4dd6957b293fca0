"""The notebooks a reader downloads keep the build's outputs, read as the pages do (plain
Markdown, no instructor notes), and run top to bottom: in a fresh kernel beside the book,
and in a fresh virtual environment through their install cell.

These read the whole book's build, the one the build tests share. That a download keeps
its outputs when its page comes from the jupyter cache (a build in a new folder, a
rebuild that reads one page) is shown on a small book: test_incremental.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from rec11_book.notebooks import (FINGERPRINT, GLUE_RECORD, GLUE_ROLE, QUIET_TRAINING, TORCH_INDEX,
                                  executed_notebooks, without_self_checks)

# one worker of make test's two makes the fresh venv once
pytestmark = [pytest.mark.build, pytest.mark.xdist_group("downloads")]


@pytest.fixture(scope="module")
def build_dir(built_book) -> Path:
    """The whole book's ``_build`` folder."""
    return built_book["out"] / "_build"


def downloads(build: Path) -> dict[Path, Path]:
    """{page path in the book (.md): its .ipynb download} for every executed page."""
    sources = build / "html" / "_sources"
    return {rel: (sources / rel).with_suffix(".ipynb") for rel, _ in executed_notebooks(build)}


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def page_cells(nb):
    """A download's code cells without its first one, the install cell, and its raw cells
    (a worked answer's code, kept to read but not run), in the page's order."""
    assert "find_spec(\"rec11\")" in code_cells(nb)[0].source, "the first cell does not install rec11"
    cells = [c for c in nb.cells if c.cell_type in ("code", "raw")]
    return cells[1:]


def expected_cells(rendered) -> list[tuple[str, object]]:
    """(source, the page's cell or None) of what a download keeps of a page's code cells: a
    removed cell without the page's own checks (and not at all if nothing else is left)."""
    kept = []
    for cell in code_cells(rendered):
        if cell.source.startswith(FINGERPRINT):
            continue
        if "remove-cell" in cell.metadata.get("tags", []):
            source = without_self_checks(cell.source)
            if source.strip():
                kept.append((source, None))
        else:
            kept.append((cell.source, cell))
    return kept


def test_each_download_has_the_outputs_the_page_rendered(build_dir):
    rendered = dict(executed_notebooks(build_dir))
    assert rendered, "no executed pages"
    for rel, path in downloads(build_dir).items():
        assert path.is_file(), f"{rel}: the page offers no notebook download"
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        expected = expected_cells(rendered[rel])
        assert [c.source for c in page_cells(nb)] == [source for source, _ in expected], rel
        for cell, (_, page_cell) in zip(page_cells(nb), expected):
            if page_cell is None or cell.cell_type == "raw":  # no outputs to keep
                continue
            shown = [o for o in page_cell.outputs if not any(k.startswith(GLUE_RECORD) for k in o.get("data", {}))]
            assert len(cell.outputs) == len(shown), f"{rel}: outputs lost in the cell {cell.source[:60]!r}"
        assert any(c.outputs for c in code_cells(nb)), f"{rel}: the download has no outputs"


def test_downloads_carry_nothing_of_the_build(build_dir):
    for rel, path in downloads(build_dir).items():
        nb = nbformat.read(path, as_version=4)
        assert not any(c.source.startswith(FINGERPRINT) for c in nb.cells), f"{rel}: fingerprint cell"
        assert "source_map" not in nb.metadata, rel
        for cell in code_cells(nb):
            for output in cell.outputs:
                kinds = set(output.get("data", {}))
                assert not any(k.startswith(GLUE_RECORD) for k in kinds), f"{rel}: a glue record"
                assert not {"image/png", "image/svg+xml"} <= kinds, f"{rel}: a figure in two formats"
        text = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert not GLUE_ROLE.search(text), f"{rel}: an unfilled glue role {GLUE_ROLE.search(text)[0]}"
        assert "{{" not in text, f"{rel}: an unfilled course fact"


# MyST markup a notebook tool shows as literal text.
MARKUP = {
    "a colon fence": re.compile(r"^:{3,}", re.M),
    "a directive": re.compile(r"^`{3,}\{", re.M),
    "a role": re.compile(r"\{[a-z][\w:-]*\}`"),
    "a label": re.compile(r"^\([\w-]+\)=\s*$", re.M),
    "a link to a label or a .md page": re.compile(r"\]\((?!https?:)[^)]*(\.md\b|^sec-)|\]\(sec-"),
    "a comment": re.compile(r"^%", re.M),
}
NOTE = re.compile(r"^(:{3,})\{instructor-note\}[^\n]*\n(?:^:[\w-]+:[^\n]*\n)*\n?(.*?)^\1[ \t]*$", re.M | re.S)


def test_downloads_read_as_the_pages_do_with_no_markup_and_no_instructor_notes(build_dir, root):
    notes = []
    for page in sorted((root / "book").rglob("*.md")):
        notes += [body.strip().split("\n\n")[0].strip() for _, body in NOTE.findall(page.read_text())]
    assert len(notes) >= 10 and all(len(note) > 40 for note in notes), f"the test misread the notes: {notes}"
    for rel, path in downloads(build_dir).items():
        nb = nbformat.read(path, as_version=4)
        text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        for what, pattern in MARKUP.items():
            found = pattern.search(text)
            assert not found, f"{rel}: {what} in the download: {text[max(0, found.start() - 60):found.end() + 60]!r}"
        for note in notes:
            assert note[:80] not in text, f"{rel}: an instructor note in a student's notebook: {note[:80]!r}"
        assert "instructor-note" not in text, rel
    # The .md download of every page, with code or without, is plain Markdown too.
    for path in sorted((build_dir / "html" / "_sources").rglob("*.md")):
        text = path.read_text()
        for what, pattern in MARKUP.items():
            found = pattern.search(text)
            assert not found, f"{path.name}: {what} in the .md download: {text[max(0, found.start() - 60):found.end() + 60]!r}"
        assert not any(note[:80] in text for note in notes), f"{path.name}: an instructor note in the .md download"


def test_the_install_cell_names_the_commit_the_site_was_built_from(build_dir, root):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    for rel, path in downloads(build_dir).items():
        install = code_cells(nbformat.read(path, as_version=4))[0].source
        assert f"@{head}#subdirectory=src\"" in install, f"{rel}: the install cell does not pin rec11 at {head}"
        assert TORCH_INDEX in install, rel


# What a student who has fixed Exercise 2's starter has in its cell: their own attention.
STUDENTS_ATTENTION = """\
import math

def attention(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(K.size(-1))
    scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V

attention.written_by = "the student"
"""


def as_a_student_left_it(nb) -> None:
    """Exercises: Exercise 2's starter replaced by a right answer of the student's own, and a
    last cell that checks it again, after every cell below it has run."""
    starter = next(c for c in code_cells(nb) if c.source.startswith("def attention(Q, K, V, mask):"))
    starter.source = STUDENTS_ATTENTION
    nb.cells.append(nbformat.v4.new_code_cell('print(getattr(attention, "written_by", "not the student"))\n'
                                              "check.attention(attention)"))


# A page that trains a model: the student's venv is filled by its install cell.
TRAINED_PAGE = Path("book/diffusion.md")
# What a student's environment must not hold: the book's build, its tools, and what they need.
BUILD_ONLY = ("rec11_book", "rec11_tools", "sphinx", "myst_nb", "jupyter_book")


def outputs_text(nb) -> str:
    return "".join(o.get("text", "") for c in code_cells(nb) for o in c.outputs if o.output_type == "stream")


def run_in(nb, kernel: str, folder: Path, timeout: int = 900):
    """``nb`` run top to bottom ("Run All") in a new kernel of ``kernel``, from ``folder``;
    fails on an error in any cell not tagged raises-exception. Returns the run notebook."""
    ran = nbformat.from_dict(json.loads(json.dumps(nb)))
    NotebookClient(ran, timeout=timeout, kernel_name=kernel, resources={"metadata": {"path": str(folder)}}).execute()
    errors = [o for c in code_cells(ran) if "raises-exception" not in c.metadata.get("tags", [])
              for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{nb.metadata.get('rec11_page', folder)}: {errors[0].ename}: {errors[0].evalue}"
    return ran


@pytest.fixture(scope="module")
def student_venv(build_dir, tmp_path_factory, root):
    """A virtual environment as a notebook tool gives it (Python 3.11 and a kernel, nothing of
    the book), filled by a download's install cell, as a student's first "Run All" fills it.

    No network here: the install cell's two downloads, rec11 from GitHub and torch from
    PyTorch's index, come from this checkout's git repository (the same commit and
    ``#subdirectory=src``, the course package's project) and the machine's own index.
    Returns the folder, the python, the reader's home and the first run's printed text.
    """
    where = tmp_path_factory.mktemp("student")
    venv, python = where / "venv", where / "venv" / "bin" / "python"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], check=True)
    kernel = re.search(r"^ipykernel==\S+", (root / "requirements.txt").read_text(), re.M)[0]
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", kernel], check=True)
    subprocess.run([str(python), "-m", "ipykernel", "install", "--prefix", str(where / "jupyter"),
                    "--name", "student"], check=True, capture_output=True)
    nb = nbformat.read(downloads(build_dir)[TRAINED_PAGE], as_version=4)
    install = nb.cells[0]
    github = re.search(r'"rec11 @ git\+(https://github\.com/[^"@]+)@[0-9a-f]+#subdirectory=src"', install.source)
    assert github and f'"--extra-index-url", "{TORCH_INDEX}",' in install.source, install.source
    # the same line, with this checkout's repository for GitHub's: pip clones it at the commit
    # (file://localhost/..., since pip before 23.3 rejects a git+file:/// URL with no host)
    install.source = (install.source.replace(github[1], f"file://localhost{root.as_posix()}")
                      .replace(f'"--extra-index-url", "{TORCH_INDEX}",', ""))
    home, folder = where / "home", where / "notebook"
    folder.mkdir()
    home.mkdir()
    # The reader's home is empty, so git would refuse to clone a checkout another user owns
    # ("detected dubious ownership", as on a CI machine whose clone is not the test's user's):
    # GitHub, which this repository stands in for, has no owner to check.
    (home / ".gitconfig").write_text("[safe]\n\tdirectory = *\n")
    pip_log = where / "pip.log"  # the install cell's pip prints to the kernel, not the notebook
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))  # an empty model cache: ~/.cache/rec11
        env.setenv("JUPYTER_PATH", str(where / "jupyter" / "share" / "jupyter"))
        env.setenv("PIP_LOG", str(pip_log))
        for name in ("REC11_CACHE_DIR", "REC11_QUIET_TRAINING", "PYTHONPATH", "VIRTUAL_ENV", "GIT_DIR"):
            env.delenv(name, raising=False)
        try:
            first = outputs_text(run_in(nb, "student", folder))
        except CellExecutionError as error:
            log = pip_log.read_text(errors="replace") if pip_log.exists() else "(pip wrote no log)"
            raise AssertionError(f"{TRAINED_PAGE}'s download did not run in a fresh venv: {error.ename}; "
                                 f"the end of pip's log:\n{log[-4000:]}") from error
    return {"where": where, "python": python, "home": home, "folder": folder, "nb": nb, "first": first}


def test_a_trained_page_runs_in_a_fresh_venv_through_its_install_cell(student_venv, monkeypatch):
    first = student_venv["first"]
    assert "Installing rec11" in first, first[:2000]
    assert re.search(r"Training \S+ on this computer's CPU", first) and re.search(r"Trained \S+ in \d+ s", first), \
        f"{TRAINED_PAGE}: no cell said that it trains a model: {first[:2000]!r}"
    where = subprocess.run([str(student_venv["python"]), "-c", "import rec11; print(rec11.__file__)"],
                           capture_output=True, text=True, check=True).stdout
    assert str(student_venv["where"] / "venv") in where, f"rec11 was not installed into the fresh venv: {where}"
    home = student_venv["home"]
    assert list((home / ".cache" / "rec11").glob("*.pt")), "no model in the reader's cache"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JUPYTER_PATH", str(student_venv["where"] / "jupyter" / "share" / "jupyter"))
    for name in ("REC11_CACHE_DIR", "REC11_QUIET_TRAINING", "PYTHONPATH", "VIRTUAL_ENV"):
        monkeypatch.delenv(name, raising=False)
    second = outputs_text(run_in(student_venv["nb"], "student", student_venv["folder"]))
    assert "Installing" not in second and "Training" not in second, second[:2000]


def test_the_install_cell_installs_the_course_package_alone(student_venv):
    """What a student's install holds: rec11, never the book's build or tools."""
    found = subprocess.run(
        [str(student_venv["python"]), "-c",
         "import importlib.util as u; print(' '.join(n for n in %r if u.find_spec(n)))" % (BUILD_ONLY,)],
        capture_output=True, text=True, check=True).stdout.split()
    assert not found, f"a student's install of rec11 holds {found}: they belong to the book's build"


def test_downloads_run_top_to_bottom_in_a_student_venv(build_dir, built_book, student_venv, root, monkeypatch):
    """Every download, as a student runs it: "Run All", in a fresh kernel of an environment
    holding rec11 and nothing of the book's build. The exercises' one with a starter fixed
    first: nothing hidden stops the run or replaces their code."""
    monkeypatch.setenv("REC11_SEED", str(built_book["seed"]))  # the build's models, not new ones
    monkeypatch.setenv("JUPYTER_PATH", str(student_venv["where"] / "jupyter" / "share" / "jupyter"))
    for name in (QUIET_TRAINING, "REC11_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV"):
        monkeypatch.delenv(name, raising=False)  # a model trained here says so
    for rel, path in downloads(build_dir).items():
        nb = nbformat.read(path, as_version=4)
        nb.metadata["rec11_page"] = str(rel)
        edited = rel == Path("book/exercises.md")
        if edited:
            as_a_student_left_it(nb)
        # From the page's own folder, as the page ran, with the models from the book's cache.
        ran = run_in(nb, "student", (root / rel).parent, timeout=600)
        assert "Installing" not in outputs_text(ran), f"{rel}: the install cell installed again"
        trained = [o.text for c in code_cells(ran) for o in c.outputs
                   if o.output_type == "stream" and "on this computer's CPU, once" in o.text]
        assert not trained, f"{rel}: retrained a model the build had trained (a cache key differs?): {trained[0]}"
        if edited:
            last = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                           for o in ran.cells[-1].outputs)
            assert "the student" in last and "Right" in last, \
                f"{rel}: after Run All the student's attention was replaced or not right: {last[:300]}"


def test_each_page_with_a_download_opens_it_in_colab(build_dir, root):
    import yaml

    from rec11_book.notebooks import COLAB, NOTEBOOKS_BRANCH

    repository = yaml.safe_load((root / "_config.yml").read_text())["repository"]["url"]
    org_repo = repository.rstrip("/").split("github.com/", 1)[1]
    for rel in downloads(build_dir):
        html = (build_dir / "html" / rel).with_suffix(".html").read_text()
        url = f"{COLAB}/{org_repo}/blob/{NOTEBOOKS_BRANCH}/{rel.with_suffix('.ipynb').as_posix()}"
        assert f'href="{url}"' in html, f"{rel}: no Colab link to {url}"
    codeless = build_dir / "html" / "book" / "where-this-lands.html"  # a page with no code: no notebook
    assert "{code-cell}" not in (root / "book" / "where-this-lands.md").read_text()
    assert COLAB not in codeless.read_text(), "a Colab link with no notebook"


def test_the_exercises_download_has_every_starter_and_check_and_folds_the_answers(build_dir, root):
    nb = nbformat.read(build_dir / "html" / "_sources" / "book" / "exercises.ipynb", as_version=4)
    source = (root / "book" / "exercises.md").read_text()
    calls = sorted(set(re.findall(r"^check\.\w+\(\w+\)", source, re.M)))
    assert len(calls) >= 7, calls
    cells = [c for c in code_cells(nb)]
    for call in calls:
        shown = [c for c in cells if call in c.source and not c.metadata.get("jupyter", {}).get("source_hidden")]
        assert shown, f"exercises.ipynb: no visible starter cell with {call}"
        starter = shown[0]
        assert starter.metadata["jupyter"].get("outputs_hidden"), f"{call}: the starter's verdict is not folded"
        assert "Not yet: " in "".join(o.get("text", "") + str(o.get("data", {})) for o in starter.outputs), \
            f"{call}: the starter's check output is missing"
    answers = [c for c in nb.cells if c.cell_type == "raw" and c.metadata.get("jupyter", {}).get("source_hidden")
               and "check." in c.source]
    assert len(answers) >= 5, "the worked answers' code is not kept, collapsed and not run, as raw cells"
    assert not any("assert" in c.source for c in cells), "the page's own checks are in the download"
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert text.count("**Check yourself:**") == source.count(":::{quick-check}")
    assert text.count("<summary>Answer to Exercise") >= 7
