"""The pages' MyST markdown as plain Markdown, for the notebooks readers download.

JupyterLab, VS Code and Colab render CommonMark with ``$...$`` math, and show MyST's
own markup as literal text. :func:`convert` rewrites one markdown cell of a page so
that it reads as the page does:

* ``{slide}`` fences are unwrapped (the deck's text is the page's text);
* ``{instructor-note}`` blocks go: instructors read them on the pages and in the
  instructor edition of the handout, students never in their notebooks;
* ``(label)=`` targets and ``%`` comments go;
* links to a label or to another page (``[text](sec-x)``, ``[text](../vae.md)``) point
  at the published page, which every notebook tool can open;
* ``{exercise}`` becomes a heading. A worked answer, a ``{solution}`` or the text of a
  gated ``{solution-start}`` ... ``{solution-end}`` one, goes: the reader's notebook
  leaves it to the page's answers notebook, where it stands under a heading of its own
  (``context.answers``; ``notebooks.for_download`` does the same with the answer's code
  cells, reading ``context.solution``). A ``{quick-check}`` becomes its prompt (and
  choices), with the answer collapsed;
  admonitions become quotes (a dropdown one, ``<details>``);
* ``{agenda}`` becomes a table and ``{literalinclude}`` the code it includes;
  ``{math}`` and labelled ``$$`` blocks become plain ``$$`` blocks;
* roles: ``{glue:text}`` and ``{{ fact }}`` are filled in, ``{handout}`` is a link to
  the PDF and ``{solutions-notebook}`` one to the page's answers notebook; ``{states}``
  (the relation a sentence states, for the build) goes.

The block structure comes from myst-parser's own markdown-it parser, so fences nest
as MyST nests them. Markup it cannot render is reported through ``context.warn`` with
its line, and left as it was: the build then fails naming the page and the line.

Sphinx-side: imports no torch and no model code.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from rec11_book.compat.myst_nb import format_plain_text
from rec11_book.shared import quickmarkup
from rec11_book.shared.pages import instructor_name

EXTENSIONS = {"colon_fence", "dollarmath", "amsmath", "substitution", "deflist"}
ADMONITIONS = {"admonition", "attention", "caution", "danger", "error", "hint", "important", "note",
               "seealso", "tip", "warning"}
DROPPED = {"instructor-note"}
_OPTION = re.compile(r"^:([\w-]+):[ \t]*(.*)$")
_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
_LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
_SUBSTITUTION = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_SOLUTION_MARK = re.compile(r"\x00([^\x00]*)\x00")
# A worked answer: a {solution} or the start of a gated one, at the start of a fence.
ANSWER = re.compile(r"^(?:`{3,}|:{3,})\{solution(?:-start)?\}", re.MULTILINE)
GLUE_ROLE = re.compile(r"\{glue(?::text|:md)?\}`([^`]+)`")


@dataclass
class Context:
    """What converting one page needs to know about the book.

    ``docname`` is the page (``book/vae``); ``site`` the published book's URL, ending
    in ``/``; ``labels`` maps a label to ``(docname, anchor)``; ``glue(key)`` returns a
    glued value's data dict; ``agenda(docname, slides)`` the session plan as Markdown;
    ``warn(line, message)`` reports what cannot be converted (``line`` counts from 1 in
    the page's file, given the cell's first line as ``first_line``).
    """

    docname: str
    site: str
    labels: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    glue: Callable[[str], dict] = lambda key: {}
    agenda: Callable[[str, bool], str] | None = None
    handout: str = ""
    book: Path | None = None
    warn: Callable[[int, str], None] = lambda line, message: None
    exercises: dict = field(default_factory=dict)  # label -> number, filled in page order
    heading: int = 1  # depth of the last heading seen, across the page's cells
    solution: str | None = None  # inside {solution-start} ... {solution-end}: its title
    # The answers notebook shows the worked answers; a reader's notebook leaves them out.
    answers: bool = False
    solutions_url: str = ""  # the page's answers notebook, for {solutions-notebook}
    solutions_colab: str = ""  # the same, opened in Colab


@cache
def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions=EXTENSIONS), RendererHTML)


def page_url(context: Context, docname: str, anchor: str = "") -> str:
    return f"{context.site}{docname}.html" + (f"#{anchor}" if anchor else "")


def split_options(content: str) -> tuple[dict, str, int]:
    """A directive's ``:key: value`` lines (or YAML block), its body, and how many
    lines the options took."""
    lines = content.split("\n")
    options, used = {}, 0
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            import yaml

            options = yaml.safe_load("\n".join(lines[1:end])) or {}
            used = end + 1
    else:
        while used < len(lines) and (match := _OPTION.match(lines[used])):
            options[match[1]] = match[2].strip()
            used += 1
    return options, "\n".join(lines[used:]).strip("\n"), used


def has_answers(text: str) -> bool:
    """Whether a page's text holds a worked answer."""
    return bool(ANSWER.search(text))


def convert(text: str, context: Context, first_line: int = 1) -> str:
    """One markdown cell of ``context.docname`` as plain Markdown."""
    return _gate_solutions(_convert(text, context, first_line), context)


def _convert(text: str, context: Context, first_line: int) -> str:
    """``convert`` for a cell or a directive's body, leaving the marks of a gated solution."""
    lines = text.split("\n")
    out, at = [], 0
    for token in _parser().parse(text):
        if token.level != 0 or token.map is None:
            continue
        start, end = token.map
        if token.type == "heading_open":
            context.heading = int(token.tag[1])
        if token.type == "fence" and not token.info.startswith("{"):
            replacement = "\n".join(lines[start:end])  # a code block: left exactly as written
        else:
            replacement = _block(token, context, first_line + start)
        if replacement is None:
            continue
        out.append(_inline("\n".join(lines[at:start]), context, first_line + at))
        out.append(replacement)
        at = end
    out.append(_inline("\n".join(lines[at:]), context, first_line + at))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def _gate_solutions(text: str, context: Context) -> str:
    """Text inside a gated solution (``{solution-start}`` to ``{solution-end}``, which may
    span cells) under its heading in the answers notebook, and left out of the reader's;
    ``notebooks.for_download`` does the same with the code cells between, reading
    ``context.solution``."""
    parts = _SOLUTION_MARK.split(text)
    out = []
    for index, part in enumerate(parts):
        if index % 2:  # a mark: the title of the answer it starts, or "" at its end
            context.solution = part or None
            if part and context.answers:
                out.append(_answer_heading(context, part))
        elif part.strip() and (context.answers or not context.solution):
            out.append(part.strip("\n"))
    return "\n\n".join(out)


def _answer_heading(context: Context, title: str) -> str:
    """One level below the exercise's heading, so that an answer shows in the outline."""
    return f"{'#' * min(6, context.heading + 2)} {title}"


def _answer_title(context: Context, label: str) -> str:
    number = context.exercises.get(label)
    return f"Answer to Exercise {number}" if number else "Answer"


def _block(token, context: Context, line: int) -> str | None:
    """The replacement for a block token, or None to keep its lines (inline rules apply)."""
    if token.type in ("myst_target", "myst_line_comment"):
        return ""
    if token.type == "math_block_label":  # $$ ... $$ (label): the label is MyST's
        return f"$$\n{token.content.strip()}\n$$"
    if token.type not in ("colon_fence", "fence"):
        return None
    match = re.match(r"\{([\w:-]+)\}\s*(.*)", token.info.strip())
    if not match:
        return None  # a plain code block
    name, argument = match[1], match[2].strip()
    options, body, used = split_options(token.content)
    body_line = line + 1 + used
    if name in DROPPED:
        return ""
    if name == "slide":
        return _convert(body, context, body_line)
    if name == "exercise":
        number = len(context.exercises) + 1
        context.exercises[options.get("label", f"#{number}")] = number
        title = f"Exercise {number}" + (f": {argument}" if argument else "")
        return f"{'#' * min(6, context.heading + 1)} {title}\n\n{_convert(body, context, body_line)}"
    if name == "solution-start":
        return f"\x00{_answer_title(context, argument)}\x00"
    if name == "solution-end":
        return "\x00\x00"
    if name == "solution":
        inner = _convert(body, context, body_line)  # converted either way: its problems are the page's
        if not context.answers:
            return ""
        return f"{_answer_heading(context, _answer_title(context, argument))}\n\n{inner}"
    if name in ADMONITIONS:
        title = argument if name == "admonition" else (argument or name.capitalize())
        inner = _convert(body, context, body_line)
        if "dropdown" in str(options.get("class", "")):
            return _details(title, inner)
        quoted = "\n".join(f"> {row}" if row else ">" for row in inner.split("\n"))
        return f"> **{title}**\n>\n{quoted}"
    if name == "math":
        return f"$$\n{body}\n$$"
    if name == "quick-check":
        return _quick_check(argument, options, body, context, line, body_line)
    if name in ("code", "code-block"):
        return f"```{argument}\n{body}\n```"
    if name == "agenda" and context.agenda is not None:
        return context.agenda(context.docname, "slides" in options)
    if name == "literalinclude" and context.book is not None:
        code = _included(context, argument, options, line)
        if code is not None:
            return f"```{options.get('language', 'python')}\n{code}\n```"
        return token.content
    context.warn(line, f"the notebook download cannot render the {{{name}}} directive")
    return None


def _quick_check(argument, options, body, context: Context, line: int, body_line: int) -> str | None:
    """The prompt, the choices as a list, and the answer (and the hint) collapsed."""
    try:
        check = quickmarkup.parse(argument, options, body, context.glue)
    except ValueError as err:
        context.warn(line, str(err))
        if "answer-glue" not in options:
            return None
        # reported above (the build fails); the rest of the page still converts
        stand_in = str(options.get("choices", "0")).split("|")[0].strip()
        check = quickmarkup.parse(argument, {**options, "answer-glue": None, "answer": stand_in}, body)
    text = [f"**{quickmarkup.LABEL}** {_inline(check.prompt, context, line)}"]
    text += [""] + [f"- {_inline(choice, context, line)}" for choice in check.choices] if check.choices else []
    inner = f"`{check.answer}`" if check.kind == "text" else _inline(check.answer, context, line)
    if check.hint:
        inner += "\n\n" + _convert(check.hint, context, body_line)
    return "\n".join(text) + "\n\n" + _details("Answer", inner)


def _details(summary: str, inner: str) -> str:
    # The blank lines let a notebook render Markdown and math inside the HTML block.
    return f"<details>\n<summary>{summary}</summary>\n\n{inner}\n\n</details>"


def _included(context: Context, argument: str, options: dict, line: int) -> str | None:
    page_dir = (context.book / context.docname).parent
    path = (page_dir / argument).resolve()
    if not path.is_file():
        context.warn(line, f"literalinclude: no file {argument}")
        return None
    source = path.read_text()
    if "pyobject" not in options:
        return source.rstrip("\n")
    body, node = ast.parse(source).body, None
    for name in options["pyobject"].split("."):  # "Block.forward": a method, as Sphinx allows
        node = next((n for n in body if getattr(n, "name", None) == name), None)
        if node is None:
            break
        body = getattr(node, "body", [])
    if node is not None:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return "\n".join(source.split("\n")[start - 1:node.end_lineno])
    context.warn(line, f"literalinclude: no {options['pyobject']} in {argument}")
    return None


def paste_glue(text: str, lookup) -> tuple[str, list[str]]:
    """``text`` with each glue role replaced by its value; and the keys not found.

    ``lookup(key)`` returns the glued output's ``data`` dict, or ``{}``.
    """
    missing = []

    def paste(match: re.Match) -> str:
        page, sep, rest = match[1].rpartition("::")
        name, _, fmt = rest.partition(":")
        key = f"{page}{sep}{name}"
        data = lookup(key)
        if match[0].startswith("{glue:md}") and "text/markdown" in data:
            return data["text/markdown"]
        if "text/plain" not in data:
            missing.append(key)
            return match[0]
        return format_plain_text(data["text/plain"], fmt)

    return GLUE_ROLE.sub(paste, text), missing


def _inline(text: str, context: Context, first_line: int) -> str:
    """Roles, course facts and links in running text (``first_line``: its first line)."""
    written = text
    text, missing = paste_glue(text, context.glue)
    for key in missing:
        line = first_line + written.count("\n", 0, max(0, written.find(key)))
        context.warn(line, f"no glued value {key!r} for the notebook download")
    text = _SUBSTITUTION.sub(lambda m: str(context.facts.get(m[1], m[0])), text)

    def role(match: re.Match) -> str:
        name, words = match[1], match[2]
        if name.startswith("glue"):
            return match[0]  # reported above
        if name in ("handout", "handout-instructor") and context.handout:
            pdf = context.handout if name == "handout" else instructor_name(context.handout)
            return f"[{words}]({context.site}{pdf})"
        if name == "solutions-notebook" and context.solutions_url:
            return f"[{words}]({context.solutions_url})"
        if name == "math":
            return f"${words}$"
        if name == "states":  # the relation a sentence states (rec11_book.extensions.facts): nothing to show
            return ""
        line = first_line + text.count("\n", 0, match.start())
        if name == "solutions-notebook":
            context.warn(line, "{solutions-notebook}: this page has no worked answers to link to")
        else:
            context.warn(line, f"the notebook download cannot render the {{{name}}} role")
        return match[0]

    text = _ROLE.sub(role, text)
    return _LINK.sub(lambda m: f"[{m[1]}]({_target(m[2], context)})", text)


def _target(target: str, context: Context) -> str:
    """Where a link of the page points in a notebook: the published page, for a label
    or another page of the book; anything else (a URL, a file) unchanged."""
    if re.match(r"^[a-z][\w+.-]*:", target):  # a URL
        return target
    if target in context.labels:
        return page_url(context, *context.labels[target])
    path, _, anchor = target.partition("#")
    if not path:
        return page_url(context, context.docname, anchor)
    if path.endswith(".md"):
        docname = posixpath.normpath(posixpath.join(posixpath.dirname(context.docname), path[:-3]))
        return page_url(context, docname, anchor)
    return target
