"""What the build relies on in Sphinx (pinned 7.4.7) beyond its documented API."""

from __future__ import annotations

import re
from pathlib import Path

from rec11_book.compat import lacks_attributes, lacks_text, reliance


def _probe_warncount() -> list[str]:
    return lacks_text("sphinx", "self.app._warncount += 1", "self.keep_going = warningiserror and keep_going")


@reliance(probe=_probe_warncount)
def warnings_fail_build(app) -> bool:
    """Whether a warning so far will fail this build: one was let through and ``-W`` is on.

    ``-W --keep-going`` turns the warnings into exit status 1 only after ``build-finished``,
    so a handler of that event cannot read the outcome from Sphinx otherwise.
    ``tests/machinery/test_failed_builds.py`` also probes it on a live application.

    Relies on: Sphinx's count of the warnings it let through, ``app._warncount`` (its
    ``WarningSuppressor`` filter adds one per warning), and ``-W --keep-going`` setting
    ``app.keep_going`` (``-W`` alone: ``app.warningiserror``).
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: none before the build ends (``app.statuscode`` is set after
    ``build-finished``).
    """
    return bool(app._warncount and (app.keep_going or app.warningiserror))


def _probe_handlers() -> list[str]:
    return (lacks_attributes("sphinx.util.logging.NAMESPACE", "sphinx.util.logging.WarningStreamHandler")
            + lacks_text("sphinx", "warning_handler = WarningStreamHandler("))


@reliance(probe=_probe_handlers)
def warning_handlers() -> list:
    """The handlers that count and print this application's warnings.

    ``tests/machinery/test_failed_builds.py`` also probes it on a live application.

    Relies on: ``sphinx.util.logging.setup`` (called in ``Sphinx.__init__`` before any
    extension loads) putting one ``WarningStreamHandler`` on the ``sphinx`` logger for each
    application, whose filters suppress, count (``app._warncount``), locate and raise a
    warning, in that order.
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: none (a ``logging.Filter`` on the ``sphinx`` logger sees a warning
    after Sphinx has counted it, and cannot rewrite what it counts and prints).
    """
    import logging

    from sphinx.util.logging import NAMESPACE, WarningStreamHandler

    return [h for h in logging.getLogger(NAMESPACE).handlers if isinstance(h, WarningStreamHandler)]


def _probe_render() -> list[str]:
    from sphinx.builders.html import StandaloneHTMLBuilder
    from sphinx.jinja2glue import BuiltinTemplateLoader

    missing = lacks_text("sphinx", "self.templates.render(templatename, ctx)")
    if not callable(getattr(BuiltinTemplateLoader, "render", None)):
        missing.append("sphinx.jinja2glue.BuiltinTemplateLoader.render")
    if not hasattr(StandaloneHTMLBuilder, "init_templates"):
        missing.append("StandaloneHTMLBuilder.init_templates")
    return missing


@reliance(probe=_probe_render)
def filter_rendered_pages(app, name: str, edit) -> None:
    """Pass every page the HTML builder renders through ``edit(html, context)``, once per
    ``name`` (a builder set up twice, as the preview does, does not stack a filter).

    Relies on: the HTML builder rendering every page with
    ``app.builder.templates.render(template, context)`` (the ``TemplateBridge`` it made in
    ``init_templates``), an attribute this function replaces with a wrapper.
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: the ``template_bridge`` setting (a ``TemplateBridge`` subclass whose
    ``render`` filters); not used yet, since it replaces the bridge for every builder and
    needs a full build and the browser tests to show the pages unchanged.
    """
    if app.builder.format != "html" or not hasattr(app.builder, "templates"):
        return
    templates = app.builder.templates
    render = templates.render
    marks = getattr(render, "rec11_filters", ())
    if name in marks:
        return

    def filtered(template: str, context: dict) -> str:
        return edit(render(template, context), context)

    filtered.rec11_filters = (*marks, name)
    templates.render = filtered


def _probe_templates() -> list[str]:
    import inspect

    from sphinx.jinja2glue import BuiltinTemplateLoader

    missing = [] if "self.environment = SandboxedEnvironment(loader=self" in inspect.getsource(
        BuiltinTemplateLoader.init) else ["BuiltinTemplateLoader.init setting self.environment"]
    if "load" in vars(BuiltinTemplateLoader):
        missing.append("BuiltinTemplateLoader using jinja2's BaseLoader.load (which reads the bytecode cache)")
    return missing


@reliance(probe=_probe_templates)
def cache_compiled_templates(app, folder) -> None:
    """Keep the HTML builder's compiled Jinja templates in ``folder``, so that a build loads
    the theme's templates compiled instead of compiling them again (about 40 per build).

    Relies on: the HTML builder's ``app.builder.templates`` (its ``BuiltinTemplateLoader``,
    made in ``init_templates``) keeping its Jinja environment in ``.environment``, and
    loading templates through Jinja's ``BaseLoader.load``, which consults the environment's
    ``bytecode_cache`` (keyed by the template's file, checked against its source's hash).
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: the ``template_bridge`` setting (a ``TemplateBridge`` subclass
    with its own environment); not used, since it replaces the bridge for every builder.
    """
    from jinja2 import FileSystemBytecodeCache

    environment = getattr(getattr(app.builder, "templates", None), "environment", None)
    if environment is not None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        environment.bytecode_cache = FileSystemBytecodeCache(str(folder))


def _probe_assets() -> list[str]:
    from sphinx.builders.html._assets import _JavaScript

    js = _JavaScript("x.js", priority=300, defer="defer")
    missing = [] if js.filename == "x.js" and js.priority == 300 and js.attributes == {"defer": "defer"} else [
        "_JavaScript(filename, priority=, **attributes) with .filename, .priority, .attributes"]
    return missing


@reliance(probe=_probe_assets)
def asset_filename(asset) -> str:
    """The file a script or stylesheet of a page's ``script_files``/``css_files`` loads ("" for
    an inline script).

    Relies on: the entries of ``html-page-context``'s ``script_files`` and ``css_files`` being
    Sphinx's private ``_JavaScript`` and ``_CascadingStyleSheet`` (``sphinx.builders.html._assets``),
    with ``filename``, ``priority`` and ``attributes``.
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: none (Sphinx offers ``add_js_file``/``add_css_file``, but no way to
    read or remove another extension's file).
    """
    return str(getattr(asset, "filename", "") or "")


@reliance(probe=_probe_assets)
def asset_attributes(asset) -> dict:
    """The attributes of a page's script or stylesheet (``body`` for an inline script, ``defer``...).

    Relies on: the same private asset classes as ``asset_filename``: their ``attributes`` dict.
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: none.
    """
    return dict(getattr(asset, "attributes", {}) or {})


@reliance(probe=_probe_assets)
def same_script(js, attributes: dict):
    """A copy of a page's script with other attributes (the trim defers other extensions' scripts).

    Relies on: re-creating Sphinx's private ``_JavaScript`` as ``type(js)(filename,
    priority=..., **attributes)``.
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: ``app.add_js_file(name, defer="defer")``, for the book's own scripts
    only (it does); another extension's script can only be replaced in the page's list.
    """
    return type(js)(js.filename, priority=getattr(js, "priority", 500), **attributes)


# A warning's line; Sphinx may have printed a step's name before it on that line
# ("checking consistency... " precedes the budget check's warnings).
_WARNING_LINE = re.compile(r"^(?:[a-z][a-z ]*\.\.\. )?(?:(?P<where>\S+?(?::\d+)?): )?(?:WARNING|ERROR): "
                           r"(?P<message>.*?)(?: \[[\w.]+\])?$", re.M)


def _probe_warning_text() -> list[str]:
    return lacks_text("sphinx", "message = f'{location}: {self.prefix}{message}'", "return 'WARNING: '",
                      "return 'ERROR: '", "record.msg += f' [{log_type}.{log_subtype}]'")


@reliance(probe=_probe_warning_text)
def logged_warnings(log: str) -> list[tuple[str | None, str]]:
    """(where, message) of every warning or error line in a build's printed log (ANSI colours
    already removed), in order; ``where`` is ``file:line``, ``file`` or None.

    Relies on: the text Sphinx prints for a warning: ``<file>:<line>: WARNING: <message>
    [<type>.<subtype>]`` (``ERROR`` for an error), on a line of its own or after a step's
    ``name... ``.
    Package: sphinx. Checked against: 7.4.7.
    Public alternative: none that is not text (``--warning-file`` writes the same lines); a
    logging filter in the build's own process could record the warnings as data, which the
    build command, a separate process, would then read.
    """
    return [(m["where"], m["message"]) for m in _WARNING_LINE.finditer(log)]
