"""Reading time, computed from the pages, never written by hand.

A page's reading time is what a student reads on it:

* its prose, at ``WORDS_PER_MINUTE``: paragraphs, lists, tables, captions, exercise
  answers, math and the printed outputs of cells whose output is shown, but not
  instructor notes, code, or the alt text of figures;
* ``SECONDS_PER_FIGURE`` for every figure;
* ``SECONDS_PER_CELL`` for every code cell whose code is shown (a cell whose input
  is hidden behind "Show code" or removed does not count; its figures do).

A page's **core** is the page itself, less its **practice**: an ``{exercise}`` that is
not on a slide (no ``{slide}`` inside), with what follows it up to the next exercise
(its starter cells, its checks, its answer), is for the third pass after the session,
and its time is given apart. Its **going further** pages are the pages
listed under it in ``_toc.yml`` (``sections:``), kept in ``book/further/``
(``rec11_book.shared.pages.toc_chapters``). Every
page shows its reading time under its title, the ``{agenda}`` directive lists the
chapter with the time of each page, and ``{agenda}`` with ``:slides:`` adds the
minutes the instructor notes give each page's slides. A page whose front matter says
``audience: instructors`` is not counted in the chapter's total.

Sphinx-side code: docutils and Sphinx only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from rec11.chapter import toc_chapters
from rec11_book.compat.myst_nb import hide_mode, mime_priority, nb_element
from rec11_book.shared.pages import AGENDA_MARKDOWN, SLIDE_MARK, deck_links, for_instructors, keep_per_page, slides_of

WORDS_PER_MINUTE = 200
SECONDS_PER_FIGURE = 20
SECONDS_PER_CELL = 10
HIDDEN_INPUT = {"all", "input", "input+output"}
HIDDEN_OUTPUT = {"all", "output", "input+output"}


@dataclass(frozen=True)
class Reading:
    words: int = 0
    figures: int = 0
    cells: int = 0

    @property
    def seconds(self) -> float:
        return self.words * 60 / WORDS_PER_MINUTE + self.figures * SECONDS_PER_FIGURE + self.cells * SECONDS_PER_CELL

    @property
    def minutes(self) -> float:
        return self.seconds / 60

    def __add__(self, other: Reading) -> Reading:
        return Reading(self.words + other.words, self.figures + other.figures, self.cells + other.cells)


def minutes_text(minutes: float) -> str:
    """Whole minutes, at least 1: a reader plans in minutes, not seconds."""
    return f"{max(1, round(minutes))} min"


def _skipped(node: nodes.Element) -> bool:
    """Parts of a page a student does not read as prose."""
    classes = node.get("classes", [])
    return (
        "instructor-note" in classes
        or isinstance(node, (nodes.literal_block, nodes.raw, nodes.comment, nodes.system_message))
        or nb_element(node) == "cell_code_source"
    )


def practice(doctree: nodes.Node) -> list[nodes.Element]:
    """The page's practice: each exercise that is not on a slide, and what follows it
    (starter cells, checks, its answer) up to the next exercise."""
    found = []
    for parent in doctree.findall(nodes.Element):
        beyond_slides = False
        for child in parent.children:
            if not isinstance(child, nodes.Element):
                continue
            if "exercise" in child.get("classes", []):
                beyond_slides = not any(SLIDE_MARK in n.get("classes", []) for n in child.findall(nodes.Element))
            if beyond_slides:
                found.append(child)
    return found


def count(doctree: nodes.Node, mime_priority: list[str] = (), skip: tuple[nodes.Node, ...] = ()) -> Reading:
    """The words, figures and visible code cells of a page (less the nodes in ``skip``).

    An output the notebook holds in several formats (a figure as PNG and SVG, a table
    as Markdown and plain text) is counted once, in the format the page will show:
    the first of ``mime_priority`` it has (else its first).
    """
    words = figures = cells = 0

    def shown(bundle: nodes.Element) -> list[nodes.Node]:
        types = [child.get("mime_type") for child in bundle.children]
        best = next((t for t in mime_priority if t in types), types[0] if types else None)
        return [child for child in bundle.children if child.get("mime_type") == best][:1]

    skipped = {id(node) for node in skip}

    def walk(node: nodes.Node, output_hidden: bool, in_cell: bool) -> None:
        nonlocal words, figures, cells
        if id(node) in skipped:
            return
        if isinstance(node, nodes.Text):
            words += len(node.astext().split())
            return
        if isinstance(node, nodes.literal_block) and in_cell:
            words += len(node.astext().split())  # a printed output is read too
            return
        if not isinstance(node, nodes.Element) or _skipped(node):
            if isinstance(node, nodes.literal_block) and not in_cell:
                cells += 1  # a code listing in the text is read like a code cell
            return
        if isinstance(node, nodes.image) or "rec11-explore" in node.get("classes", []):
            figures += not output_hidden  # an explorable figure is one, however many frames
            return
        if nb_element(node) == "cell_code":
            in_cell = True
            mode = hide_mode(node)
            shows_input = mode not in HIDDEN_INPUT and any(
                nb_element(child) == "cell_code_source" for child in node.children
            )
            cells += shows_input
            output_hidden = output_hidden or mode in HIDDEN_OUTPUT
            if output_hidden:
                return  # a hidden output is not read either
        children = shown(node) if nb_element(node) == "mime_bundle" else node.children
        for child in children:
            walk(child, output_hidden, in_cell)

    walk(doctree, False, False)
    return Reading(words, figures, cells)


# --- Sphinx: count, show under the title, list in {agenda} ---------------------------


class agenda_node(nodes.General, nodes.Element):
    """Replaced by the chapter's list once every page has been read."""


class Agenda(SphinxDirective):
    """``{agenda}``: the chapter's pages with their reading times (``:slides:`` adds
    the instructor notes' minutes for each page and the ratio)."""

    option_spec: ClassVar[dict] = {"slides": lambda arg: True}

    def run(self):
        node = agenda_node(slides="slides" in self.options)
        self.set_source_info(node)
        return [node]


def record(app: Sphinx, doctree: nodes.document) -> None:
    priority = mime_priority(app)
    exercises = tuple(practice(doctree))
    app.env.rec11_reading[app.env.docname] = count(doctree, priority, skip=exercises)
    app.env.rec11_practice[app.env.docname] = sum((count(n, priority) for n in exercises), Reading())
    app.env.rec11_agenda[app.env.docname] = next(doctree.findall(agenda_node), None) is not None


class Times:
    """Reading times of the pages of one build, from its environment and its toc."""

    def __init__(self, env, book: Path):
        self.env = env
        self.toc = toc_chapters(book)
        self.parent = {f: page.docname for page in self.toc for f in page.further}

    def core(self, docname: str) -> float:
        return self.env.rec11_reading.get(docname, Reading()).minutes

    def practice(self, docname: str) -> float:
        return getattr(self.env, "rec11_practice", {}).get(docname, Reading()).minutes

    def further(self, docname: str) -> float:
        page = next((p for p in self.toc if p.docname == docname), None)
        return sum(self.core(f) for f in page.further) if page else 0.0

    def counted(self, docname: str) -> bool:
        """In the chapter's total: a student page that is not a going-further page."""
        meta = self.env.metadata.get(docname, {})
        return docname not in self.parent and not for_instructors(meta)

    def core_pages(self) -> list[str]:
        return [p.docname for p in self.toc if self.counted(p.docname)]

    def totals(self) -> tuple[float, float]:
        pages = self.core_pages()
        return sum(self.core(d) for d in pages), sum(self.further(d) for d in pages)

    def practice_total(self) -> float:
        return sum(self.practice(d) for d in self.core_pages())

    def totals_sentence(self) -> str:
        core, further = self.totals()
        practice = self.practice_total()
        return (f"The chapter's core reads in about {minutes_text(core)}"
                + (f"; the exercises beyond the slides take {minutes_text(practice)} more" if practice else "")
                + f"; the going-further pages add {minutes_text(further)}.")

    def slide_minutes(self, docname: str) -> float:
        return sum(note.minutes for note in slides_of(self.env, docname))

    def header(self, docname: str) -> str:
        if docname in self.parent:
            return f"Going further · reading time {minutes_text(self.core(docname))}"
        text = f"Reading time {minutes_text(self.core(docname))}"
        if self.practice(docname):
            text += f" · exercises {minutes_text(self.practice(docname))}"
        if self.further(docname):
            text += f" · going further {minutes_text(self.further(docname))} more"
        return text


def _title(env, docname: str) -> str:
    title = env.titles.get(docname)
    return title.astext() if title is not None else docname


def _link(app: Sphinx, fromdoc: str, docname: str) -> nodes.reference:
    uri = app.builder.get_relative_uri(fromdoc, docname)
    return nodes.reference("", _title(app.env, docname), internal=True, refuri=uri)


def agenda_list(app: Sphinx, fromdoc: str, times: Times) -> list[nodes.Node]:
    """The chapter as a list grouped by part: each page, its time, its going further."""
    out, current, part_list = [], object(), None
    for page in times.toc:
        if page.docname == fromdoc or not times.counted(page.docname):
            continue
        if page.part != current:
            current = page.part
            if page.part:
                out.append(nodes.paragraph("", "", nodes.strong(text=page.part)))
            part_list = nodes.bullet_list()
            out.append(part_list)
        item = nodes.paragraph("", "", _link(app, fromdoc, page.docname),
                               nodes.Text(f" · {minutes_text(times.core(page.docname))}"))
        for further in page.further:
            item += nodes.Text("; ")
            item += _link(app, fromdoc, further)
            item += nodes.Text(f" · {minutes_text(times.core(further))}")
        part_list += nodes.list_item("", item)
    out.append(nodes.paragraph(
        "", f"{times.totals_sentence()} Times count prose at {WORDS_PER_MINUTE} words a minute, "
        f"{SECONDS_PER_FIGURE} s a figure and {SECONDS_PER_CELL} s a code cell."))
    return out


def agenda_table(app: Sphinx, fromdoc: str, times: Times) -> nodes.table:
    """For instructors: each page's slide minutes beside its core reading time."""
    header = ["page", "slides (min)", "core reading", "ratio", "exercises", "going further"]
    table = nodes.table(classes=["rec11-reading-plan"])
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in header)
    thead, tbody = nodes.thead(), nodes.tbody()
    group += [thead, tbody]

    def row(cells):
        r = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += cell if isinstance(cell, (nodes.Element, list)) else nodes.paragraph(text=str(cell))
            r += entry
        return r

    thead += row(header)
    for page in times.toc:
        d = page.docname
        if not times.counted(d):
            continue
        slides, core = times.slide_minutes(d), times.core(d)
        ratio = f"{core / slides:.2f}" if slides else "–"
        further = minutes_text(times.further(d)) if page.further else "–"
        page_cell = [nodes.paragraph("", "", _link(app, fromdoc, d)), *deck_links(app.env, fromdoc, d)]
        exercises = minutes_text(times.practice(d)) if times.practice(d) else "–"
        tbody += row([page_cell, f"{slides:g}",
                      minutes_text(core), ratio, exercises, further])
    core, further = times.totals()
    slides = sum(times.slide_minutes(d) for d in times.core_pages())
    tbody += row(["total", f"{slides:g}", minutes_text(core), f"{core / slides:.2f}" if slides else "–",
                  minutes_text(times.practice_total()), minutes_text(further)])
    return table


def agenda_markdown(app: Sphinx, fromdoc: str, slides: bool, site: str) -> str:
    """The ``{agenda}`` as a Markdown table, for the notebook downloads; links go to
    the published pages under ``site``. Other extensions ask for it through the event
    ``AGENDA_MARKDOWN`` (``app.emit_firstresult``), not by importing this module."""
    times = Times(app.env, Path(app.srcdir))

    def link(docname: str) -> str:
        return f"[{_title(app.env, docname)}]({site}{docname}.html)"

    header = ["page", "slides (min)", "core reading", "going further"] if slides else \
        ["page", "reading time", "going further"]
    rows = [header, ["---"] * len(header)]
    for page in times.toc:
        d = page.docname
        if not times.counted(d) or (d == fromdoc and not slides):
            continue
        further = "; ".join(f"{link(f)} · {minutes_text(times.core(f))}" for f in page.further) or "–"
        rows.append([link(d), f"{times.slide_minutes(d):g}", minutes_text(times.core(d)), further] if slides
                    else [link(d), minutes_text(times.core(d)), further])
    table = "\n".join("| " + " | ".join(row) + " |" for row in rows)
    return f"{table}\n\n{times.totals_sentence()}"


def resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    times = Times(app.env, Path(app.srcdir))
    for node in list(doctree.findall(agenda_node)):
        node.replace_self(agenda_table(app, docname, times) if node["slides"] else agenda_list(app, docname, times))
    section = next(doctree.findall(nodes.section), None)
    if section is not None and docname in app.env.rec11_reading:
        title = section.next_node(nodes.title)
        line = nodes.paragraph("", times.header(docname), classes=["rec11-reading-time"])
        title.parent.insert(title.parent.index(title) + 1, line)


def note_reads(app: Sphinx, env, docnames: list[str]) -> None:
    app.rec11_read_now = set(docnames)  # the pages this build reads again (not pickled)


def rewrite_stale(app: Sphinx, env) -> list[str]:
    """The pages holding an ``{agenda}``, to be written again when any page was read.

    An agenda shows every page's time, but unless it is a toctree parent of the page
    that changed (Sphinx rewrites those), its own page is not read again, and Sphinx
    would keep its old HTML.
    """
    read = getattr(app, "rec11_read_now", set())
    if not read:
        return []
    return sorted(d for d, has in env.rec11_agenda.items() if has and d not in read)


def setup(app: Sphinx) -> dict:
    app.add_node(agenda_node)
    app.add_directive("agenda", Agenda)
    keep_per_page(app, "rec11_reading")
    keep_per_page(app, "rec11_practice")
    keep_per_page(app, "rec11_agenda")  # docname -> whether it holds an {agenda}
    app.connect("env-before-read-docs", note_reads)
    app.connect("doctree-read", record)
    app.connect("env-updated", rewrite_stale)
    app.connect("doctree-resolved", resolve)
    # the agenda as Markdown, for whichever extension writes another output (the downloads)
    app.add_event(AGENDA_MARKDOWN)
    app.connect(AGENDA_MARKDOWN, agenda_markdown)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 3}
