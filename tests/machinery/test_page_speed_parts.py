"""The page-speed parts that need no build: PNG optimisation, <img> attributes, trimmed pages."""

import io

from PIL import Image, ImageDraw

from rec11_book.extensions.images import add_attributes, optimise_png
from rec11_book.extensions.trim import trim_html
from rec11_book.shared.pages import unique_ids


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
