// The one table of states and moves (state.js).

import assert from "node:assert/strict";
import test from "node:test";

import { TRANSITIONS, createMachine } from "../../src/rec11_book/static/livecode/state.js";

const STATES = ["idle", "loading", "starting", "ready", "lost", "stopped", "failed"];

test("every move leads to a state in the table, and every state is reached", () => {
  assert.deepEqual(Object.keys(TRANSITIONS).sort(), [...STATES].sort());
  const reached = new Set(["idle"]);
  for (const moves of Object.values(TRANSITIONS)) {
    for (const next of Object.values(moves)) {
      assert.ok(STATES.includes(next), `${next} is not a state`);
      reached.add(next);
    }
  }
  assert.deepEqual([...reached].sort(), [...STATES].sort());
});

test("every state but idle can be left again without a reload", () => {
  for (const state of STATES) {
    assert.ok(Object.keys(TRANSITIONS[state]).length > 0, `${state} is a dead end`);
  }
  for (const state of ["failed", "stopped", "lost"]) {
    assert.equal(TRANSITIONS[state].retry, "starting", `no "try again" from ${state}`);
  }
});

test("a move the table does not list is refused and changes nothing", () => {
  const changes = [];
  const m = createMachine({ now: () => 7, onChange: (name) => changes.push(name) });
  assert.equal(m.transition("up"), false);          // ready before anything started
  assert.equal(m.view.state, "idle");
  assert.equal(m.transition("click"), true);
  assert.equal(m.transition("click"), false);       // a second press: one start
  assert.equal(m.transition("found"), true);
  assert.equal(m.transition("retry"), false);       // "Try again" while starting
  assert.deepEqual(changes, ["loading", "starting"]);
  assert.equal(m.view.state, "starting");
});

test("a move records its problem and the time the state was entered", () => {
  let t = 0;
  const m = createMachine({ now: () => ++t });
  m.transition("click");
  m.transition("fail", "token");
  assert.deepEqual(
    { state: m.view.state, problem: m.view.problem, timings: m.view.timings },
    { state: "failed", problem: "token", timings: { "became loading": 1, "became failed": 2 } });
  m.transition("reload");
  assert.equal(m.view.problem, null, "a new start forgets the old problem");
  assert.ok(m.is("loading") && m.is("ready", "loading") && !m.is("ready"));
});

test("a late answer about an old connection cannot undo a new start", () => {
  const m = createMachine({ now: () => 0 });
  for (const event of ["click", "found", "up", "stop", "retry"]) assert.ok(m.transition(event), event);
  // the reader pressed "Start it again"; the check of the old, dropped
  // connection comes back now
  assert.equal(m.transition("dropped", "lost"), false);
  assert.equal(m.transition("stop", "stopped"), false);
  assert.equal(m.view.state, "starting");
});
