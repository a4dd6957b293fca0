"""{quick-check}: a student answers in the page, by keyboard or by touch, with no kernel.

On a 390 px phone: every quick check of the Exercises page takes a wrong answer (says
"Not yet" and shows its hint) and then the right one (says "Right"), the text boxes by
keyboard, the choices by touch. axe finds nothing with the feedback shown. Without
JavaScript and in print, each prompt stays and no control pretends to work.
"""

from __future__ import annotations

import pytest
from browser_support import open_page, run_axe

pytestmark = pytest.mark.browser

PAGE = "book/exercises"
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


@pytest.fixture
def phone(browser, context):
    ctx = browser.new_context(**PHONE)
    ctx.route("**/*", context.off_site)  # the same off-site guard as every browser test
    yield ctx
    ctx.close()


def forms(page) -> list[dict]:
    return page.eval_on_selector_all("form.quick-check", """forms => forms.map((f, i) => ({
        i, kind: f.dataset.kind, answer: f.dataset.answer,
        choices: [...f.querySelectorAll('input[type=radio]')].map(r => r.value)}))""")


def wrong_answer(form: dict) -> str:
    if form["kind"] == "choice":
        return next(c for c in form["choices"] if c != form["answer"])
    if form["kind"] == "number":
        return str(float(form["answer"]) * 3 + 1)
    return form["answer"] + "9"


def radio(box, form: dict, value: str):
    return box.locator("input[type=radio]").nth(form["choices"].index(value))


def feedback(page, form) -> str:
    return page.locator("form.quick-check").nth(form["i"]).locator(".quick-check-feedback").inner_text()


def test_every_quick_check_answers_by_keyboard_and_touch(phone, site):
    page = open_page(phone, site, PAGE)
    found = forms(page)
    assert len(found) >= 7, f"{PAGE}: {len(found)} quick checks, expected one per exercise at least"
    for form in found:
        box = page.locator("form.quick-check").nth(form["i"])
        box.scroll_into_view_if_needed()
        button = box.locator(".quick-check-button")
        assert button.is_visible(), f"quick check {form['i']}: no Check button"
        if form["kind"] == "choice":
            radio(box, form, wrong_answer(form)).tap()
            button.tap()
            assert feedback(page, form).startswith("Not yet"), form
            radio(box, form, form["answer"]).tap()
            button.tap()
        else:
            field = box.locator(".quick-check-input")
            field.focus()
            page.keyboard.type(wrong_answer(form))
            page.keyboard.press("Enter")
            assert feedback(page, form).startswith("Not yet"), form
            assert field.get_attribute("aria-invalid") == "true"
            field.fill("")
            page.keyboard.type(form["answer"])
            page.keyboard.press("Enter")
        assert feedback(page, form) == "Right.", f"quick check {form['i']} refused its own answer {form['answer']!r}"
        if box.locator(".quick-check-hint").count():
            assert not box.locator(".quick-check-hint").is_visible(), "the hint stays up after a right answer"


def test_a_choice_can_be_made_with_arrow_keys_and_space(phone, site):
    page = open_page(phone, site, PAGE)
    form = next(f for f in forms(page) if f["kind"] == "choice")
    box = page.locator("form.quick-check").nth(form["i"])
    box.locator("input[type=radio]").first.focus()
    for _ in range(form["choices"].index(form["answer"])):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")  # out of the radio group, to the button
    assert page.evaluate("document.activeElement.className") == "quick-check-button"
    page.keyboard.press("Space")
    assert feedback(page, form) == "Right."


def test_shapes_are_accepted_as_students_write_them(phone, site):
    page = open_page(phone, site, PAGE)
    form = next(f for f in forms(page) if f["answer"].startswith("("))
    box = page.locator("form.quick-check").nth(form["i"])
    numbers = form["answer"].strip("()").replace(" ", "")
    for written in (f"torch.Size([{numbers}])", numbers, f"[{numbers.replace(',', ', ')}]"):
        box.locator(".quick-check-input").fill(written)
        box.locator(".quick-check-button").click()
        assert feedback(page, form) == "Right.", written


def test_axe_finds_nothing_with_feedback_and_hints_shown(phone, site):
    page = open_page(phone, site, PAGE)
    for form in forms(page):
        box = page.locator("form.quick-check").nth(form["i"])
        if form["kind"] == "choice":
            radio(box, form, wrong_answer(form)).check()
        else:
            box.locator(".quick-check-input").fill(wrong_answer(form))
        box.locator(".quick-check-button").click()
    assert page.locator(".quick-check-hint:visible").count() > 0
    violations = run_axe(page)
    assert not violations, [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in violations]


def test_without_javascript_and_in_print_the_prompts_stay_and_no_control_pretends(browser, site):
    ctx = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    try:
        page = ctx.new_page()
        page.goto(f"{site}{PAGE}.html")
        assert page.locator(".quick-check-prompt:visible").count() == page.locator("form.quick-check").count()
        assert page.locator(".quick-check-button:visible").count() == 0, "a Check button that does nothing"
    finally:
        ctx.close()
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(f"{site}{PAGE}.html")
        page.emulate_media(media="print")
        assert page.locator(".quick-check-prompt:visible").count() == page.locator("form.quick-check").count()
        assert page.locator(".quick-check-button:visible, .quick-check-feedback:visible").count() == 0
    finally:
        ctx.close()

