"""Explorable figures (rec11.explore, rec11_book.extensions.explore): one markup, checked.

A figure cell whose output is ``explore(draw, values, ...)`` becomes the default frame
with a labelled slider over every frame; the notebook download and figures/ get the
default frame; a frame without alt text, and an explorable outside a captioned figure,
fail the build at the page and line.
"""

import json
import re

import nbformat
import pytest

from rec11.explore import MIME

pytestmark = pytest.mark.build

CELL = """
```{{code-cell}} ipython3
---
mystnb:
  figure:
    name: {name}
{caption}---
import matplotlib.pyplot as plt
from rec11.explore import explore
from rec11.style import setup_page

setup_page()


def draw(slope):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, slope])
    return {alt}


explore(draw, [0.5, 1, 2], label="Slope", text=lambda s: f"slope {{s:g}}",
        default=1)
```
"""


def explorable(name, alt='f"A line rising to {slope:g} at x = 1."', caption=True):
    lines = "    caption: A line, at each slope.\n" if caption else ""
    return CELL.format(name=name, alt=alt, caption=lines)


def test_an_explorable_figure_is_its_default_frame_with_a_slider(mini_book):
    mini_book.page("index", "# Lines\n" + explorable("slopes"))
    mini_book.toc("index")
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    html_dir = mini_book.path / "_build" / "html"
    page = (html_dir / "book" / "index.html").read_text()

    figure = re.search(r'<div class="rec11-explore".*?</div>\n</div>', page, re.S)[0]
    frames = json.loads(re.search(r'class="rec11-explore-frames">(.*?)</script>', figure)[1])
    assert [f["text"] for f in frames] == ["slope 0.5", "slope 1", "slope 2"]
    assert [f["alt"] for f in frames] == [f"A line rising to {s} at x = 1." for s in ("0.5", "1", "2")]
    for frame in frames:  # every frame is a file of the site, fetched only when needed
        assert (html_dir / "book" / frame["src"]).is_file(), frame["src"]
    assert len({f["src"] for f in frames}) == 3
    images = re.findall(r"<img\b[^>]*>", figure)
    assert len(images) == 1, "only the default frame is an <img>"
    assert f'src="{frames[1]["src"]}"' in images[0] and 'alt="A line rising to 1 at x = 1."' in images[0]
    assert re.search(r'<label for="([\w-]+)-input">Slope</label>', figure)
    assert re.search(r'<input type="range"[^>]*min="0" max="2"[^>]*value="1" aria-valuetext="slope 1">', figure)
    assert '<output for="' in figure and ">slope 1</output>" in figure
    assert 'aria-live="polite"' in figure
    assert "rec11-explore.js" in page
    assert "A line, at each slope." in page  # the caption

    download = nbformat.read(html_dir / "_sources" / "book" / "index.ipynb", as_version=4)
    outputs = [o for c in download.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert outputs and all(MIME not in o.get("data", {}) for o in outputs)
    assert any("image/png" in o.get("data", {}) for o in outputs), "the notebook shows the default frame"

    exported = mini_book.path / "figures"
    assert (exported / "slopes.png").is_file() and (exported / "slopes.svg").is_file()


def test_a_frame_without_alt_text_or_caption_fails_at_the_page_and_line(mini_book):
    page = mini_book.page("index", "# Lines\n" + explorable("no-alt", alt='""')
                          + explorable("no-caption", caption=False))
    mini_book.toc("index")
    result = mini_book.build()
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    lines = page.read_text().splitlines()
    cells = [n + 1 for n, line in enumerate(lines) if line.startswith("```{code-cell}")]
    no_alt = re.search(r"index\.md:(\d+): WARNING: figure has no alt text[^\n]*frame 1 of 'Slope'", output)
    assert no_alt, output[-3000:]
    assert cells[0] <= int(no_alt[1]) < cells[1]
    no_caption = re.search(r"index\.md:(\d+): WARNING: explorable figure outside a captioned figure", output)
    assert no_caption, output[-3000:]
    assert int(no_caption[1]) >= cells[1]
