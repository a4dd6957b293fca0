"""What the build relies on in sphinx-exercise (pinned 1.2.1) beyond its documented API."""

from __future__ import annotations

from rec11_book.compat import lacks_text, reliance


@reliance(probe=lambda: lacks_text("sphinx_exercise", 'nodes.section(ids=["exercise-content"])',
                                   'nodes.section(ids=["solution-content"])'))
def shared_body_ids() -> tuple[str, ...]:
    """The ids sphinx-exercise gives every exercise's and solution's body, the same on each.

    Relies on: sphinx-exercise making each body a ``nodes.section(ids=["exercise-content"])``
    (``"solution-content"`` for a solution), so that two on a page clash (axe: duplicate-id).
    Package: sphinx-exercise. Checked against: 1.2.1.
    Public alternative: none.
    """
    return ("exercise-content", "solution-content")
