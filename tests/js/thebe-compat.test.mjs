// thebe-compat.js is the one module that touches Thebe's globals. Here: each
// of its reliances holds in the pinned Thebe (node_modules/thebe, the version
// package-lock.json locks, the bundle the site serves), and the module calls
// and replaces the globals as its comments say.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";

import { replaceServer, setSession, thebeGlobals } from "../../src/rec11_book/static/livecode/thebe-compat.js";

const ROOT = new URL("../../", import.meta.url);
const read = (path) => readFileSync(new URL(path, ROOT), "utf8");
const COMPAT = read("src/rec11_book/static/livecode/thebe-compat.js");

function checkedAgainst() {
  const versions = [...COMPAT.matchAll(/Package: thebe\. Checked against: ([\w.-]+)\./g)].map((m) => m[1]);
  assert.ok(versions.length >= 3, "every export of thebe-compat.js names the Thebe it was checked against");
  return [...new Set(versions)];
}

test("the pinned Thebe is the version thebe-compat.js was checked against", () => {
  const locked = JSON.parse(read("package-lock.json")).packages["node_modules/thebe"].version;
  const installed = JSON.parse(read("node_modules/thebe/package.json")).version;
  assert.equal(installed, locked, "node_modules/thebe is not the locked version: npm ci");
  assert.deepEqual(checkedAgainst(), [locked],
                   `package-lock.json locks thebe ${locked}: check each reliance in ` +
                   "src/rec11_book/static/livecode/thebe-compat.js against it (this test's probes), " +
                   "then write the version there and run python -m rec11_book.compat --write");
});

test("probe: the bundle the site serves sets the globals thebe-compat.js uses", () => {
  const bundle = read("node_modules/thebe/lib/index.js");
  const missing = [
    "window.thebe=Object.assign(",      // setupGlobals(): the thebe module's exports, spread
    "events:", "on:",                    // ... with the events and on()
    "window.thebe.server=",              // bootstrap() keeps its server there
    "window.thebe.session=",             // ... and its session
    "thebeCore=Object.assign(",          // setupThebeCore()
    "api:{makeConfiguration:",           // window.thebeCore.api
    "connectToJupyter:",
  ].filter((needle) => !bundle.includes(needle));
  assert.deepEqual(missing, [], "Thebe's bundle no longer has these: see thebe-compat.js");
});

test("probe: Thebe's own sources and types declare what the globals hold", () => {
  const index = read("node_modules/thebe/src/index.ts");
  assert.match(index, /window\.thebe = Object\.assign\(window\.thebe \?\? \{\}, \{[^}]*\.\.\.thebe,[^}]*events,/s,
               "setupGlobals() no longer spreads the thebe module's exports into window.thebe");
  const render = read("node_modules/thebe/lib/types/render.d.ts");
  for (const name of ["setButtonsBusy", "clearButtonsBusy"]) {
    assert.match(render, new RegExp(`export declare function ${name}\\(id: string\\)`), name);
  }
  assert.match(read("node_modules/thebe/lib/types/thebe.d.ts"), /export declare function bootstrap\(/);
  const types = read("node_modules/thebe/lib/types/types.d.ts");
  for (const member of ["bootstrap:", "server?:", "session?:", "events:", "on:"]) {
    assert.ok(types.includes(member), `ThebeGlobal.${member}`);
  }
  const core = read("node_modules/thebe-core/dist/types/thebe/entrypoint.d.ts");
  for (const member of ["api: JsApi", "makeConfiguration:", "connectToJupyter:"]) {
    assert.ok(core.includes(member), `thebe-core's global: ${member}`);
  }
});

function fakeWindow() {
  const calls = [];
  const events = { name: "events" };
  const win = {
    thebe: {
      bootstrap: (options) => { calls.push(["bootstrap", options]); return "booted"; },
      on: (name, fn) => calls.push(["on", name, fn]),
      setButtonsBusy: (id) => calls.push(["busy", id]),
      clearButtonsBusy: (id) => calls.push(["idle", id]),
      events,
      server: { dispose: () => calls.push(["dispose old"]) },
    },
    thebeCore: {
      api: {
        makeConfiguration: (options, ev) => ({ options, events: ev }),
        connectToJupyter: (config) => ({ config, dispose() {} }),
      },
    },
  };
  return { win, calls, events };
}

test("thebeGlobals reads the globals when it is called, not before Thebe has loaded", () => {
  const win = {};
  const thebe = thebeGlobals(win);
  assert.equal(thebe.loaded(), false);
  const { win: loaded, calls } = fakeWindow();
  win.thebe = loaded.thebe;
  assert.equal(thebe.loaded(), true);
  assert.equal(thebe.bootstrap({ a: 1 }), "booted");
  const listener = () => {};
  thebe.onStatus(listener);
  thebe.busy("c1");
  thebe.idle("c1");
  assert.deepEqual(calls, [["bootstrap", { a: 1 }], ["on", "status", listener], ["busy", "c1"], ["idle", "c1"]]);
  assert.equal(thebe.server(), loaded.thebe.server);
});

test("replaceServer and setSession put the new ones where Thebe looks for them", () => {
  const { win, calls, events } = fakeWindow();
  replaceServer(win, { serverSettings: { baseUrl: "http://x/" } });
  assert.deepEqual(win.thebe.server.config, { options: { serverSettings: { baseUrl: "http://x/" } }, events });
  assert.deepEqual(calls, [["dispose old"]]);
  win.thebe.server = undefined;
  replaceServer(win, {});  // no old server to dispose of: no error
  setSession(win, "session-1");
  assert.equal(win.thebe.session, "session-1");
});
