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
from types import SimpleNamespace

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from rec11_book.extensions.notebooks import (
    COLAB,
    FINGERPRINT_KEY,
    GLUE_RECORD,
    NOTEBOOKS_BRANCH,
    QUIET_TRAINING,
    SOLUTIONS,
    TORCH_INDEX,
    executed_notebooks,
    site_url,
    without_self_checks,
)
from rec11_book.shared.execution import kernel_sockets
from rec11_book.shared.plainmd import GLUE_ROLE

# one worker of make test's two makes the fresh venv once
pytestmark = [pytest.mark.build, pytest.mark.xdist_group("downloads")]


@pytest.fixture(scope="session")  # session: xdist runs other files' tests between this file's
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
        if "remove-cell" in cell.metadata.get("tags", []):
            source = without_self_checks(cell.source)
            if source.strip():
                kept.append((source, None))
        else:
            kept.append((cell.source, cell))
    return kept


# Where a worked answer starts, on a page and in the notebook myst-nb makes of it.
ANSWER_START = re.compile(r"^(`{3,}|:{3,})\{solution(-start)?\}", re.MULTILINE)
GATE = re.compile(r"\{solution-(start|end)\}")


def answered_pages(root: Path) -> list[Path]:
    """The pages with worked answers (``{solution}``, ``{solution-start}``), as book paths."""
    return [page.relative_to(root) for page in sorted((root / "book").rglob("*.md"))
            if ANSWER_START.search(page.read_text())]


def solutions_of(download: Path) -> Path:
    return download.with_name(f"{download.stem}{SOLUTIONS}.ipynb")


def in_answers(rendered) -> list[bool]:
    """For each code cell of a page's notebook, whether it stands inside a gated answer
    (``{solution-start}`` ... ``{solution-end}``, read from the markdown cells around it)."""
    inside, flags = False, []
    for cell in rendered.cells:
        if cell.cell_type == "markdown":
            marks = GATE.findall(cell.source)
            inside = marks[-1] == "start" if marks else inside
        elif cell.cell_type == "code":
            flags.append(inside)
    return flags


def answer_sources(rendered) -> list[str]:
    """The code of the page's worked answers that a reader reads, in the page's order."""
    return [cell.source for cell, inside in zip(code_cells(rendered), in_answers(rendered))
            if inside and "remove-cell" not in cell.metadata.get("tags", [])]


def kept_outputs(page_cell) -> list:
    return [o for o in page_cell.outputs if not any(k.startswith(GLUE_RECORD) for k in o.get("data", {}))]


def test_each_download_has_the_outputs_the_page_rendered(build_dir, root):
    """Every page's cells and outputs reach a reader: in its download, or, for a page with
    worked answers, in the answers notebook beside it (test_exercises_download_is_a_worksheet
    holds the worksheet to the page)."""
    rendered = dict(executed_notebooks(build_dir))
    assert rendered, "no executed pages"
    answered = answered_pages(root)
    assert Path("book/exercises.md") in answered, answered
    for rel, path in downloads(build_dir).items():
        assert path.is_file(), f"{rel}: the page offers no notebook download"
        if rel in answered:
            path = solutions_of(path)
            assert path.is_file(), f"{rel}: a page with worked answers and no answers notebook beside it"
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        expected = expected_cells(rendered[rel])
        assert [c.source for c in page_cells(nb)] == [source for source, _ in expected], rel
        for cell, (_, page_cell) in zip(page_cells(nb), expected):
            if page_cell is None:  # no outputs to keep
                continue
            assert len(cell.outputs) == len(kept_outputs(page_cell)), \
                f"{path.name}: outputs lost in the cell {cell.source[:60]!r}"
        assert any(c.outputs for c in code_cells(nb)), f"{path.name}: the download has no outputs"


def test_downloads_carry_nothing_of_the_build(build_dir):
    for rel, path in downloads(build_dir).items():
        nb = nbformat.read(path, as_version=4)
        assert FINGERPRINT_KEY not in nb.metadata.get("kernelspec", {}), f"{rel}: the fingerprint"
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
            assert not found, (f"{path.name}: {what} in the .md download: "
                               f"{text[max(0, found.start() - 60):found.end() + 60]!r}")
        assert not any(note[:80] in text for note in notes), f"{path.name}: an instructor note in the .md download"


def test_the_install_cell_names_the_commit_the_site_was_built_from(build_dir, root):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
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
    with kernel_sockets() as sockets:  # the other worker starts kernels too: no shared ports
        NotebookClient(ran, timeout=timeout, kernel_name=kernel, resources={"metadata": {"path": str(folder)}},
                       **sockets).execute()
    errors = [o for c in code_cells(ran) if "raises-exception" not in c.metadata.get("tags", [])
              for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{nb.metadata.get('rec11_page', folder)}: {errors[0].ename}: {errors[0].evalue}"
    return ran


@pytest.fixture(scope="session")
def student_venv(build_dir, tmp_path_factory, root):
    """A virtual environment as a notebook tool gives it (Python 3.11 and a kernel, nothing of
    the book), filled by a download's install cell, as a student's first "Run All" fills it.
    Made once per run (a module's fixture was made twice: pytest-xdist runs other files' tests
    between this file's, and pytest then tears a module's fixtures down and makes them again).

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
         f"import importlib.util as u; print(' '.join(n for n in {BUILD_ONLY!r} if u.find_spec(n)))"],
        capture_output=True, text=True, check=True).stdout.split()
    assert not found, f"a student's install of rec11 holds {found}: they belong to the book's build"


def assert_ran_as_built(ran, rel: Path) -> None:
    assert "Installing" not in outputs_text(ran), f"{rel}: the install cell installed again"
    trained = [o.text for c in code_cells(ran) for o in c.outputs
               if o.output_type == "stream" and "on this computer's CPU, once" in o.text]
    assert not trained, f"{rel}: retrained a model the build had trained (a cache key differs?): {trained[0]}"


@pytest.fixture
def student_kernel(built_book, student_venv, monkeypatch) -> str:
    """The student venv's kernel, started as a student's notebook tool starts it, with the
    models the build trained (a model trained here says so). Returns the kernel's name."""
    monkeypatch.setenv("REC11_SEED", str(built_book["seed"]))  # the build's models, not new ones
    monkeypatch.setenv("JUPYTER_PATH", str(student_venv["where"] / "jupyter" / "share" / "jupyter"))
    for name in (QUIET_TRAINING, "REC11_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV"):
        monkeypatch.delenv(name, raising=False)
    return "student"


def test_downloads_run_top_to_bottom_in_a_student_venv(build_dir, student_kernel, root):
    """Every download, as a student runs it: "Run All", in a fresh kernel of an environment
    holding rec11 and nothing of the book's build. The exercises' one with a starter fixed
    first: nothing hidden stops the run or replaces their code."""
    for rel, path in downloads(build_dir).items():
        nb = nbformat.read(path, as_version=4)
        nb.metadata["rec11_page"] = str(rel)
        edited = rel == Path("book/exercises.md")
        if edited:
            as_a_student_left_it(nb)
        # From the page's own folder, as the page ran, with the models from the book's cache.
        ran = run_in(nb, student_kernel, (root / rel).parent, timeout=600)
        assert_ran_as_built(ran, rel)
        if edited:
            last = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                           for o in ran.cells[-1].outputs)
            assert "the student" in last and "Right" in last, \
                f"{rel}: after Run All the student's attention was replaced or not right: {last[:300]}"


def test_the_answers_notebook_runs_top_to_bottom_in_a_student_venv(build_dir, student_kernel, root):
    """The answers notebook, "Run All" in the student's environment: every cell runs, and
    each answer's check, run again here, says Right."""
    rendered = dict(executed_notebooks(build_dir))
    for rel in answered_pages(root):
        nb = nbformat.read(solutions_of(downloads(build_dir)[rel]), as_version=4)
        nb.metadata["rec11_page"] = f"{rel} (answers)"
        ran = run_in(nb, student_kernel, (root / rel).parent, timeout=600)
        assert_ran_as_built(ran, rel)
        answers = [c for c in code_cells(ran) if c.source in answer_sources(rendered[rel]) and "check." in c.source]
        assert len(answers) >= 5, f"{rel}: the answers' checks are not in the answers notebook"
        for cell in answers:
            said = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)
            assert "Right" in said and "Not yet" not in said, f"{rel}: {cell.source[:60]!r} said {said[:300]!r}"


def test_each_page_with_a_download_opens_it_in_colab(build_dir, root):
    import yaml

    repository = yaml.safe_load((root / "_config.yml").read_text())["repository"]["url"]
    org_repo = repository.rstrip("/").split("github.com/", 1)[1]
    for rel in downloads(build_dir):
        html = (build_dir / "html" / rel).with_suffix(".html").read_text()
        url = f"{COLAB}/{org_repo}/blob/{NOTEBOOKS_BRANCH}/{rel.with_suffix('.ipynb').as_posix()}"
        assert f'href="{url}"' in html, f"{rel}: no Colab link to {url}"
    codeless = build_dir / "html" / "book" / "where-this-lands.html"  # a page with no code: no notebook
    assert "{code-cell}" not in (root / "book" / "where-this-lands.md").read_text()
    assert COLAB not in codeless.read_text(), "a Colab link with no notebook"


def as_colab_shows(nb) -> str:
    """Everything a notebook shows as Colab and VS Code show it: ``source_hidden`` and
    ``outputs_hidden`` ignored, raw cells shown as text, every output's text, HTML and
    printed lines."""
    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, (list, dict)):
            for item in (value.values() if isinstance(value, dict) else value):
                yield from strings(item)

    return "\n".join(part for cell in nb.cells for part in [cell.source, *strings(cell.get("outputs", []))])


def squeeze(text: str) -> str:
    return " ".join(text.split())


def answer_prose(source: str) -> list[list[str]]:
    """For each worked answer of a page, in order, the runs of six or more plain words in its
    text that the page says nowhere else (its markup, maths and code split them)."""
    dropdowns = re.finditer(r"^(:{3,})\{solution\}[^\n]*\n(.*?)^\1[ \t]*$", source, re.MULTILINE | re.DOTALL)
    bodies = [m[2] for m in dropdowns]
    gated = re.findall(r"^```\{solution-start\}.*?^```\{solution-end\}", source, re.MULTILINE | re.DOTALL)
    # a code cell between splits the text: a notebook has it in two cells
    bodies += [re.sub(r"^```\{code-cell\}.*?^```$", "`", body, flags=re.MULTILINE | re.DOTALL) for body in gated]
    rest = squeeze(re.sub(r"^```\{solution-start\}.*?^```\{solution-end\}|^(:{3,})\{solution\}.*?^\1[ \t]*$",
                          "", source, flags=re.MULTILINE | re.DOTALL))
    found = []
    for body in sorted(bodies, key=source.find):
        runs = [squeeze(run) for run in re.split(r"[`$\[\](){}*_\n]|:[a-z-]+:", body.replace("\n", " "))]
        found.append([run for run in runs if len(run.split()) >= 6 and run not in rest])
    return found


def test_exercises_download_is_a_worksheet_with_no_answer_in_view(build_dir, root):
    """The exercises' download as Colab and VS Code show it, which honour no folding: every
    starter and its check, visible, with no saved output (a verdict names the bugs the page
    asks the reader to find), and not one line of a worked answer, text or code, anywhere in
    the notebook, before or after the starters. The same holds for any page with answers."""
    rendered = dict(executed_notebooks(build_dir))
    for rel in answered_pages(root):
        nb = nbformat.read(downloads(build_dir)[rel], as_version=4)
        source = (root / rel).read_text()
        # the notebook as Colab shows it, and the .md download made from it
        everything = as_colab_shows(nb) + "\n" + downloads(build_dir)[rel].with_suffix(".md").read_text()
        starters = [cell.source for cell, inside in zip(code_cells(rendered[rel]), in_answers(rendered[rel]))
                    if not inside]
        answers = answer_sources(rendered[rel])
        # an answer's own lines: those no starter (nor the page's set-up) has
        own = {line.strip() for answer in answers for line in answer.split("\n")
               if len(line.strip()) > 12} - {line.strip() for s in starters for line in s.split("\n")}
        assert len(answers) >= 5 and len(own) >= 20, f"{rel}: the test found too few answers: {answers}"
        leaked = sorted(line for line in own if line in everything)
        assert not leaked, f"{rel}: a worked answer's code is in the reader's notebook: {leaked[:5]}"
        prose = answer_prose(source)
        assert len(prose) >= 7 and all(prose), f"{rel}: the test found too little answer text: {prose}"
        text = squeeze(everything)
        leaked = [run for runs in prose for run in runs if run in text]
        assert not leaked, f"{rel}: a worked answer's text is in the reader's notebook: {leaked[:3]}"
        assert "Answer to Exercise" not in everything
        assert not [c for c in nb.cells if c.cell_type == "raw"], f"{rel}: a raw cell, shown as text"
        with_outputs = [c.source[:60] for c in code_cells(nb) if c.outputs]
        assert not with_outputs, f"{rel}: saved outputs under the reader's cells: {with_outputs}"
        calls = sorted(set(re.findall(r"^check\.\w+\(\w+\)", source, re.MULTILINE)))
        if rel == Path("book/exercises.md"):
            assert len(calls) >= 7, calls
        for call in calls:
            assert [c for c in code_cells(nb) if call in c.source and not c.metadata.get("jupyter")], \
                f"{rel}: no visible starter cell with {call}"
        assert not any("assert" in c.source for c in code_cells(nb)), f"{rel}: the page's own checks are in it"
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert text.count("**Check yourself:**") == source.count(":::{quick-check}")


def test_the_answers_notebook_holds_every_answer_in_order_run(build_dir, root):
    """Beside the worksheet, the answers notebook: the page as it ran, each answer under a
    heading, in the page's order, its code a cell that runs, with the output the page shows."""
    rendered = dict(executed_notebooks(build_dir))
    for rel in answered_pages(root):
        nb = nbformat.read(solutions_of(downloads(build_dir)[rel]), as_version=4)
        source = (root / rel).read_text()
        cells = page_cells(nb)
        answers = answer_sources(rendered[rel])
        shown = [c.source for c in cells if c.source in answers]
        assert shown == answers, f"{rel}: the answers notebook lacks answers, or has them out of order"
        for cell in cells:
            if cell.source in answers:
                assert cell.cell_type == "code" and not cell.metadata.get("jupyter"), cell.source[:60]
                assert cell.outputs or "check." not in cell.source, f"{rel}: {cell.source[:60]!r} has no output"
        verdicts = [o for c in cells if c.source in answers and "check." in c.source for o in c.outputs]
        assert verdicts and all("Right" in str(o) for o in verdicts), f"{rel}: an answer's check is not Right"
        text = squeeze("\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))
        headings = [int(n) for n in re.findall(r"#+ Answer to Exercise (\d+)", text)]
        assert len(headings) == len(ANSWER_START.findall(source)), f"{rel}: answers without a heading: {headings}"
        assert headings == sorted(headings), headings
        missing = [run for runs in answer_prose(source) for run in runs if run not in text]
        assert not missing, f"{rel}: answer text missing from the answers notebook: {missing[:3]}"


def test_the_answers_notebook_is_linked_from_the_page_and_the_worksheet(build_dir, root):
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text())
    repository = config["repository"]["url"]
    org_repo = repository.rstrip("/").split("github.com/", 1)[1]
    site = site_url(SimpleNamespace(html_baseurl=config["sphinx"].get("config", {}).get("html_baseurl", ""),
                                    html_theme_options={"repository_url": repository}))
    for rel in answered_pages(root):
        download = downloads(build_dir)[rel]
        solutions = solutions_of(download)
        name = rel.with_suffix("").as_posix() + SOLUTIONS + ".ipynb"
        # the page: a link a student follows, to the file the site serves
        html = (build_dir / "html" / rel).with_suffix(".html")
        hrefs = re.findall(r'<a [^>]*href="([^"]*)"', html.read_text())
        targets = [(html.parent / h).resolve() for h in hrefs if not h.startswith(("http", "#"))]
        assert solutions.resolve() in targets, f"{rel}: the page does not link to {solutions.name}"
        # the worksheet: at the end, the published answers notebook and the same in Colab
        last = nbformat.read(download, as_version=4).cells[-1]
        assert last.cell_type == "markdown", last.source
        assert f"]({site}_sources/{name})" in last.source, last.source
        assert f"]({COLAB}/{org_repo}/blob/{NOTEBOOKS_BRANCH}/{name})" in last.source, last.source
        # and the answers notebook leads back to the page and its worksheet
        answers = nbformat.read(solutions, as_version=4)
        assert page_cells(answers), solutions  # the install cell first
        note = answers.cells[1].source
        assert f"]({site}{rel.with_suffix('.html').as_posix()})" in note, note
        assert f"]({site}_sources/{rel.with_suffix('.ipynb').as_posix()})" in note, note
