"""The page-speed parts that need no build: PNG optimisation, <img> attributes, trimmed pages, math glyphs."""

import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from rec11_book.extensions.images import PALETTE_MAX_DIFF, add_attributes, optimise_folder, optimise_png
from rec11_book.extensions.trim import trim_html
from rec11_book.shared.pages import GlyphError, own_glyphs, share_glyphs, unique_ids


def png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def plot_like() -> Image.Image:
    """Few colours, anti-aliased lines: what matplotlib draws."""
    image = Image.new("RGBA", (300, 200), "white")
    draw = ImageDraw.Draw(image)
    for k, colour in enumerate(["#0072B2", "#D55E00", "#009E73"]):
        draw.line([(0, 20 + 50 * k), (300, 180 - 40 * k)], fill=colour, width=3)
    return image


def test_a_plot_gets_smaller_and_looks_the_same():
    data = png(plot_like())
    out, how = optimise_png(data)
    assert len(out) < len(data) and how in {"palette", "lossless"}
    before = Image.open(io.BytesIO(data)).convert("RGB")
    after = Image.open(io.BytesIO(out)).convert("RGB")
    assert after.size == before.size
    worst = max(abs(a - b) for a, b in zip(before.tobytes(), after.tobytes()))
    assert worst <= 16


def anti_aliased_plot() -> Image.Image:
    """Lines drawn at 4x and scaled down, as matplotlib's anti-aliasing blends them into the
    background: hundreds of colours, most of them near one of four."""
    image = Image.new("RGB", (1200, 800), "white")
    draw = ImageDraw.Draw(image)
    for k, colour in enumerate(["#0072B2", "#D55E00", "#009E73"]):
        draw.line([(0, 80 + 200 * k), (1200, 720 - 160 * k)], fill=colour, width=9)
    return image.resize((300, 200), Image.Resampling.LANCZOS)


def test_a_plot_gets_the_fewest_colours_that_look_the_same():
    image = anti_aliased_plot()
    assert len(image.getcolors(10_000)) > 256, "not a figure a palette must approximate"
    out, how = optimise_png(png(image))
    small = Image.open(io.BytesIO(out))
    assert how == "palette" and len(small.getpalette()) // 3 < 256
    worst = max(abs(a - b) for a, b in zip(image.tobytes(), small.convert("RGB").tobytes()))
    assert worst <= PALETTE_MAX_DIFF
    full = image.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    full.save(buffer, format="PNG", optimize=True)
    assert len(out) < len(buffer.getvalue()), "fewer colours, and no smaller a file"


def test_a_folder_is_optimised_side_by_side_once(tmp_path):
    """optimise_folder: each new figure once (two files with the same bytes share one result),
    every file replaced by its result, and a second pass over the results does nothing."""
    images, cache = tmp_path / "_images", tmp_path / "cache"
    images.mkdir()
    figures = {"a.png": png(anti_aliased_plot()), "b.png": png(plot_like()), "c.png": png(anti_aliased_plot())}
    for name, data in figures.items():
        (images / name).write_bytes(data)
    stats = optimise_folder(images, cache, jobs=2)
    assert stats["files"] == 3 and stats["before"] == sum(map(len, figures.values()))
    assert len(list(cache.glob("*.png"))) == 2, "the two equal files were optimised twice"
    for name, data in figures.items():
        assert (images / name).read_bytes() == optimise_png(data)[0], f"{name} is not its optimised result"
    assert stats["after"] == sum(len((images / name).read_bytes()) for name in figures)
    assert optimise_folder(images, cache)["files"] == 0, "the optimised files were optimised again"


def test_a_smooth_gradient_is_not_quantized():
    image = Image.new("RGB", (256, 64))
    image.frombytes(bytes(v for y in range(64) for x in range(256) for v in (x, (x * 7) % 256, (x * 13 + y) % 256)))
    out, how = optimise_png(png(image))
    assert how != "palette"
    assert Image.open(io.BytesIO(out)).convert("RGB").tobytes() == image.tobytes()  # lossless


def test_images_get_their_size_and_all_but_the_first_are_lazy():
    html = '<p><img alt="a" src="_images/a.png" /></p><img alt="b" src="_images/b.png" /><img src="x.svg" width="5">'
    sizes = {"_images/a.png": (613, 498), "_images/b.png": (971, 331)}
    out = add_attributes(html, sizes.get)
    assert '<img alt="a" src="_images/a.png" width="613" height="498" loading="eager" decoding="async" />' in out
    assert '<img alt="b" src="_images/b.png" width="971" height="331" loading="lazy" decoding="async" />' in out
    assert '<img src="x.svg" width="5" loading="lazy" decoding="async">' in out


def test_trimmed_page_drops_search_scripts_and_the_import_hop():
    page = ('<head>\n<link href="../_static/styles/theme.css?digest=1" rel="stylesheet" />\n'
            '    <script src="../_static/searchtools.js"></script>\n'
            '    <script src="../_static/language_data.js"></script>\n'
            '    <script src="../searchindex.js"></script>\n</head>')
    out = trim_html(page)
    assert "searchtools" not in out and "searchindex" not in out and "language_data" not in out
    assert '<link href="../_static/basic.css" rel="stylesheet" />' in out
    assert '<link rel="icon" href="data:," />' in out


def test_glyph_ids_are_numbered_over_the_document():
    one = ('<mjx-container><svg><defs><path id="MJX-@@-TEX-I-1"/></defs>'
           '<use href="#MJX-@@-TEX-I-1"/></svg></mjx-container>')
    out = unique_ids(one + one.replace("@@", "5"))
    assert out.count('id="MJX-1-TEX-I-1"') == 1 and out.count('id="MJX-2-TEX-I-1"') == 1
    assert 'href="#MJX-1-TEX-I-1"' in out and 'href="#MJX-2-TEX-I-1"' in out


# --- one set of glyphs per page, one per formula in the deck -----------------------------------

SHAPES = {"TEX-I-1D465": "M1 1L2 2Z", "TEX-N-3D": "M3 3L4 4Z", "TEX-S3-28": "M5 5Q6 6 7 7Z", "TEX-LO-2211": "M8 8Z"}


def formula(*names: str, n: str = "@@") -> str:
    """A formula as MathJax's SVG output writes it: its own glyphs in <defs>, drawn by <use>."""
    defs = "".join(f'<path id="MJX-{n}-{name}" d="{SHAPES[name]}"></path>' for name in dict.fromkeys(names))
    uses = "".join(f'<use data-c="1" xlink:href="#MJX-{n}-{name}"></use>' for name in names)
    defs = f"<defs>{defs}</defs>" if defs else ""  # MathJax writes none for a formula without glyphs
    return (f'<mjx-container class="MathJax" jax="SVG"><svg viewBox="0 0 9 9" aria-hidden="true">{defs}'
            f'<g>{uses}</g></svg><mjx-assistive-mml><math></math></mjx-assistive-mml></mjx-container>')


def resorted(html: str) -> str:
    """HTML as bs4 writes it back (the theme's "On this page", the handout): attributes sorted."""
    html = re.sub(r'<svg class="([^"]+)" aria-hidden="true"', r'<svg aria-hidden="true" class="\1"', html)
    return re.sub(r'<path id="([^"]+)" d="([^"]*)">', r'<path d="\2" id="\1">', html)


def page(*formulas: str) -> str:
    return (f"<html><body><nav>{resorted(formulas[0])}</nav><article><p>{''.join(formulas)}</p></article>"
            "</body></html>")


def defined(html: str) -> list[str]:
    return re.findall(r'<path id="([^"]+)"', html)


def drawn(html: str) -> set[str]:
    return set(re.findall(r'href="#([^"]+)"', html))


glyph_lists = st.lists(st.lists(st.sampled_from(sorted(SHAPES)), max_size=5), min_size=1, max_size=6)


@given(glyph_lists)
def test_a_page_draws_every_glyph_from_one_set(formulas):
    shared = share_glyphs(page(*(formula(*names) for names in formulas)))
    used = {name for names in formulas for name in names}
    assert shared.count("<defs>") == (1 if used else 0) and "MJX-@@" not in shared
    assert sorted(defined(shared)) == sorted(f"MJX-{name}" for name in used)  # each glyph once
    assert drawn(shared) == {f"MJX-{name}" for name in used}
    if used:  # at the end of the article, hidden from screen readers
        assert re.search(r'<svg class="rec11-glyphs" aria-hidden="true"[^>]*><defs>.*</defs></svg></article>', shared)
    assert share_glyphs(shared) == shared


@given(glyph_lists, glyph_lists)
def test_pages_put_into_one_document_share_one_set(first, second):
    one = share_glyphs(page(*(formula(*names) for names in first)))
    two = resorted(share_glyphs(page(*(formula(*names) for names in second))))  # read and written by bs4
    both = share_glyphs(one.replace("</body></html>", "") + two.replace("<html><body>", ""))
    used = {name for names in first + second for name in names}
    assert sorted(defined(both)) == sorted(f"MJX-{name}" for name in used)  # one set: each glyph once
    assert drawn(both) <= set(defined(both)) and both.count("rec11-glyphs") == (1 if used else 0)


@given(glyph_lists)
def test_the_deck_gives_each_formula_its_own_glyphs_again(formulas):
    deck = own_glyphs(share_glyphs(page(*(formula(*names) for names in formulas))))
    containers = re.findall(r"<mjx-container\b.*?</mjx-container>", deck, re.S)
    assert len(containers) == len(formulas) + 1  # the first is also in the <nav>
    for container, names in zip(containers[1:], formulas):
        assert drawn(container) == set(defined(container))  # it draws only what it carries
        assert {re.sub(r"^MJX-\d+-", "", d) for d in defined(container)} == set(names)
    ids = defined(deck)
    assert len(ids) == len(set(ids)) and "rec11-glyphs" not in deck


def test_a_glyph_defined_two_ways_or_not_at_all_is_an_error():
    other = formula("TEX-N-3D", n="7").replace(SHAPES["TEX-N-3D"], "M0 0Z")
    with pytest.raises(GlyphError, match="TEX-N-3D has two shapes"):
        share_glyphs(page(formula("TEX-N-3D"), other))
    orphan = re.sub(r'<svg class="rec11-glyphs".*?</svg>', "", share_glyphs(page(formula("TEX-I-1D465"))))
    with pytest.raises(GlyphError, match="TEX-I-1D465"):
        share_glyphs(orphan)
    with pytest.raises(GlyphError, match="TEX-I-1D465"):
        own_glyphs(orphan)


# --- rec11_tools.loadwork: a trace's style work, with its causes ------------------------------


def _work(name: str, ts: int, ms: float, elements: int = 0, script: str = "") -> dict:
    begin = {"stackTrace": [{"functionName": "read", "url": f"http://h/_static/{script}?v=1"}]} if script else {}
    return {"name": name, "ph": "X", "ts": ts, "dur": int(ms * 1000),
            "args": {"elementCount": elements, "beginData": begin}}


def _cause(ts: int, attribute: str, node: str) -> dict:
    return {"name": "StyleInvalidatorInvalidationTracking", "ph": "I", "ts": ts,
            "args": {"data": {"changedAttribute": attribute, "nodeName": node}}}


def test_a_trace_names_what_caused_each_large_restyle_and_which_script_forced_work():
    from rec11_tools.loadwork import summarise

    events = [
        _work("UpdateLayoutTree", 50, 40.0, elements=3000),  # the first styling: nothing caused it
        _cause(10, "class", "DIV"),                           # (sorted by time: before the first)
        _cause(100, "data-theme", "HTML"),
        _cause(101, "data-theme", "HTML"),
        _work("UpdateLayoutTree", 200, 600.0, elements=4485),
        _cause(300, "hidden", "BUTTON"),
        _work("UpdateLayoutTree", 400, 5.0, elements=20, script="rec11-a11y.js"),  # small: not listed
        _work("Layout", 410, 30.0, script="rec11-a11y.js"),
        _work("Layout", 420, 2.0, script="rec11-a11y.js"),
        {"name": "LayoutInvalidationTracking", "ph": "I", "ts": 430, "args": {"data": {"reason": "Added"}}},
        _work("UpdateLayoutTree", 440, 50.0, elements=1500),  # caused by nothing the trace tracks
        {"name": "Paint", "ph": "X", "ts": 500, "dur": 9000, "args": {}},  # not style or layout
    ]
    found = summarise(events)
    assert [(r["elements"], r["causes"]) for r in found["restyles"]] == [
        (3000, [("class", "DIV", 1)]), (4485, [("data-theme", "HTML", 2)]), (1500, [])]
    assert found["forced"] == {"read@rec11-a11y.js": [3, 37.0]}
    assert found["total_ms"] == pytest.approx(727.0)
