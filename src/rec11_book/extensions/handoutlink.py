"""The ``{handout}`` role: a link to the printable PDF handout, whose file name is the course
fact ``handout`` in ``_config.yml``; ``{handout-instructor}`` links to its instructor edition.
``python -m rec11_book.commands.handout`` (the command) prints both into the built site's root.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxRole

from rec11_book.shared.pages import instructor_name


class HandoutLink(SphinxRole):
    """``{handout}`text``` links to the student PDF, ``{handout-instructor}`text``` to the
    instructor edition; both sit at the site's root."""

    def __init__(self, instructor: bool = False):
        self.instructor = instructor

    def run(self):
        name = self.config.myst_substitutions.get("handout")
        if not name:
            message = self.inliner.reporter.error(
                "the {handout} role needs the course fact `handout` (parse.myst_substitutions in _config.yml)",
                line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        name = instructor_name(name) if self.instructor else name
        uri = "../" * self.env.docname.count("/") + name
        return [nodes.reference(self.rawtext, self.text, refuri=uri, classes=["rec11-handout-link"])], []


def setup(app) -> dict:
    app.add_role("handout", HandoutLink())
    app.add_role("handout-instructor", HandoutLink(instructor=True))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
