"""The number rule: every number a page reports comes from the run that built it.

Checked on every page the build reads, each failure a warning at the page and line (and
``-W`` fails the build):

* **A typed decimal must be a setting.** A decimal number or percentage typed into a page's
  prose, a caption or an alt text must be one the page's own code uses: a learning rate, a
  temperature, a claim's threshold (a number literal in the page's code cells). Anything the
  run measures is glued, ``{glue:text}`key:.2f```. Front matter, code, math, links, directive
  options and instructor notes are not checked; integers (years, lecture numbers, sizes) are
  not either. A number typed on purpose that the code does not hold (a fact of the package
  or the slides) is listed, with its reason, in the page's front matter::

      typed_numbers:
        "99%": rec11.recall counts a row as saturated above 0.99 of its weight
* **Every glued value is shown.** A key the page glues and nothing uses (a ``{glue:...}`` role
  on the page, ``:answer-glue:``, or ``page::key`` on another page) is a warning at the
  ``glue(...)`` call.
* **Rounding keeps a bound true.** After "below", "at most", "more than" and the like, a glued
  number as printed must still be on the right side of the value: "no more than 0.02" for
  0.024 is false (print ``:.3f``, or the value itself without the bound).
* **A round number that is not round** (0.9998 printed "1.000") is a note, not a failure: the
  build prints it so that the author can choose a format that shows the difference.

Imports no torch.
"""

from __future__ import annotations

import ast
import math
import posixpath
import re
from pathlib import Path

import yaml
from sphinx.application import Sphinx
from sphinx.util import logging

from rec11_book.compat.myst_nb import format_plain_text
from rec11_book.pages import front_matter_of, glued_values, parse_cells
from rec11_book.plainmd import GLUE_ROLE

logger = logging.getLogger(__name__)

DECIMAL = re.compile(r"(?<![\w.\\/^-])(\d*\.\d+|\d+(?:\.\d+)?\s?%)(?!\w|\.\d)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\{([\w:-]+)\})?")
_SKIPPED_BLOCKS = {"code-cell", "code-block", "code", "math", "instructor-note", "glue:figure", "raw",
                   "literalinclude", "toctree"}
_NOT_PROSE = [
    re.compile(r"\$\$.*?\$\$"),  # display math on one line
    re.compile(r"\$[^$\n]+\$"),  # inline math
    re.compile(r"\{[\w:-]+\}`[^`]*`"),  # roles: glue, math, ref, doc, course facts
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<!--.*?-->"),  # comments
    re.compile(r"https?://\S+"),
]
# words after which a printed number is a bound: (phrase, the side the value must be on)
# ("up to" is left out: "goes on up to 0.9" and "adds up to 80" report a value, not a bound)
UPPER = ("no more than", "at most", "below", "under", "less than", "smaller than", "within",
         "not above", "lower than", "fewer than")
LOWER = ("more than", "at least", "above", "over", "greater than", "larger than", "exceeds",
         "exceeding", "higher than")
_BOUND = re.compile(r"\b(" + "|".join(sorted(UPPER + LOWER, key=len, reverse=True)) + r")\s+(?:about\s+)?$",
                    re.I)


def _skipped(fence: str, name: str) -> bool:
    """Whether a fenced block's content is not student prose: code, math, notes."""
    if not name:
        return fence[0] in "`~"  # a plain code block, ``` or ```python
    return name in _SKIPPED_BLOCKS


def student_lines(text: str) -> list[tuple[int, str]]:
    """(line, text) of what a student reads of a page's source: prose lines, and the
    captions and alt texts of its code cells; not front matter, code, math blocks,
    directive options or instructor notes."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    start = 0
    if lines and lines[0].strip() == "---":  # front matter
        start = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0) + 1
    open_fences: list[tuple[str, bool]] = []  # (the fence that closes it, its content skipped)
    in_options = display_math = False
    for i in range(start, len(lines)):
        line, stripped = lines[i], lines[i].strip()
        if open_fences and stripped == open_fences[-1][0]:
            open_fences.pop()
            continue
        if open_fences and open_fences[-1][1]:
            continue  # inside code, math or a note: only its closing fence matters
        fence = _FENCE.match(line)
        if fence:
            open_fences.append((fence[1], _skipped(fence[1], fence[3] or "")))
            in_options = True
            continue
        if in_options and re.match(r"^\s*:[\w-]+:", line):
            continue  # a directive's options
        in_options = False
        if stripped.startswith("$$"):
            display_math = stripped == "$$" or stripped.count("$$") == 1 if not display_math else False
            continue
        if display_math or stripped.startswith("+++") or re.fullmatch(r"\([\w-]+\)=", stripped):
            continue  # math, a cell break, a label
        out.append((i + 1, line))
    return sorted(out + figure_texts(text))


def figure_texts(text: str) -> list[tuple[int, str]]:
    """(line, text) of every caption and alt text in the code cells' ``mystnb:`` options."""
    out = []
    for line, options, _ in parse_cells(text):
        block = options.strip()
        if not block.startswith("---"):
            continue
        meta = yaml.safe_load(block.strip("-")) or {}
        mystnb = meta.get("mystnb") or {}
        first = line - len(options.split("\n"))  # the options' first line
        for key, value in [("caption", (mystnb.get("figure") or {}).get("caption")),
                           ("alt", (mystnb.get("image") or {}).get("alt"))]:
            if value:
                offset = next((n for n, ln in enumerate(options.split("\n")) if ln.strip().startswith(f"{key}:")), 0)
                out.append((first + offset, " ".join(str(value).split())))
    return out


def code_numbers(text: str) -> set[float]:
    """Every number literal in a page's code cells."""
    numbers: set[float] = set()
    for code in (c for _, _, c in parse_cells(text)):
        try:
            tree = ast.parse("\n".join(ln for ln in code.split("\n") if not ln.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            numbers.update(float(m) for m in re.findall(r"\d*\.?\d+(?:e-?\d+)?", code))
            continue
        numbers.update(float(node.value) for node in ast.walk(tree)
                       if isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
                       and not isinstance(node.value, bool))
    return numbers


def allowed_numbers(text: str) -> dict[str, str]:
    """The page's ``typed_numbers`` front matter: each number typed on purpose, with why."""
    listed = front_matter_of(text).get("typed_numbers") or {}
    return {str(k).replace(" ", ""): str(v) for k, v in listed.items()}


def typed_numbers(text: str) -> list[tuple[int, str]]:
    """(line, number) of each decimal or percentage typed into student text that the page's
    code does not use and its front matter does not list under ``typed_numbers``."""
    settings = code_numbers(text)
    allowed = allowed_numbers(text)
    found = []
    for line, content in student_lines(text):
        for pattern in _NOT_PROSE:
            content = pattern.sub(" ", content)
        for match in DECIMAL.finditer(content):
            shown = match[1].replace(" ", "")
            if shown in allowed:
                continue
            value = float(shown.rstrip("%"))
            candidates = [value, value / 100] if shown.endswith("%") else [value]
            if not any(math.isclose(c, s, rel_tol=1e-9, abs_tol=1e-12) for c in candidates for s in settings):
                found.append((line, shown))
    return found


def glue_uses(text: str) -> set[str]:
    """The glue keys a page's source shows (``page::key`` keeps its page, as written)."""
    keys = set()
    for match in GLUE_ROLE.finditer(text):
        page, sep, rest = match[1].rpartition("::")
        keys.add(f"{page}{sep}{rest.partition(':')[0]}")
    keys |= set(re.findall(r"^\s*:answer-glue:\s*(\S+)", text, re.M))
    keys |= set(re.findall(r"\{glue:figure\}\s*(\S+)", text))
    return keys


def shown_elsewhere(docname: str, others: dict[str, str]) -> set[str]:
    """The keys of ``docname`` that other pages show as ``path::key`` (a path relative to
    the page that shows it, with or without ``.md``)."""
    keys = set()
    for other, text in others.items():
        for key in glue_uses(text):
            page, sep, name = key.rpartition("::")
            target = posixpath.normpath(posixpath.join(posixpath.dirname(other), page))
            if sep and target.removesuffix(".md").removesuffix(".ipynb") == docname:
                keys.add(name)
    return keys


def glue_calls(text: str) -> list[tuple[int, re.Pattern]]:
    """(line, the keys it saves) of each ``glue(...)`` call whose key is written in the call:
    a string, or an f-string, which saves a family of keys (``f"err_{step}"``)."""
    calls = []
    for first, _, code in parse_cells(text):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "glue" and node.args):
                continue
            key = node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                pattern = re.escape(key.value)
            elif isinstance(key, ast.JoinedStr):
                pattern = "".join(re.escape(part.value) if isinstance(part, ast.Constant) else ".+?"
                                  for part in key.values)
            else:
                continue  # a key held in a variable: checked key by key
            calls.append((first + node.lineno - 1, re.compile(pattern)))
    return calls


def unused_glue(text: str, glued: set[str], used: set[str]) -> list[tuple[int, str]]:
    """(line, key) of each value the page glues and nothing shows. A ``glue()`` call with an
    f-string key saves a family (one value per model, say, for a table): it is unused only if
    no member is shown."""
    calls = glue_calls(text)
    literal = {p.pattern for _, p in calls}  # re.escape(key) of keys saved by name
    problems = []
    for key in sorted(glued - used):
        family = [p for _, p in calls if p.fullmatch(key) and p.pattern != re.escape(key)]
        if any(p.fullmatch(u) and re.escape(u) not in literal for p in family for u in used):
            continue
        line = next((ln for ln, p in calls if p.fullmatch(key)), None)
        if line is None:  # saved through a variable (a loop over a dict): find the key's text
            line = next((n for n, ln in enumerate(text.split("\n"), 1) if f'"{key}"' in ln or f"'{key}'" in ln), 1)
        problems.append((line, key))
    return problems


def shown(plain: str, fmt: str) -> tuple[float, str] | None:
    """The number a glued value's ``text/plain`` prints as with ``fmt``, formatted as the page
    formats it (myst-nb's ``format_plain_text``), and the printed text; None if not numeric."""
    text = format_plain_text(plain, fmt)
    number = text.replace(",", "").strip()
    try:
        return (float(number[:-1]) / 100 if number.endswith("%") else float(number)), text
    except ValueError:
        return None


def looks_exact(text: str) -> bool:
    """Whether a printed number claims to be round: two or more decimals, all zero ("1.000",
    "0.00"), or a share of none or all ("0%", "100.0%"). "4.0" for 3.96 is ordinary rounding."""
    digits = re.sub(r"[^\d.]", "", text)
    if text.strip().endswith("%"):
        return float(digits) in (0.0, 100.0)
    return "." in digits and len(digits.split(".")[1]) >= 2 and set(digits.split(".")[1]) == {"0"}


def false_bounds(text: str, glued: dict) -> list[tuple[int, str]]:
    """(line, problem) for each glued number after a bound word that its rounding makes false,
    and each that prints a round number the value is not (the problem starts with 'note')."""
    problems = []
    for line, content in student_lines(text):
        for match in GLUE_ROLE.finditer(content):
            name, _, fmt = match[1].partition(":")
            plain = (glued.get(name) or {}).get("data", {}).get("text/plain")
            try:
                value = float(ast.literal_eval(plain)) if plain is not None else None
            except (ValueError, SyntaxError, TypeError):
                value = None
            if value is None or not fmt or math.isnan(value):
                continue
            printed = shown(plain, fmt)
            if printed is None:
                continue
            number, text_shown = printed
            bound = _BOUND.search(content[:match.start()])
            if bound:
                word = bound[1].lower()
                wrong = number < value if word in UPPER else number > value
                if wrong:
                    problems.append((line, f"'{word} {text_shown}' is false: {name} is {value:.6g}, and "
                                           f"'{fmt}' rounds it {'down' if number < value else 'up'}. Fix: "
                                           f"print it with more digits, or give the value without '{word}'"))
                    continue
            if looks_exact(text_shown) and number != value:
                problems.append((line, f"note: {name} is {value:.6g} but prints as a round {text_shown}"
                                       f" ('{fmt}'); a format with more digits would show it is not round"))
    return problems


def _source(app: Sphinx, docname: str) -> str:
    path = Path(app.env.doc2path(docname))
    return path.read_text() if path.suffix == ".md" and path.is_file() else ""


def check_numbers(app: Sphinx, doctree) -> None:
    docname = app.env.docname
    text = _source(app, docname)
    if not text:
        return
    path = Path(app.env.doc2path(docname))
    for line, number in typed_numbers(text):
        logger.warning(f"the number {number} is typed into the page, not glued from the run. Fix: glue it"
                       f" from the code that computes it and write {{glue:text}}`key:fmt`; a setting the page"
                       f" uses (a learning rate, a threshold) may stay typed when the code uses the same number",
                       location=(docname, line), type="rec11", subtype="numbers")
    glued = glued_values(app, docname)
    for line, problem in false_bounds(text, glued):
        if problem.startswith("note: "):
            logger.info(f"{path.name}:{line}: {problem}")
        else:
            logger.warning(problem, location=(docname, line), type="rec11", subtype="numbers")
    if glued:
        used = glue_uses(text)
        used |= shown_elsewhere(docname, {d: _source(app, d) for d in app.env.found_docs if d != docname})
        for line, key in unused_glue(text, set(glued), used):
            logger.warning(f"the page glues {key!r}, and nothing shows it. Fix: show it with"
                           f" {{glue:text}}`{key}`, or delete the glue() call",
                           location=(docname, line), type="rec11", subtype="numbers")


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", check_numbers)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
