"""One plot style for every figure in the book, and the per-page set-up.

Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
deficiencies); every line series also gets its own marker and dash, so a figure
still reads when printed in grayscale. Heat maps use ``cividis``, whose lightness
rises monotonically, so the order of values survives grayscale too.

Figures are sized for a phone. A phone shows a figure about 342 CSS px wide, so a
figure W inches wide is shrunk by 342 / (W * dpi) and its text of f points ends up
f * 342 / (72 * W) px tall, whatever the dpi. At the default width of 5 inches,
10-point text shows at 9.5 px; nothing in a figure may be smaller than 9 px there
(``rec11_tools.figtext`` measures it). A wider figure needs larger text, and a
math subscript is drawn at 70 % of its label's size.
"""

from __future__ import annotations

import random

import numpy as np

from rec11.seeds import shifted

OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
DASHES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1)), (0, (1, 1)), (0, (8, 2))]
HEATMAP = "cividis"
WIDTH = 5.0  # inches: 10-point text shows at 9.5 CSS px on a phone (see above)
DPI = 120  # 600 px: sharp on a phone's dense screen, text at body size on a laptop


def rc_params() -> dict:
    from cycler import cycler

    return {
        "figure.figsize": (WIDTH, 3.2),
        "figure.dpi": DPI,
        "savefig.dpi": DPI,
        "figure.constrained_layout.use": True,
        "font.size": 10,  # the smallest size a figure may use at WIDTH
        "axes.titlesize": 10,
        "axes.labelsize": 10,
        "xtick.labelsize": 10,
        "ytick.labelsize": 10,
        "legend.fontsize": 10,
        "legend.title_fontsize": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "image.cmap": HEATMAP,
        "lines.linewidth": 2,
        "lines.markersize": 5,
        "axes.prop_cycle": cycler(color=OKABE_ITO) + cycler(marker=MARKERS) + cycler(linestyle=DASHES),
        "svg.fonttype": "none",  # text stays text in the SVG export: smaller and selectable
    }


def use() -> None:
    """Apply the book's matplotlib style."""
    import matplotlib as mpl

    mpl.rcParams.update(rc_params())


def setup_page(seed: int = 0, threads: int | None = None) -> None:
    """Everything a page needs before its first cell: style, seeds, determinism.

    Every page calls this once, so two builds print the same numbers. Torch gets
    ``threads`` intra-op threads: default ``$REC11_THREADS``, else 1. The book's models
    are tiny, so a second thread buys little, and on a busy 2-core machine (the
    build's Sphinx process, another job, OpenMP threads spin-waiting) two threads
    ran these models 5 to 10 times slower than one. One thread is also what a
    student's Binder kernel effectively gets. (Training a model on a cache miss uses
    two threads: see ``rec11.cache``.)

    Determinism is switched on by torch's private call, the course code's one: the public
    function also sets ``torch._inductor.config.deterministic``, which imports torch's
    compiler, one to two seconds before a kernel's first cell on every page, for a flag no
    page reads (nothing here compiles). Training code, which builds an optimiser and so
    imports the compiler anyway, calls the public function.

    Relies on: ``torch._C._set_deterministic_algorithms(mode)``, the call that
    ``torch.use_deterministic_algorithms`` makes after setting the compiler's flag.
    Package: torch. Checked against: 2.13.0.
    Public alternative: ``torch.use_deterministic_algorithms(True)`` (``warn_only=True`` too
    imports the compiler), a second or two slower to start each page's kernel.
    """
    import os

    import torch

    use()
    try:  # in a kernel, export both formats: PNG for the page, SVG for slides
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png", "svg")
    except ImportError:  # plain Python: nothing to configure
        pass
    seed = shifted(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    # What torch.use_deterministic_algorithms(True) does, minus its other job: setting
    # torch.compile's flag, which imports the compiler and costs every kernel a second
    # before its first cell. Nothing in the book compiles. (Training code, which builds
    # an optimiser and so imports the compiler anyway, calls the public function.)
    torch._C._set_deterministic_algorithms(True)
    torch.set_num_threads(threads or int(os.environ.get("REC11_THREADS", "1")))
