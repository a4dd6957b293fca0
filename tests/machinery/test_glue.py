"""``rec11.glue``: myst-nb's glue in the build, a harmless stand-in in a student's Python."""

import importlib
import sys


def test_it_is_myst_nbs_glue_where_myst_nb_is_installed():
    import myst_nb

    import rec11.glue

    assert importlib.reload(rec11.glue).glue is myst_nb.glue


def test_without_myst_nb_it_shows_what_the_page_would_and_records_nothing(monkeypatch):
    import rec11.glue

    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import myst_nb now fails
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda value: shown.append(value))
    try:
        stand_in = importlib.reload(rec11.glue).glue
        assert stand_in("kl", 0.5, display=False) is None and shown == []
        stand_in("kl", 0.5)
        assert shown == [0.5]
    finally:
        monkeypatch.undo()
        importlib.reload(rec11.glue)
