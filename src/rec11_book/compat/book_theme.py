"""What the build relies on in sphinx-book-theme (pinned 1.3.0): the page context its launch
menu and download menu leave for the extensions that run after them (``html-page-context``,
priority above 500)."""

from __future__ import annotations

from rec11_book.compat import lacks_text, reliance

PACKAGE = "sphinx_book_theme"


def _probe_menu() -> list[str]:
    return lacks_text(PACKAGE, 'header_buttons = context["header_buttons"]', '"label": "launch-buttons"',
                      '"buttons": launch_buttons_list', '"icon": "_static/images/logo_binder.svg"')


@reliance(probe=_probe_menu)
def add_launch_link(context: dict, button: dict) -> None:
    """Put ``button`` (``type``, ``text``, ``tooltip``, ``icon``, ``url``, ``label``) first in the
    page's launch menu, if the page has one.

    Relies on: the theme's ``header_buttons`` context entry, a list of button dicts in which the
    launch menu is a group labelled ``launch-buttons`` holding its ``buttons``.
    Package: sphinx-book-theme. Checked against: 1.3.0.
    Public alternative: none (the theme's launch options name fixed services: Binder,
    JupyterHub, Colab for a notebook it finds, Deepnote, JupyterLite).
    """
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            group["buttons"].insert(0, button)


@reliance(probe=_probe_menu)
def drop_button_images(context: dict) -> None:
    """Show the header's buttons without their logo images (a screen reader said "Binder logo
    Binder"); icon-font icons stay.

    Relies on: the theme's ``header_buttons`` (see ``add_launch_link``): each button's ``icon``
    is an image path (``_static/images/logo_binder.svg``) or an icon class, and a group's
    ``buttons`` nest.
    Package: sphinx-book-theme. Checked against: 1.3.0.
    Public alternative: none.
    """

    def walk(buttons):
        for button in buttons:
            if str(button.get("icon", "")).endswith((".svg", ".png")):
                button["icon"] = None
            walk(button.get("buttons", []))

    walk(context.get("header_buttons", []))


@reliance(probe=lambda: lacks_text(PACKAGE, 'context["ipynb_source"] = pagename + ".ipynb"',
                                   'sources_dir = out_dir.joinpath("_sources")', 'joinpath("jupyter_execute")'))
def notebook_download(docname: str) -> str:
    """Where the site offers a page's notebook for download, relative to the site's root
    (the theme's download menu links it when the page context has ``ipynb_source``).

    Relies on: the theme copying a MyST notebook page's ``jupyter_execute/<page>.ipynb`` to
    ``_sources/<page>.ipynb`` while it renders the page, and setting ``ipynb_source``.
    Package: sphinx-book-theme. Checked against: 1.3.0.
    Public alternative: none (Sphinx's ``html_copy_source`` copies the page's ``.md`` only).
    """
    return f"_sources/{docname}.ipynb"


@reliance(probe=lambda: lacks_text(PACKAGE, 'context["use_thebe"] = True')
         + lacks_text(PACKAGE, "initThebe();", suffixes=(".js",)))
def live_code_on(context: dict) -> bool:
    """Whether the page shows the theme's **Live Code** button (whose ``initThebe()`` the book's
    Live Code defines).

    Relies on: the theme setting ``use_thebe`` in the page context when ``launch_buttons.thebe``
    is on and it adds the button, which calls the page's global ``initThebe()`` (through its
    ``initThebeSBT``).
    Package: sphinx-book-theme. Checked against: 1.3.0.
    Public alternative: none (``launch_buttons.thebe`` is the book's setting, not the page's).
    """
    return bool(context.get("use_thebe"))


@reliance(probe=lambda: lacks_text(PACKAGE, "<button class='thebe-launch-button'></button>",
                                   'document.querySelector("section h1")', suffixes=(".js",)))
def live_code_placeholder() -> str:
    """The class of the placeholder the theme's Live Code button puts under the page title:
    ``static/livecode/status.js`` puts the status box in its place (the page's Live Code
    settings hand it the class, ``livecode.page_config``).

    Relies on: the theme's ``initThebeSBT`` inserting an empty ``<button class='thebe-launch-button'>``
    after the page's first ``section h1`` before it calls ``initThebe()``, unless the element
    there has that class already.
    Package: sphinx-book-theme. Checked against: 1.3.0.
    Public alternative: none (the theme offers no hook for where Live Code's status goes).
    """
    return "thebe-launch-button"


@reliance(probe=lambda: lacks_text(PACKAGE, 'context["ipynb_source"] = pagename + ".ipynb"'))
def offers_notebook(context: dict) -> bool:
    """Whether the page's download menu offers its notebook (``notebook_download``).

    Relies on: the theme setting ``ipynb_source`` in the page context of a MyST notebook page
    whose notebook it copied to ``_sources``.
    Package: sphinx-book-theme. Checked against: 1.3.0.
    Public alternative: none.
    """
    return bool(context.get("ipynb_source"))
