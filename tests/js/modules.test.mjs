// The modules that touch the page (main.js, start.js, cells.js, status.js)
// are run by the browser tests; here, at least, every module loads and
// every name it imports exists (a typo would otherwise show only in a
// browser), and the entry point publishes what the page and tests use.

import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import test from "node:test";

const DIR = new URL("../../src/rec11_book/static/livecode/", import.meta.url);

test("every module loads, with every name it imports", async () => {
  const modules = readdirSync(DIR).filter((f) => f.endsWith(".js") && f !== "main.js");
  assert.ok(modules.length >= 10, modules);
  for (const name of modules) await import(new URL(name, DIR));
});

test("the entry point publishes window.rec11LiveCode and initThebe(), and waits for the click", async () => {
  const attributes = {};
  globalThis.window = globalThis;
  globalThis.document = {
    documentElement: { setAttribute: (k, v) => { attributes[k] = v; } },
  };
  try {
    await import(new URL("main.js", DIR));
    assert.equal(typeof window.initThebe, "function");
    assert.deepEqual({ ...window.rec11LiveCode, timings: { ...window.rec11LiveCode.timings } },
                     { state: "idle", problem: null, error: null, timings: {}, started: null });
    assert.deepEqual(attributes, {}, "nothing happens before the click");
  } finally {
    delete globalThis.window;
    delete globalThis.document;
  }
});
