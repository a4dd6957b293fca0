// Running a cell first runs the cells above it that have not run
// (run-order.js), in one queue.

import assert from "node:assert/strict";
import test from "node:test";

import { createRunOrder } from "../../src/rec11_book/static/livecode/run-order.js";
import { fakeNetwork, fakeThebe, tick } from "./fakes.mjs";

function setup(sources, { connected = true } = {}) {
  const thebe = fakeThebe(sources, fakeNetwork());
  const notebook = thebe.notebook;
  const session = { kernel: { id: "kernel-a" } };
  notebook.attachSession(session);
  const infos = sources.map((s) => ({ init: s.startsWith("#init"), raises: s.includes("# raises") }));
  const said = [];
  let settled = 0;
  const order = createRunOrder(notebook, infos, {
    busy: thebe.busy,
    idle: thebe.idle,
    canRun: () => connected,
    tell: (text) => said.push(text),
    settle: () => settled++,
  });
  return { thebe, notebook, infos, order, said, settled: () => settled,
           run: (i, code) => notebook.cells[i].execute(code) };
}

test("running cell 3 first runs cells 1 and 2, in order, then cell 3", async () => {
  const page = setup(["a = 1", "b = a + 1", "print(b)", "c = 3"]);
  await page.run(2);
  assert.deepEqual(page.thebe.ran(), [0, 1, 2]);
  assert.equal(page.said.length, 1);
  assert.match(page.said[0], /running 2 earlier cells first/);
  assert.equal(page.settled(), 1, "the status line is put back afterwards");
  assert.equal(page.thebe.busyCells.size, 0, "no run button left busy");

  await page.run(3);            // cells 1-3 have run: only cell 4 runs
  assert.deepEqual(page.thebe.ran(), [0, 1, 2, 3]);
  await page.run(1, "b = 10");  // a cell that ran runs again, with the reader's code
  assert.deepEqual(page.thebe.runs.at(-1), { cell: 1, kernel: "kernel-a", code: "b = 10" });
  assert.deepEqual(page.order.ran(), [0, 1, 2, 3]);
});

test("an earlier cell that raises stops the run and the cell says why", async () => {
  const page = setup(["a = 1", "raise ValueError('x')", "print(a)"]);
  const result = await page.run(2);
  assert.deepEqual(page.thebe.ran(), [0, 1]);
  assert.deepEqual(result, { error: ["Traceback"] });
  const note = page.notebook.cells[2].outputs[0];
  assert.equal(note.name, "stderr");
  assert.match(note.text, /an earlier cell raised an error \(the one starting "raise ValueError\('x'\)"\)/);
  assert.deepEqual(page.order.ran(), [0], "a cell that raised has not run: it runs again next time");
  await page.run(2);
  assert.deepEqual(page.thebe.ran(), [0, 1, 1]);
});

test("a cell that raises on purpose (raises-exception) counts as run", async () => {
  const page = setup(["a = 1", "raise ValueError('shown') # raises", "print(a)"]);
  await page.run(2);
  assert.deepEqual(page.thebe.ran(), [0, 1, 2]);
});

test("runs wait in one queue: two cells never run at once", async () => {
  const page = setup(["a = 1", "b = 2", "c = 3"]);
  await Promise.all([page.run(2), page.run(0), page.run(1)]);
  assert.deepEqual(page.thebe.ran(), [0, 1, 2, 0, 1]);
});

test("the set-up cells run first, alone", async () => {
  const page = setup(["#init\nsetup()", "a = 1", "#init\nmore()", "b = 2"]);
  await page.order.runInit();
  assert.deepEqual(page.thebe.ran(), [0, 2]);
  await page.run(3);
  assert.deepEqual(page.thebe.ran(), [0, 2, 1, 3]);
});

test("a new kernel: nothing has run in it, and runs queued for the old one are dropped", async () => {
  const page = setup(["a = 1", "b = 2", "c = 3"]);
  await page.run(2);
  const queued = page.run(1);   // waits behind nothing, but reset comes first
  page.order.reset();
  assert.equal(await queued, null);
  assert.deepEqual(page.order.ran(), []);
  await page.run(1);
  assert.deepEqual(page.thebe.ran(), [0, 1, 2, 0, 1]);
});

test("a restarted kernel forgets what ran, so the cells above run again", async () => {
  const page = setup(["a = 1", "b = 2"]);
  await page.run(1);
  page.order.forget();
  await page.run(1);
  assert.deepEqual(page.thebe.ran(), [0, 1, 0, 1]);
});

test("with no kernel, a cell says so instead of waiting", async () => {
  const page = setup(["a = 1"], { connected: false });
  assert.equal(await page.run(0), null);
  await tick();
  assert.deepEqual(page.thebe.ran(), []);
  assert.match(page.notebook.cells[0].outputs[0].text, /not connected to a kernel/);
});
