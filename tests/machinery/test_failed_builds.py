"""A failed build's messages end with the fix at the right line, and it writes nothing for
class from its failed state. Here: the pieces that need no build, and probes of the other
packages' internals that the build relies on for it (each fails if that internal goes away),
on a live application: rec11_book.compat's own probes only look at the installed source."""

import io
import logging

import pytest
from docutils.parsers.rst import Directive

from rec11_book.commands import build, handout
from rec11_book.compat.docutils import directive_names
from rec11_book.compat.sphinx import warning_handlers
from rec11_book.extensions import messages
from rec11_book.shared import pages


@pytest.fixture
def sphinx_app(tmp_path):
    """A bare Sphinx application (no book), with its logging put back afterwards."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "conf.py").write_text("")
    (tmp_path / "src" / "index.rst").write_text("Home\n====\n")
    logger = logging.getLogger("sphinx")
    saved = logger.level, logger.propagate, list(logger.handlers)
    warnings = io.StringIO()
    try:
        with docutils_namespace():
            app = Sphinx(tmp_path / "src", tmp_path / "src", tmp_path / "out", tmp_path / "doctrees", "html",
                         status=io.StringIO(), warning=warnings, warningiserror=True, keep_going=True)
            app.rec11_warnings = warnings
            yield app
    finally:
        logger.setLevel(saved[0])
        logger.propagate, logger.handlers[:] = saved[1], saved[2]


def test_probe_sphinx_counts_warnings_where_build_failed_reads_them(sphinx_app):
    from sphinx.util import logging as sphinx_logging

    assert not pages.build_failed(sphinx_app, None)
    sphinx_logging.getLogger("rec11.probe").warning("a problem")
    assert pages.build_failed(sphinx_app, None)
    assert pages.build_failed(sphinx_app, RuntimeError("raised"))


def test_probe_a_rewrite_sees_each_warning_first(sphinx_app):
    from sphinx.util import logging as sphinx_logging

    assert len(warning_handlers()) == 1
    messages.install(sphinx_app)
    messages.install(sphinx_app)  # once only
    sphinx_logging.getLogger("rec11.probe").warning("Unknown directive type: 'figur' [myst.directive_unknown]")
    printed = sphinx_app.rec11_warnings.getvalue()
    assert "Unknown directive type: 'figur'; did you mean {figure}? Fix: write {figure}" in printed, printed
    assert printed.count("did you mean") == 1


def test_probe_known_directives_are_docutils_and_every_registered_one(sphinx_app):
    class Probe(Directive):
        pass

    sphinx_app.add_directive("rec11-probe", Probe)
    known = directive_names()
    assert {"figure", "note", "code-block", "toctree", "rec11-probe"} <= known


def test_the_nearest_directive_names():
    known = {"slide", "instructor-note", "quick-check", "figure", "note", "code-cell", "dropdown"}
    assert messages.nearest("slid", known)[0] == "slide"
    assert messages.nearest("instructor-notes", known) == ["instructor-note"]
    assert messages.nearest("quickcheck", known) == ["quick-check"]
    assert messages.nearest("zzz", known) == []


def test_a_glue_role_is_found_on_its_own_line():
    text = "# T\n\nA paragraph\nthat goes on: {glue:text}`slope:.2f` and\n{glue}`intercept` here.\n"
    assert messages.role_line(text, "intercept", 3) == 5
    assert messages.role_line(text, "slope", 3) == 4
    assert messages.role_line(text, "missing", 3) == 3


def test_nbclients_frames_go_and_the_cells_traceback_stays():
    log = ["book/p.md: WARNING: Executing notebook failed: CellExecutionError\n",
           "Traceback (most recent call last):\n",
           '  File "nbclient/client.py", line 918, in _check_raise_for_error\n',
           "nbclient.exceptions.CellExecutionError: An error occurred while executing the following cell:\n",
           "------------------\n", "y = 1 / 0\n", "------------------\n",
           "ZeroDivisionError                         Traceback (most recent call last)\n",
           "ZeroDivisionError: division by zero\n"]
    kept = list(build.readable(log))
    assert kept[1] == "An error occurred while executing the following cell:\n"
    assert kept[0] == log[0] and kept[2:] == log[4:]


def test_a_warning_after_a_sphinx_step_on_the_same_line_is_counted():
    log = ("checking consistency... /b/book/p.md:12: WARNING: session budget: too long. Fix: cut [rec11.budget]\n"
           "/b/_config.yml:44: WARNING: session budget: too short. Fix: add\n")
    assert build.warnings(log) == ["/b/book/p.md:12: session budget: too long. Fix: cut",
                                   "/b/_config.yml:44: session budget: too short. Fix: add"]


def test_the_handout_is_not_printed_from_a_failed_build(tmp_path, capsys):
    (tmp_path / "_build" / ".doctrees").mkdir(parents=True)
    (tmp_path / "_build" / ".doctrees" / pages.FAILED_PAGES).write_text("book/p\n")
    assert handout.main(["--book", str(tmp_path)]) == 1
    assert "the last build FAILED" in capsys.readouterr().err


def test_a_kernels_own_error_as_it_shuts_down_is_dropped_and_the_page_error_stays():
    """ipykernel can log a traceback of its own when nbclient shuts it down after a failing cell
    (seen under load): the reader gets the page's one traceback, and every other line."""
    race = ["ERROR:tornado.general:Uncaught exception in ZMQStream callback\n",
            "Traceback (most recent call last):\n",
            '  File "ipykernel/iostream.py", line 343, in schedule\n',
            '    self._event_pipe.send(b"")\n',
            "           ^^^^^^^^^^^^^^^^^^^^\n",
            "zmq.error.ZMQError: Socket operation on non-socket\n"]
    page = ["book/p.md: WARNING: Executing notebook failed: CellExecutionError\n",
            "An error occurred while executing the following cell:\n",
            "------------------\n", "y = 1 / 0\n", "------------------\n",
            "ZeroDivisionError                         Traceback (most recent call last)\n",
            "ZeroDivisionError: division by zero\n"]
    before = ["reading sources... [100%] book/p\n", "book/p.md: Executing notebook using local CWD [mystnb]\n"]
    kept = "".join(build.readable(before + race + page))
    assert kept == "".join(before + page)
    # a block cut short (no exception line) ends at the next line that is not its traceback's
    assert "".join(build.readable(race[:3] + page)) == "".join(page)
