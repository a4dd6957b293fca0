"""The number rule: every number a page reports comes from the run that built it.

Checked on every page the build reads, each failure a warning at the page and line (and
``-W`` fails the build):

* **A typed number must be a setting.** A decimal, a percentage or a whole number typed into
  a page's prose, a caption or an alt text must be one the page's own code uses: a learning
  rate, a temperature, a size (a number literal in the page's code cells). A claim's
  threshold is such a number only in that claim's own sentence (the paragraph, caption or
  alt text that holds words its message quotes): "under 0.1" where the claim says so, not
  "40 %" elsewhere because 0.4 bounds another claim. Anything the run measures is glued,
  ``{glue:text}`key:.2f```; "about 18 times" for a measured 17.6 too. Front matter, code,
  math, links, directive options and instructor notes are not checked. Whole numbers that
  stay typed (``EXEMPT``): below 10 (a count the reader checks by eye: two heads, 4 layers),
  a year (1800 to 2099: citations), a label's number (Lecture 18, Exercises 1 and 6), and
  a date (11/24). A number typed on purpose that the code does not hold (a fact of the
  package or the slides) is listed, with its reason, in the page's front matter::

      typed_numbers:
        "99%": rec11.recall counts a row as saturated above 0.99 of its weight
        "400": rec11.recall trains for 400 steps (RecallConfig.steps)
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
from rec11_book.shared.pages import front_matter_of, glued_values, parse_cells
from rec11_book.shared.plainmd import GLUE_ROLE

logger = logging.getLogger(__name__)

DECIMAL = re.compile(r"(?<![\w.\\/^-])(\d*\.\d+|\d+(?:\.\d+)?\s?%)(?!\w|\.\d)")
# A whole number as prose writes it (6,000 with its separator), not part of a decimal, a
# percentage, a date (11/24), a power (10⁻³) or a word (L09)
WHOLE = re.compile(r"(?<![\w.,\\/^⁻-])(\d{1,3}(?:,\d{3})+|\d+)(?![\w.%⁰¹²³⁴⁵⁶⁷⁸⁹⁻]|\.\d|/\d|,\d{3}|\s%)")
# whole numbers that stay typed: the words before a label's number (and the numbers listed after it)
LABEL = re.compile(r"\b(?:Lectures?|Exercises?|Recitations?|Assignments?|Sections?|Figures?|Weeks?|Chapters?|"
                   r"Parts?|Slides?)\s+\d+(?:\s*(?:,|and|or|to|–)\s*\d+)*")
EXEMPT = "below 10, a year (1800 to 2099), a label's number (Lecture 18), a date (11/24)"
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
        if display_math or stripped.startswith(("+++", "%")) or re.fullmatch(r"\([\w-]+\)=", stripped):
            continue  # math, a cell break, a MyST comment (no reader sees it), a label
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


def _number_nodes(node: ast.AST) -> list[ast.Constant]:
    """The number literals in ``node`` (booleans are not numbers here)."""
    return [n for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)]


def _code_trees(text: str):
    """Each code cell of a page, parsed (magics left out); the source of one that does not parse."""
    for code in (c for _, _, c in parse_cells(text)):
        try:
            yield ast.parse("\n".join(ln for ln in code.split("\n") if not ln.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            yield code


def code_numbers(text: str) -> set[float]:
    """Every number literal in a page's code cells, but those only a claim's threshold holds
    (``claim_thresholds``: they are settings in their own claim's sentence alone)."""
    numbers: set[float] = set()
    for tree in _code_trees(text):
        if isinstance(tree, str):
            numbers.update(float(m) for m in re.findall(r"\d*\.?\d+(?:e-?\d+)?", tree))
            continue
        thresholds = {id(n) for node in ast.walk(tree) if _is_claim(node) for n in _number_nodes(node.args[2])}
        numbers.update(float(n.value) for n in _number_nodes(tree) if id(n) not in thresholds)
    return numbers


def _is_claim(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "claim"
            and len(node.args) >= 4)


def claim_thresholds(text: str) -> dict[float, list[str]]:
    """Each number in a claim's threshold, with the words its messages quote (the sentence's
    own words, 'the cloud sits around the origin'; an elision ... splits them)."""
    out: dict[float, list[str]] = {}
    for tree in _code_trees(text):
        if isinstance(tree, str):
            continue
        for node in ast.walk(tree):
            if not _is_claim(node):
                continue
            message = " ".join(n.value for n in ast.walk(node.args[3])
                               if isinstance(n, ast.Constant) and isinstance(n.value, str))
            words = [w.strip() for quoted in re.findall(r"'([^']+)'", message)
                     for w in re.split(r"\.\.\.|…", quoted) if len(w.strip()) >= 8]
            for n in _number_nodes(node.args[2]):
                out.setdefault(float(n.value), []).extend(words)
    return out


def _paragraphs(text: str) -> dict[int, str]:
    """Each line's paragraph (the run of non-blank lines it is in), whitespace-collapsed."""
    lines, out, start = text.split("\n"), {}, 0
    for i in range(len(lines) + 1):
        if i == len(lines) or not lines[i].strip():
            block = " ".join(" ".join(lines[start:i]).split())
            for n in range(start, i):
                out[n + 1] = block
            start = i + 1
    return out


def allowed_numbers(text: str) -> dict[str, str]:
    """The page's ``typed_numbers`` front matter: each number typed on purpose, with why."""
    listed = front_matter_of(text).get("typed_numbers") or {}
    return {str(k).replace(" ", ""): str(v) for k, v in listed.items()}


def _near(candidates: list[float], setting: float) -> bool:
    return any(math.isclose(c, setting, rel_tol=1e-9, abs_tol=1e-12) for c in candidates)


def _exempt_whole(content: str, match: re.Match) -> bool:
    """A whole number that stays typed (``EXEMPT``)."""
    value = int(match[1].replace(",", ""))
    if value < 10 or (len(match[1]) == 4 and 1800 <= value <= 2099):
        return True
    return any(label.start() <= match.start() < label.end() for label in LABEL.finditer(content))


def typed_numbers(text: str) -> list[tuple[int, str]]:
    """(line, number) of each decimal, percentage or whole number typed into student text that
    the page's code does not use (a claim's threshold only in its own sentence), that is not
    ``EXEMPT`` and that its front matter does not list under ``typed_numbers``."""
    settings = code_numbers(text)
    thresholds = claim_thresholds(text)
    allowed = allowed_numbers(text)
    paragraphs = _paragraphs(text)
    figure_lines = dict(figure_texts(text))
    found = []
    for line, content in student_lines(text):
        # the sentence a number sits in: a caption or alt text whole, else its paragraph
        around = content if figure_lines.get(line) == content else paragraphs.get(line, content)
        for pattern in _NOT_PROSE:
            content = pattern.sub(" ", content)
        typed = [(m[1].replace(" ", ""), m.start()) for m in DECIMAL.finditer(content)]
        typed += [(m[1], m.start()) for m in WHOLE.finditer(content) if not _exempt_whole(content, m)]
        for shown, _ in sorted(typed, key=lambda t: t[1]):
            if shown in allowed or shown.replace(",", "") in allowed:
                continue
            value = float(shown.rstrip("%").replace(",", ""))
            candidates = [value, value / 100] if shown.endswith("%") else [value]
            if any(_near(candidates, s) for s in settings):
                continue
            own = [w for t, words in thresholds.items() if _near(candidates, t) for w in words]
            if any(w.lower() in around.lower() for w in own):
                continue  # a claim's threshold, in that claim's own sentence
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
