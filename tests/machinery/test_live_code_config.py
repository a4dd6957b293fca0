"""The live-code setting (rec11_book.extensions.livecode.resolve): file, environment, errors.

Fast checks without a browser; the browser tests exercise the same settings end to end.
"""

from __future__ import annotations

import pytest
from sphinx.errors import ConfigError

from rec11_book.extensions import livecode

THEME = {"launch_buttons": {"binderhub_url": "https://binder.example.edu/"},
         "repository_url": "https://github.com/cpsy1291/recitation-11", "repository_branch": "fall"}


def test_binder_comes_from_launch_buttons_and_repository():
    settings = livecode.resolve({"source": "binder"}, environ={}, theme_options=THEME)
    config = livecode.source_config(settings)
    assert config == {"source": "binder", "label": "binder.example.edu",
                      "binder": {"binderUrl": "https://binder.example.edu", "repo": "cpsy1291/recitation-11",
                                 "ref": "fall", "repoProvider": "github"}}


def test_binder_defaults_to_mybinder():
    settings = livecode.resolve(None, environ={}, theme_options={"repository_url": THEME["repository_url"]})
    assert settings["binderhub_url"] == "https://mybinder.org" and settings["ref"] == "main"


def test_environment_overrides_the_file():
    env = {"REC11_LIVE_CODE_SOURCE": "jupyter-server", "REC11_LIVE_CODE_URL": "http://127.0.0.1:8888",
           "REC11_LIVE_CODE_TOKEN": "abc", "REC11_LIVE_CODE_HUB": "0"}
    settings = livecode.resolve({"source": "binder"}, environ=env, theme_options=THEME)
    assert livecode.source_config(settings) == {
        "source": "jupyter-server", "label": "the Jupyter server at 127.0.0.1:8888",
        "server": {"url": "http://127.0.0.1:8888/", "token": "abc", "hub": False}}


def test_a_hub_is_named_as_a_hub():
    settings = livecode.resolve({"source": "jupyter-server", "server_url": "https://hub.example.edu", "hub": True},
                                environ={}, theme_options=THEME)
    assert livecode.source_label(settings) == "the JupyterHub at hub.example.edu"


@pytest.mark.parametrize("given, message", [
    ({"source": "colab"}, "must be one of"),
    ({"source": "jupyter-server"}, "must be an http(s) URL"),
    ({"source": "jupyter-server", "server_url": "localhost:8888"}, "must be an http(s) URL"),
    ({"sorce": "binder"}, "unknown key"),
])
def test_bad_settings_fail_with_a_message(given, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        livecode.resolve(given, environ={}, theme_options=THEME)


def test_a_functions_own_names_are_not_read_from_a_removed_cell():
    from rec11_book.shared.pagefacts import live_code_gaps

    cell = "```{{code-cell}} ipython3\n{tags}{code}\n```\n\n"
    text = (cell.format(tags=":tags: [remove-cell]\n\n", code="x, H = 1, 2")
            + cell.format(tags="", code="def split(x, H):\n    y = x * H\n    return y")
            + cell.format(tags="", code="f = lambda x: x + 1\nsplit(3, 4)")
            + cell.format(tags="", code="def g(k=H):\n    return x + k"))
    assert [names for _, names in live_code_gaps(text)] == [["H", "x"]]
