"""Math is typeset when the book is built (rec11_book.extensions.mathsvg), and bad TeX fails the build."""

import re

import pytest

pytestmark = pytest.mark.build

PAGE = r"""
# Math

Inline $\mathbf{x}^\top \mathbf{y}$, and a display:

$$
\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_j e^{z_j}}
$$ (softmax)

```{math}
a &= b \\
c &= d
```
"""


def test_math_is_svg_with_assistive_mathml_and_no_engine(mini_book):
    mini_book.page("index", PAGE)
    mini_book.toc("index")
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    html = (mini_book.path / "_build" / "html" / "book" / "index.html").read_text()
    formulas = re.findall(r"<mjx-container\b.*?</mjx-container>", html, re.S)
    assert len(formulas) == 3
    for formula in formulas:
        assert 'aria-hidden="true"' in formula and "<svg" in formula
        assert "<mjx-assistive-mml" in formula and "<math" in formula  # what screen readers read
    assert '<span class="eqno">(1)' in html  # the labelled equation keeps its number
    assert "\\frac" not in html and "$$" not in html  # no TeX left for a browser to typeset
    assert not re.search(r"<script[^>]+mathjax", html, re.I), "the page loads MathJax"
    assert "rec11-math.css" in html
    ids = re.findall(r'\bid="(MJX-[^"]+)"', html)
    assert ids and len(ids) == len(set(ids)), "glyph ids repeat on the page"
    # one set of glyphs for the page's formulas, not one per formula, and it has each they draw
    assert html.count('<svg class="rec11-glyphs"') == 1 and html.count("<defs>") == 1
    assert set(re.findall(r'href="#(MJX-[^"]+)"', html)) == set(ids)


def test_bad_tex_fails_the_build_naming_page_line_and_tex(mini_book):
    page = mini_book.page("index", "# Math\n\nFine $x$.\n\nBroken $\\frac{1}{$ here.\n\nUnknown $\\nosuchmacro$.\n")
    mini_book.toc("index")
    result = mini_book.build()
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    lines = page.read_text().splitlines()
    broken = next(i for i, text in enumerate(lines, 1) if text.startswith("Broken"))
    unknown = next(i for i, text in enumerate(lines, 1) if text.startswith("Unknown"))
    assert f"index.md:{broken}: WARNING: math: Missing close brace, in the TeX: \\frac{{1}}{{" in output, output[-3000:]
    assert f"index.md:{unknown}: WARNING: math: Undefined control sequence \\nosuchmacro" in output, output[-3000:]
