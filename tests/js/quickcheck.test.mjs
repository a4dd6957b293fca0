// What a student types into a quick check (static/rec11-quickcheck.js): the ways of writing a
// right answer that students use, accepted; wrong answers, however they are written, not.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import test from "node:test";

const require = createRequire(import.meta.url);
const { accepts } = require("../../src/rec11_book/static/rec11-quickcheck.js");

test("a shape, however it is typed", () => {
  for (const typed of ["(2, 3, 5, 4)", "[2 3 5 4]", "2 3 5 4", "2x3x5x4", "2 × 3 × 5 × 4", "(2,3,5,4,)",
    "torch.Size([2, 3, 5, 4])", "Size([2, 3, 5, 4])", "2,3,5,4"]) {
    assert.ok(accepts("text", "(2, 3, 5, 4)", undefined, typed), typed);
  }
  for (const wrong of ["(2, 3, 4, 5)", "2354", "(2, 3, 5)", "[2 3 5 4 1]"]) {
    assert.ok(!accepts("text", "(2, 3, 5, 4)", undefined, wrong), wrong);
  }
});

test("a symbolic shape, as the hint writes it", () => {
  for (const typed of ["(N, H, T, d/H)", "N,H,T,d/H", "(n, h, t, d / h)", "[N H T d/H]"]) {
    assert.ok(accepts("text", "(N, H, T, d/H)", undefined, typed), typed);
  }
  assert.ok(!accepts("text", "(N, H, T, d/H)", undefined, "(N, T, H, d/H)"));
});

test("text keeps working as before: case, spaces and brackets aside", () => {
  assert.ok(accepts("text", "dim=-1", undefined, "dim = -1"));
  assert.ok(accepts("text", "dim=-1", undefined, "DIM=−1"));
  assert.ok(!accepts("text", "dim=-1", undefined, "dim=0"));
});

test("a number with a unit, a times sign, a separator or a percent sign", () => {
  assert.ok(accepts("number", "8", undefined, "8x"));
  assert.ok(accepts("number", "8", undefined, "×8"));
  assert.ok(accepts("number", "6", undefined, "6 bits"));
  assert.ok(accepts("number", "6400", undefined, "6,400"));
  assert.ok(accepts("number", "0.731", undefined, "73.1%"));  // a share, typed as a percentage
  assert.ok(accepts("number", "73.1", undefined, "73.1%"));   // a percentage, typed as one
  assert.ok(accepts("number", "0.75", undefined, "3/4"));
  assert.ok(accepts("number", "-0.5", undefined, "−0.5"));
  for (const wrong of ["64", "6 400 000", "9x", "7.3%", "abc", ""]) {
    assert.ok(!accepts("number", "8", undefined, wrong), wrong);
  }
  assert.ok(!accepts("number", "6400", undefined, "64,00"), "not a thousands separator");
});

test("the tolerance: 1 % of the answer unless the page gives one", () => {
  assert.ok(accepts("number", "100", undefined, "100.9"));
  assert.ok(!accepts("number", "100", undefined, "101.5"));
  assert.ok(accepts("number", "100", "2", "101.5"));
  assert.ok(!accepts("number", "100", "0", "100.5"));
});

test("a choice is the choice", () => {
  assert.ok(accepts("choice", "b", undefined, "b"));
  assert.ok(!accepts("choice", "b", undefined, "a"));
});
