"""Explorable figures: one figure drawn for each value of a parameter.

A page shows how a result moves with a parameter (the temperature, a layer and a
head, the diffusion step, beta) by drawing the figure once for each value, when the
page runs. The reader then moves a slider and sees each frame at once, with no
kernel behind the page; only the choice of frame happens in the browser.

    def draw(temperature):
        ...                      # draw one frame with matplotlib
        return f"Bar chart: ..."  # its alt text, with this frame's numbers

    explore(draw, [0.5, 1, 2], label="Temperature",
            text=lambda t: f"temperature {t:g}", default=1)

``draw(value)`` draws on a new figure and returns the frame's alt text: what a
screen-reader user needs to know of that frame. ``text(value)`` says the value in
words for the control. The cell's output carries every frame (a JSON mime bundle
that ``rec11_book.extensions.explore`` turns into the slider) and the default frame as PNG and
SVG, which is what a notebook, a slide and the exported figure show.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field

MIME = "application/vnd.rec11.explore+json"


@dataclass
class Frame:
    value: object
    text: str  # the value in words: "temperature 0.5"
    alt: str  # what this frame shows
    png: bytes = field(repr=False)


@dataclass
class Explorable:
    """Every frame of one explorable figure; shown, it is the default frame."""

    label: str
    frames: list[Frame]
    default: int
    svg: str = field(repr=False)  # the default frame, for slides and figures/

    def frame(self, value) -> Frame:
        return next(f for f in self.frames if f.value == value)

    def _repr_mimebundle_(self, include=None, exclude=None):
        shown = self.frames[self.default]
        explore = {
            "label": self.label,
            "default": self.default,
            "frames": [{"text": f.text, "alt": f.alt,
                        "png": base64.b64encode(f.png).decode("ascii")}
                       for f in self.frames],
        }
        data = {
            MIME: explore,
            "image/png": base64.b64encode(shown.png).decode("ascii"),
            "image/svg+xml": self.svg,
            "text/plain": f"<{self.label}: {shown.text}; "
                          f"{len(self.frames)} frames>",
        }
        return data, {"rec11": {"explore": True}}


def _render(fig, fmt: str) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    return buffer.getvalue()


def explore(draw, values, *, label: str, text=str, default=None) -> Explorable:
    """Draw one frame per value; the result displays as an explorable figure.

    ``default`` is the value shown first, in print and in a notebook (the first value
    if not given). Every frame must come out the same size, so that the page does not
    move when the reader changes frame.
    """
    import matplotlib.pyplot as plt

    values = list(values)
    if not values:
        raise ValueError("explore() needs at least one value")
    default = values[0] if default is None else default
    if default not in values:
        raise ValueError(f"default {default!r} is not among the values {values!r}")
    frames, svg, size = [], "", None
    for value in values:
        alt = draw(value)
        fig = plt.gcf()
        if not isinstance(alt, str):
            plt.close(fig)
            raise TypeError(f"draw({value!r}) must return the frame's alt text, "
                            f"not {type(alt).__name__}")
        if size is None:
            size = tuple(fig.get_size_inches())
        elif tuple(fig.get_size_inches()) != size:
            plt.close(fig)
            raise ValueError(f"draw({value!r}) drew a {fig.get_size_inches()} inch "
                             f"figure; the first frame was {size}")
        frames.append(Frame(value, text(value), alt, _render(fig, "png")))
        if value == default:
            svg = _render(fig, "svg").decode("utf-8")
        plt.close(fig)
    return Explorable(label, frames, values.index(default), svg)
