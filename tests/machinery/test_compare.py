"""rec11.check.compare: any exercise's check, the student's function beside the right one."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rec11.check.compare import Case, compare


def cases():
    g = torch.Generator().manual_seed(0)
    return [Case(lambda: (torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0])), "2 values"),
            Case(lambda: (torch.randn(3, 5, generator=g, requires_grad=True), torch.randn(3, 5, generator=g)),
                 "a 3 x 5 batch")]


def right_mse(p, t):
    return ((p - t) ** 2).mean()


MISTAKES = {"sum": (lambda p, t: ((p - t) ** 2).sum(), "you add the squared errors up.")}


def check(fn):
    return compare(fn, right_mse, cases(), what="the mean squared error", mistakes=MISTAKES)


@pytest.mark.parametrize("fn", [right_mse, lambda p, t: torch.nn.functional.mse_loss(p, t),
                                lambda p, t: ((t - p) ** 2).mean(-1).mean(), lambda p, t: (p - t).pow(2).mean()])
def test_right_answers_written_differently_are_right(fn):
    verdict = check(fn)
    assert verdict.ok, verdict
    assert repr(verdict) == "Right: the mean squared error"


def test_a_listed_mistake_is_named_with_its_sentence():
    verdict = check(lambda p, t: ((p - t) ** 2).sum())
    assert not verdict.ok and verdict.mistakes == ["sum"]
    assert repr(verdict) == "Not yet: you add the squared errors up."


def test_an_unlisted_mistake_shows_the_first_case_that_differs_and_the_entry():
    verdict = check(lambda p, t: (p - t).abs().mean())
    assert verdict.mistakes == ["differs"]
    assert "on case 0 (2 values), first at []: expected 5, got 2" in repr(verdict)


def test_a_result_without_its_gradient_is_not_right():
    verdict = check(lambda p, t: ((p - t) ** 2).mean().detach())
    assert not verdict.ok
    assert "case 1 (a 3 x 5 batch)" in repr(verdict) and "no gradient flows back" in repr(verdict)


def test_a_wrong_gradient_with_the_right_value_is_not_right():
    def fn(p, t):
        value = ((p - t) ** 2).mean()
        return value.detach() + 0 * p.sum()  # the right number; a zero gradient
    verdict = check(fn)
    assert not verdict.ok and "the gradient reaching argument 0 differs" in repr(verdict)


def test_a_raising_function_and_a_leaked_grad_switch_are_named():
    assert "your function raised AttributeError" in repr(check(lambda p, t: p.no_such_method()))

    def leaks(p, t):
        torch.set_grad_enabled(False)
        return ((p - t) ** 2).mean()
    verdict = check(leaks)
    assert verdict.mistakes == ["grad"] and torch.is_grad_enabled()


def test_an_in_place_edit_does_not_reach_the_reference_or_the_caller():
    P, T = torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0])  # make() hands out the same tensors each time

    def edits(p, t):
        t += 1  # edits its input, then computes the right value from it
        return ((p - t + 1) ** 2).mean()
    verdict = compare(edits, right_mse, [Case(lambda: (P, T), "2 values")], what="the mean squared error")
    assert verdict.ok, verdict  # without a copy per call, the reference would see t + 1 and expect 2, not 5
    assert T.tolist() == [0.0, 0.0]


def test_no_cases_is_an_error_with_the_fix():
    with pytest.raises(ValueError, match="Fix: give at least one Case"):
        compare(right_mse, right_mse, [], what="x")


@settings(max_examples=40, deadline=None)
@given(st.floats(0.5, 2.0).filter(lambda c: abs(c - 1) > 1e-3), st.integers(-1, 1))
def test_a_scaled_or_shifted_answer_is_never_right(scale, shift):
    verdict = check(lambda p, t: ((p - t) ** 2).mean() * scale + shift * 0.01)
    assert not verdict.ok, (scale, shift)
