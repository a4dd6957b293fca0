"""What the build relies on in docutils (pinned 0.21.2) beyond its documented API."""

from __future__ import annotations

from rec11_book.compat import lacks_attributes, reliance


@reliance(probe=lambda: lacks_attributes("docutils.parsers.rst.directives._directive_registry",
                                         "docutils.parsers.rst.directives._directives"))
def directive_names() -> set[str]:
    """Every directive name a page of this build may use (domain directives written with
    their prefix, ``py:function``, are not listed).

    Relies on: docutils' private registries (both there since docutils 0.3):
    ``directives._directive_registry``, docutils' own directives, and ``directives._directives``,
    every directive registered with ``register_directive``, which is how Sphinx's
    ``add_directive`` (and so every extension, MyST and myst-nb included) adds one.
    Package: docutils. Checked against: 0.21.2.
    Public alternative: none (``directives.directive(name, ...)`` looks one name up; nothing
    lists them).
    """
    from docutils.parsers.rst import directives

    return set(directives._directive_registry) | set(directives._directives)
