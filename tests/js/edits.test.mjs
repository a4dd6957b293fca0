// A reader's edits in localStorage (edits.js): kept across a reload and a
// new kernel, put back per cell or for the whole page, dropped when a new
// build changes the page's code.

import assert from "node:assert/strict";
import test from "node:test";

import { EDITS_KEY } from "../../src/rec11_book/static/livecode/config.js";
import { editStore, hash } from "../../src/rec11_book/static/livecode/edits.js";
import { FakeStorage, fakeHub, livePage, until } from "./fakes.mjs";

const PAGE = "/book/attention.html";
const BOOK = ["import torch", "x = torch.ones(2)", "print(x)"];

test("an edit is kept, and comes back after a reload", () => {
  const storage = new FakeStorage();
  const first = editStore(storage, PAGE, BOOK);
  assert.deepEqual(first.restored, {});
  first.set(1, "x = torch.zeros(2)");
  assert.deepEqual(storage.keys(), [EDITS_KEY + PAGE + ":" + hash(BOOK.join("\u0000"))]);

  const again = editStore(storage, PAGE, BOOK);   // the page reloaded
  assert.deepEqual(again.restored, { 1: "x = torch.zeros(2)" });
  assert.ok(again.has(1) && !again.has(0) && again.count() === 1);
});

test("an edit typed back to the book's code is no edit", () => {
  const storage = new FakeStorage();
  const store = editStore(storage, PAGE, BOOK);
  store.set(2, "print(x, x)");
  store.set(2, BOOK[2]);
  assert.equal(store.count(), 0);
  assert.deepEqual(storage.keys(), [], "nothing left in storage");
});

test("reset puts one cell back; the page's reset puts every cell back", () => {
  const storage = new FakeStorage();
  const store = editStore(storage, PAGE, BOOK);
  store.set(0, "import numpy");
  store.set(1, "x = 1");
  store.set(2, "print(x + 1)");
  assert.equal(store.reset(1), BOOK[1], "reset gives the book's code back");
  assert.deepEqual(editStore(storage, PAGE, BOOK).restored, { 0: "import numpy", 2: "print(x + 1)" });

  assert.deepEqual(store.resetAll(), [0, 2], "the cells whose editors change back");
  assert.equal(store.count(), 0);
  assert.deepEqual(storage.keys(), []);
  assert.deepEqual(editStore(storage, PAGE, BOOK).restored, {});
});

test("a build that changes the page's code drops the old version's edits", () => {
  const storage = new FakeStorage();
  editStore(storage, PAGE, BOOK).set(1, "x = 'mine'");
  editStore(storage, "/book/vae.html", ["z = 1"]).set(0, "z = 2");   // another page
  const newBuild = [...BOOK.slice(0, 2), "print(x)  # changed"];
  const store = editStore(storage, PAGE, newBuild);
  assert.deepEqual(store.restored, {});
  assert.equal(storage.keys().filter((k) => k.includes(PAGE)).length, 0);
  assert.equal(storage.keys().length, 1, "another page's edits are its own");
});

test("unreadable or odd saved edits are ignored, not brought back", () => {
  const key = EDITS_KEY + PAGE + ":" + hash(BOOK.join("\u0000"));
  assert.deepEqual(editStore(new FakeStorage({ [key]: "{not json" }), PAGE, BOOK).restored, {});
  const odd = JSON.stringify({ 0: BOOK[0], 1: 42, 7: "no such cell", 2: "print(1)" });
  assert.deepEqual(editStore(new FakeStorage({ [key]: odd }), PAGE, BOOK).restored, { 2: "print(1)" });
});

test("where the browser forbids storage, edits last for the visit", () => {
  const store = editStore(null, PAGE, BOOK);
  store.set(0, "import numpy");
  assert.ok(store.has(0));
  assert.deepEqual(store.resetAll(), [0]);
});

test("a full storage loses no edit of this visit", () => {
  const storage = new FakeStorage();
  storage.setItem = () => { throw new Error("QuotaExceededError"); };
  const store = editStore(storage, PAGE, BOOK);
  store.set(0, "import numpy");
  assert.ok(store.has(0));
});

test("edits are kept when the hub stops the server and a new kernel starts, and after a reload", async () => {
  const storage = new FakeStorage();
  const hub = fakeHub({ tokens: { t: "ada" } });
  const page = livePage({ hub, answers: ["t"], storage });
  await page.press();
  page.ui.edits.set(1, "y = 'mine'");          // the reader edits a cell
  hub.stop("ada");                              // the idle culler
  page.thebe.kernel().connection("disconnected");
  await until(() => page.view.state === "stopped", "the stop to be noticed");
  await page.ui.press("Start it again");
  assert.equal(page.view.state, "ready");
  assert.ok(page.ui.edits.has(1), "the edit is still there");
  assert.doesNotMatch(page.ui.last, /from your last visit/);

  const reload = livePage({ hub, answers: ["t"], storage });
  await reload.press();
  assert.deepEqual(reload.ui.edits.restored, { 1: "y = 'mine'" });
  assert.match(reload.ui.last, /Your edits to 1 cell from your last visit are back/);
  reload.ui.edits.resetAll();
  reload.ui.onResetAll();
  assert.match(reload.ui.last, /Every cell shows the book's code again/);
  assert.deepEqual(storage.keys(), []);
});
