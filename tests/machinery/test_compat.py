"""The one seam for other packages' internals (``rec11_book.compat``, ``rec11.style.setup_page``,
``static/livecode/thebe-compat.js``): every reliance holds for the installed version, the
table in docs/architecture.md is the generated one, and no other module reaches past the seam."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rec11_book import compat

ROOT = Path(__file__).resolve().parents[2]
RELIANCES = compat.all_reliances()


def test_the_seam_lists_every_reliance_once_in_the_fixed_form():
    names = [r.name for r in RELIANCES]
    assert len(names) == len(set(names)) and len(names) > 40, names
    for r in RELIANCES:
        assert r.relies_on and r.alternative and re.fullmatch(r"[\w.+-]+", r.checked), r
    with pytest.raises(ValueError, match="Relies on"):
        compat.parse("Does something.\n\nPackage: x. Checked against: 1.")


@pytest.mark.parametrize("reliance", RELIANCES, ids=[r.name for r in RELIANCES])
def test_every_reliance_holds_for_the_installed_version(reliance):
    """The probe ``make check`` runs: what the reliance needs is still there, in the version
    it was checked against (a Node test probes Live Code's: tests/js/thebe-compat.test.mjs)."""
    installed = reliance.installed()
    where = (f"src/rec11_book/static/{reliance.module}" if reliance.npm else
             f"{reliance.module.replace('.', '/')}.py" if reliance.module.startswith("rec11.") else
             f"rec11_book/compat/{reliance.module}.py")
    missing = reliance.probe() if reliance.probe else []
    assert not missing, (
        f"{reliance.name} ({where}) relies on {reliance.relies_on} {reliance.package} {installed} (checked against "
        f"{reliance.checked}) lacks {missing}: change the function to what {installed} offers, or pin "
        f"{reliance.checked} again")
    assert installed == reliance.checked, (
        f"{reliance.name} ({where}) was checked against {reliance.package} {reliance.checked}, and {installed} is "
        f"installed. Look at what it relies on ({reliance.relies_on}) in {installed}; if it holds, write "
        f"'Checked against: {installed}.' in its docstring and run python -m rec11_book.compat --write")


def test_the_docs_table_is_the_generated_one():
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Where the build leans on another package's internals", 1)[1].split("\n## ", 1)[0]
    assert compat.TABLE_START in section, "docs/architecture.md's internals section has lost the table's markers"
    assert compat.in_document(text) == compat.table(), (
        "docs/architecture.md's table of reliances is not the one rec11_book.compat generates: "
        "run python -m rec11_book.compat --write")


def test_every_reliance_is_used_through_the_seam():
    users = compat.callers()
    pages = "\n".join(p.read_text() for p in (ROOT / "book").rglob("*.md"))
    # the course code's reliance is used by the pages' own cells (every page calls setup_page())
    in_pages = {q for q in compat.COURSE if f"{q.rpartition('.')[2]}(" in pages}
    unused = [r.name for r in RELIANCES if not users.get(r.qualified) and r.qualified not in in_pages]
    assert not unused, f"reliances nothing calls (remove them): {unused}"


# What only the seam may touch: another package's private or undocumented pieces.
BUILD_ONLY_IN_COMPAT = [
    r"\._warncount\b", r"_directive_registry", r"directives\._directives", r"templates\.render\s*=",
    r"type\(js\)\(", r"\bWarningStreamHandler\b", r"myst_nb\.(core|sphinx_|ext)\b", r"mystnb_config",
    r"jupyter_cache\.executors", r"\bsphinx_autobuild\b\.", r"sphinx_external_toc\b\.", r"rfc3987",
    r"\"jupyter_execute\"", r"\.jupyter_cache\"", r"\.glue\.json\"", r"bd-article", r"header_buttons",
    r"ipynb_source", r"use_thebe", r"\btag_(slide|hide|remove)", r"div\.cell", r"exercise-content",
    r"\"scripts/fontawesome\.js\"", r"\"fontawesome\" / \"webfonts\"", r"x-thebe-config", r"THEBE_JS_URL",
    r"Executing notebook failed",
    r"executing the following cell", r"found in glue data", r"Unknown directive type: '", r"nb_element\"",
    r"\"hide_mode\"", r"Look above for the cause", r"\(\?:WARNING\|ERROR\)",
]


def code_only(text: str) -> str:
    """A module's text with its comments and docstrings blanked (line numbers kept)."""
    import io
    import tokenize

    lines = text.splitlines(keepends=True)
    blank = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            blank |= set(range(body[0].lineno, body[0].end_lineno + 1))
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col] + "\n"
    return "".join("\n" if n in blank else line for n, line in enumerate(lines, 1))


def test_no_build_module_reaches_past_the_seam():
    found = []
    for path in sorted((ROOT / "src" / "rec11_book").glob("*.py")):
        text = code_only(path.read_text())
        for pattern in BUILD_ONLY_IN_COMPAT:
            for match in re.finditer(pattern, text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"src/rec11_book/{path.name}:{line}: {match[0]!r}")
    assert not found, "use a function of rec11_book.compat instead:\n" + "\n".join(found)


def test_the_course_code_calls_private_torch_only_through_its_seam():
    found = []
    for path in sorted((ROOT / "src" / "rec11").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                base = node.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id == "torch" and path.name != "style.py":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: torch...{node.attr}")
    assert not found, "a private torch name outside rec11.style.setup_page: " + "; ".join(found)


def test_the_js_modules_touch_thebes_globals_only_through_thebe_compat():
    folder = ROOT / "src" / "rec11_book" / "static" / "livecode"
    found = [f"{p.name}:{n}" for p in sorted(folder.glob("*.js")) if p.name != "thebe-compat.js"
             for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"window\.thebe", line)]
    assert not found, f"use static/livecode/thebe-compat.js: {found}"


def test_the_table_command_imports_no_torch_and_writes_the_doc(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(f"# A\n\n{compat.TABLE_START}\nold\n{compat.TABLE_END}\n\nafter\n")
    code = ("import sys; from rec11_book.compat.__main__ import main; main(['--write', '--doc', sys.argv[1]]); "
            "sys.exit('torch' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code, str(doc)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr or "the table's command imported torch"
    text = doc.read_text()
    assert compat.in_document(text) == compat.table() and text.endswith(f"{compat.TABLE_END}\n\nafter\n")
