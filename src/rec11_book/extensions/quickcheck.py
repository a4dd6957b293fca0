"""``{quick-check}``: a short answer a student checks in the page, with no kernel.

    :::{quick-check} What shape does `split_heads` return for N = 2, T = 5, d = 12, H = 3?
    :answer: (2, 3, 5, 4)
    Heads go next to the batch; each gets d/H features.
    :::

    :::{quick-check} A row of scores is all -inf. What does the softmax give?
    :choices: zeros | NaN | a uniform row
    :answer: NaN
    :::

The argument is the prompt (inline markup allowed). ``:answer:`` is what is accepted:
a number (within ``:tolerance:``, default 1 % of it), a choice (with ``:choices:``,
separated by ``|``) or text, compared without spaces, brackets, quotes or case, so
``(2,3,5,4)`` and ``torch.Size([2, 3, 5, 4])`` both match ``(2, 3, 5, 4)``.
``:answer-glue: key`` takes the answer from a value the page glued instead, so the
answer is the run's. The body, if any, is a hint shown after a wrong answer.

In the page it is a native form: a labelled text box or a group of radio buttons in a
fieldset, a Check button (added by ``static/rec11-quickcheck.js``, so that without
JavaScript nothing pretends to work) and a status line that screen readers announce.
In print only the prompt and an empty answer line show. The notebook download gets the
prompt and the answer in a collapsed ``<details>`` (``rec11_book.shared.plainmd``).

A quick check without a prompt or an answer, an answer that is not one of the choices,
or an ``:answer-glue:`` key the page does not glue fails the build with the page's file
and line. Sphinx-side: imports no torch and no model code.
"""

from __future__ import annotations

import html
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from rec11_book.compat.myst_nb import glue_data
from rec11_book.shared.quickmarkup import LABEL, parse

# --- the Sphinx side ---------------------------------------------------------------------


class quick_check(nodes.General, nodes.Element):
    """The form; attributes ``kind``, ``answer``, ``tolerance``, ``ident``."""


class quick_check_prompt(nodes.TextElement):
    pass


class quick_check_choice(nodes.TextElement):
    """One radio button's label; attribute ``value``."""


class quick_check_hint(nodes.General, nodes.Element):
    pass


class QuickCheckDirective(SphinxDirective):
    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict] = {"answer": directives.unchanged, "answer-glue": directives.unchanged,
                                   "choices": directives.unchanged, "tolerance": directives.unchanged}

    def run(self):
        try:
            check = parse(self.arguments[0], self.options, "\n".join(self.content),
                          lambda key: glue_data(self.state.document, key))
        except ValueError as err:
            raise self.error(str(err)) from None
        ident = f"quick-check-{self.env.new_serialno('quick-check')}"
        node = quick_check(kind=check.kind, answer=check.answer, ident=ident,
                           tolerance="" if check.tolerance is None else repr(check.tolerance))
        self.set_source_info(node)
        prompt = quick_check_prompt(ident=ident, kind=check.kind)
        prompt += self.parse_inline(check.prompt, lineno=self.lineno)[0]
        node += prompt
        for n, choice in enumerate(check.choices):
            item = quick_check_choice(value=choice, ident=f"{ident}-{n}", name=ident,
                                      last=n == len(check.choices) - 1)
            item += self.parse_inline(choice, lineno=self.lineno)[0]
            node += item
        if self.content:
            hint = quick_check_hint()
            self.state.nested_parse(self.content, self.content_offset, hint)
            node += hint
        return [node]


def visit_form(self, node):
    attrs = {"class": "quick-check", "data-kind": node["kind"], "data-answer": node["answer"],
             "novalidate": "novalidate"}
    if node["tolerance"]:
        attrs["data-tolerance"] = node["tolerance"]
    self.body.append("<form " + " ".join(f'{k}="{html.escape(v)}"' for k, v in attrs.items()) + ">\n")


def depart_form(self, node):
    self.body.append('<button type="button" class="quick-check-button" hidden>Check</button>\n'
                     f'<p class="quick-check-feedback" id="{node["ident"]}-feedback" role="status"></p>\n'
                     "</form>\n")


def visit_prompt(self, node):
    if node["kind"] == "choice":
        self.body.append(f'<fieldset>\n<legend class="quick-check-prompt"><span class="quick-check-label">'
                         f"{LABEL}</span> ")
    else:
        self.body.append(f'<p class="quick-check-prompt" id="{node["ident"]}-prompt">'
                         f'<span class="quick-check-label">{LABEL}</span> ')


def depart_prompt(self, node):
    if node["kind"] == "choice":
        self.body.append("</legend>\n")
        return
    ident = node["ident"]
    mode = "decimal" if node["kind"] == "number" else "text"
    self.body.append(f'</p>\n<label class="quick-check-answer-label" for="{ident}-input">Your answer</label>\n'
                     f'<input class="quick-check-input" id="{ident}-input" type="text" inputmode="{mode}" '
                     f'autocomplete="off" spellcheck="false" aria-describedby="{ident}-prompt {ident}-feedback">\n')


def visit_choice(self, node):
    self.body.append(f'<label class="quick-check-choice" for="{node["ident"]}"><input type="radio" '
                     f'id="{node["ident"]}" name="{node["name"]}" value="{html.escape(node["value"])}"> ')


def depart_choice(self, node):
    self.body.append("</label>\n" + ("</fieldset>\n" if node["last"] else ""))


def visit_hint(self, node):
    self.body.append('<div class="quick-check-hint" hidden>\n')


def depart_hint(self, node):
    self.body.append("</div>\n")


def _plain(self, node):  # other builders: the prompt and the choices as text
    pass


def setup(app: Sphinx) -> dict:
    app.setup_extension("rec11_book.extensions.assets")  # serves static/rec11-quickcheck.js
    fallback = dict.fromkeys(("latex", "text", "man", "texinfo"), (_plain, _plain))
    app.add_node(quick_check, html=(visit_form, depart_form), **fallback)
    app.add_node(quick_check_prompt, html=(visit_prompt, depart_prompt), **fallback)
    app.add_node(quick_check_choice, html=(visit_choice, depart_choice), **fallback)
    app.add_node(quick_check_hint, html=(visit_hint, depart_hint), **fallback)
    app.add_directive("quick-check", QuickCheckDirective)
    app.add_js_file("rec11-quickcheck.js", defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
