// Live Code from the click to a ready kernel, on a fake JupyterHub, a fake
// Jupyter server and Binder (session.js with server.js, connection.js and
// run-order.js): what the reader sees at each turn, and the button that
// takes them on.

import assert from "node:assert/strict";
import test from "node:test";

import { SERVER_CONFIG, fakeHub, livePage, until } from "./fakes.mjs";
import { sessionPath } from "../../src/rec11_book/static/livecode/session.js";

const ada = () => fakeHub({ tokens: { good: "ada" } });

test("a reader pastes a token; their server is up; the set-up cells run; ready", async () => {
  const hub = ada();
  hub.start("ada");
  const page = livePage({ hub, answers: ["good"] });
  await page.press();
  assert.equal(page.view.state, "ready");
  assert.equal(page.asked.length, 1);
  assert.ok(page.asked[0].includes("JupyterHub at hub.test. Paste an API token from its Token " +
                                   "page (http://hub.test/hub/token)"), page.asked[0]);
  assert.deepEqual(page.sessionStorage.keys(), ["rec11-live-code-token:http://hub.test/"]);
  assert.deepEqual(page.thebe.options.serverSettings, {
    baseUrl: "http://hub.test/user/ada/", wsUrl: "ws://hub.test/user/ada/", token: "good",
    appendToken: true });
  assert.deepEqual(page.thebe.ran(), [0], "the set-up cell ran");
  assert.match(page.ui.last, /^Live code is ready: a python3 kernel on the JupyterHub at hub\.test\./);
  for (const mark of ["click", "editor", "kernel", "ready", "became ready"]) {
    assert.ok(mark in page.view.timings, mark);
  }
  // the probe carried the token, to the kernel's channels
  const probe = new URL(page.net.sockets[0].url);
  assert.equal(probe.origin + probe.pathname,
               `ws://hub.test/user/ada/api/kernels/${page.thebe.kernel().id}/channels`);
  assert.match(probe.searchParams.get("session_id"), /^rec11-probe-\w+$/);
  assert.equal(probe.searchParams.get("token"), "good");
  assert.ok(page.net.sockets[0].closed);
});

test("a token the hub refuses: it says so, forgets it, and takes another", async () => {
  const hub = ada();
  const page = livePage({ hub, answers: ["typo", "good"] });
  await page.press();
  assert.equal(page.view.state, "failed");
  assert.equal(page.view.problem, "token");
  assert.match(page.ui.last, /did not accept your token: it may be mistyped, expired or revoked/);
  assert.deepEqual(page.sessionStorage.keys(), [], "a refused token is not kept");

  await page.ui.press("Paste a new token");
  assert.equal(page.view.state, "ready", page.ui.last);
  assert.equal(page.asked.length, 2);
  assert.equal(page.thebe.loaded, 2, "Thebe's loader was asked again (it skips a loaded Thebe)");
});

test("no token pasted: it says where to make one, and asks again on the button", async () => {
  const hub = ada();
  hub.start("ada");
  const page = livePage({ hub, answers: ["", "good"] });
  await page.press();
  assert.deepEqual([page.view.state, page.view.problem], ["failed", "no-token"]);
  assert.match(page.ui.last, /no token was pasted\. .*make one on its Token page, http:\/\/hub\.test\/hub\/token/);
  assert.deepEqual(page.hub.calls, [], "nothing was asked of the hub without a token");
  await page.ui.press("Paste a token");
  assert.equal(page.view.state, "ready");
});

test("a slow spawn: the seconds and the hub's progress are shown until the server is up", async () => {
  const hub = fakeHub({ tokens: { good: "ada" }, spawnPolls: 6,
                        progress: ["Server requested", "Spawning server..."] });
  const page = livePage({ hub, answers: ["good"] });
  await page.press();
  assert.equal(page.view.state, "ready", page.ui.last);
  const progress = page.ui.lines.filter((l) => l.includes("starting your server on hub.test"));
  const seconds = progress.map((l) => Number(l.match(/… (\d+) s/)[1]));
  assert.deepEqual(seconds, [0, 1, 2, 3, 4, 5], "one line a second while it starts");
  assert.ok(progress.every((l) => l.includes("A first start can take a minute or two")));
  assert.ok(progress.some((l) => l.includes("(Spawning server...)")), progress.join("\n"));
  assert.equal(hub.calls.filter((c) => c.startsWith("POST")).length, 1, "one start asked for");
});

test("a spawn already under way (a reload mid-spawn) is followed, not asked for again", async () => {
  const hub = fakeHub({ tokens: { good: "ada" }, spawnPolls: 3 });
  hub.servers.ada = { ready: false, pending: "spawn", url: "/user/ada/", polls: 3 };
  const page = livePage({ hub, answers: ["good"] });
  await page.press();
  assert.equal(page.view.state, "ready");
  assert.equal(hub.calls.filter((c) => c.startsWith("POST")).length, 0);
});

test("a spawn that never finishes times out with a message and a way to try again", async () => {
  const hub = fakeHub({ tokens: { good: "ada" }, spawnPolls: Infinity });
  const page = livePage({ hub, answers: ["good"], timing: { spawn: 120000 } });
  await page.press();
  assert.deepEqual([page.view.state, page.view.problem], ["failed", "spawn"]);
  assert.match(page.view.error, /did not start within 2 minutes \(Spawning server\.\.\.\)/);
  assert.match(page.ui.last, /^Live code could not start on the JupyterHub at hub\.test: your server/);
  assert.deepEqual(page.ui.actions.map(([label]) => label), ["Try again"]);
  // the page counted up to the limit (on the fake clock) and stopped asking
  assert.ok(page.clock.t > 120000 && page.clock.t < 123000, page.clock.t);
});

test("a server that stops while it starts is reported at once", async () => {
  const hub = fakeHub({ tokens: { good: "ada" }, spawnPolls: Infinity });
  const page = livePage({ hub, answers: ["good"] });
  const started = page.press();
  await until(() => page.ui.lines.some((l) => l.includes("starting your server")));
  hub.stop("ada");
  await started;
  assert.deepEqual([page.view.state, page.view.problem], ["failed", "spawn"]);
  assert.match(page.view.error, /stopped while it was starting/);
});

test("a hub that does not answer is named, with CORS as a likely cause", async () => {
  const page = livePage({ config: { ...SERVER_CONFIG, server: { url: "http://elsewhere.test/",
                                                              token: "t", hub: true } } });
  await page.press();
  assert.deepEqual([page.view.state, page.view.problem], ["failed", "hub"]);
  assert.match(page.view.error, /the hub did not answer \(Failed to fetch\).*\(CORS\)/);
});

test("a refused websocket is reported within seconds, naming the hub's setting", async () => {
  const hub = ada();
  hub.start("ada");
  const page = livePage({ hub, answers: ["good"] });
  page.net.ws = "refuse";
  const t0 = performance.now();
  await page.press();
  assert.ok(performance.now() - t0 < 1000, "no waiting for Thebe's own retries");
  assert.deepEqual([page.view.state, page.view.problem], ["failed", "websocket"]);
  for (const words of ["refused the connection to your kernel", "Tell your instructor",
                       "JUPYTERHUB_ALLOW_TOKEN_IN_URL=1"]) {
    assert.ok(page.ui.last.includes(words), page.ui.last);
  }
  assert.equal(page.net.sockets.length, 2, "a refusal is met twice before it is believed");
  assert.ok(page.thebe.sessions[0].shutDown, "the kernel nobody can use is shut down");
  assert.deepEqual(page.ui.actions.map(([label]) => label), ["Try again"]);

  page.net.ws = "open";   // the admins fixed it
  await page.ui.press("Try again");
  assert.equal(page.view.state, "ready");
});

test("on a plain Jupyter server a refusal names allow_origin and the token", async () => {
  const page = livePage({ config: SERVER_CONFIG });
  page.net.ws = "refuse";
  await page.press();
  assert.equal(page.view.problem, "websocket");
  assert.match(page.ui.last, /must allow this site's origin \(allow_origin\) and accept the token/);
  assert.deepEqual(page.asked, [], "a token in _config.yml is not asked for");
});

test("a connection that never answers times out", async () => {
  const page = livePage({ config: SERVER_CONFIG, timing: { connect: 30 } });
  page.net.ws = "silent";
  await page.press();
  assert.equal(page.view.problem, "websocket");
  assert.match(page.view.error, /did not open within 0\.03 s/);
});

test("a server stopped mid-session: the page says so; 'Start it again' starts it and a new kernel", async () => {
  const hub = ada();
  hub.start("ada");
  const page = livePage({ hub, answers: ["good"] });
  await page.press();
  const cells = page.thebe.notebook.cells;
  await cells[2].execute();
  assert.deepEqual(page.thebe.ran(), [0, 1, 2]);

  hub.stop("ada");                                   // what the idle culler does
  page.thebe.kernel().connection("disconnected");
  await until(() => page.view.state === "stopped", "the stop to be noticed");
  assert.equal(page.view.problem, "stopped");
  assert.match(page.ui.last, /your server on hub\.test has stopped/);
  assert.match(page.ui.last, /your edits are kept/);

  // running a cell now says why nothing happens
  assert.equal(await cells[2].execute(), null);
  assert.match(cells[2].outputs[0].text, /not connected to a kernel/);

  await page.ui.press("Start it again");
  assert.equal(page.view.state, "ready", page.ui.last);
  assert.ok(hub.servers.ada && hub.servers.ada.ready, "the server was started again");
  assert.equal(page.thebe.sessions.length, 2, "a new kernel");
  assert.ok(page.thebe.sessions[0].disposed, "the old session let go");
  // each kernel's session has a path of its own, in the notebook's folder: a server
  // hands a new session the kernel of one at the same path, dying or not
  const paths = page.thebe.sessions.map((s) => s.kernelOptions.path);
  for (const path of paths) assert.match(path, /^book\/page\.live-[0-9a-z]{6}\.ipynb$/);
  assert.notEqual(paths[0], paths[1]);
  assert.equal(page.thebe.sessions[1].kernelOptions.kernelName, "python3");
  assert.equal(page.thebe.replaced, 0, "same server URL and token: the same Thebe server");
  assert.equal(page.asked.length, 1, "the token kept for the session is used again");

  // nothing has run in the new kernel: cell 3 runs the cells above first
  const before = page.thebe.runs.length;
  await cells[2].execute();
  const kernel = page.thebe.kernel().id;
  assert.deepEqual(page.thebe.runs.slice(before).map((r) => [r.cell, r.kernel]),
                   [[1, kernel], [2, kernel]], "the set-up cell ran at start; then 2, then 3");
});

test("a second press of 'Start it again' while it starts does nothing", async () => {
  const hub = ada();
  hub.start("ada");
  const page = livePage({ hub, answers: ["good"] });
  await page.press();
  hub.stop("ada");
  page.thebe.kernel().connection("disconnected");
  await until(() => page.view.state === "stopped");
  const first = page.ui.press("Start it again");
  const second = page.ui.press("Start it again");   // the button is still on screen
  assert.equal(second, first);
  await first;
  assert.equal(page.thebe.sessions.length, 2);
});

test("a token revoked mid-session: 'Paste a new token' connects Thebe again with it", async () => {
  const hub = fakeHub({ tokens: { good: "ada", fresh: "ada" } });
  hub.start("ada");
  const page = livePage({ hub, answers: ["good", "fresh"] });
  await page.press();
  delete hub.tokens.good;                            // revoked on the hub's Token page
  page.thebe.kernel().connection("disconnected");
  await until(() => page.view.state === "failed");
  assert.equal(page.view.problem, "token");
  assert.match(page.ui.last, /did not accept your token/);

  await page.ui.press("Paste a new token");
  assert.equal(page.view.state, "ready", page.ui.last);
  assert.equal(page.asked.length, 2);
  assert.equal(page.thebe.replaced, 1, "a new Thebe server connection, with the new token");
  assert.equal(page.thebe.server().config.serverSettings.token, "fresh");
  assert.equal(page.thebe.sessions.length, 2);
});

test("a kernel that dies: the page says so and offers a new one", async () => {
  const page = livePage({ config: SERVER_CONFIG });
  await page.press();
  page.thebe.kernel().setStatus("dead");
  assert.deepEqual([page.view.state, page.view.problem], ["lost", "kernel"]);
  assert.match(page.ui.last, /your kernel stopped \(it may have run out of memory\)/);
  await page.ui.press("Start a new kernel");
  assert.equal(page.view.state, "ready");
});

test("a kernel restarted after running out of memory: cells above run again", async () => {
  const page = livePage({ config: SERVER_CONFIG });
  await page.press();
  const cells = page.thebe.notebook.cells;
  await cells[2].execute();
  page.thebe.kernel().setStatus("autorestarting");
  assert.match(page.ui.last, /was restarted .* what the cells had computed is gone/);
  assert.equal(page.view.state, "ready");
  const before = page.thebe.runs.length;
  await cells[2].execute();
  assert.deepEqual(page.thebe.runs.slice(before).map((r) => r.cell), [0, 1, 2]);
});

test("a connection that drops and comes back within the grace stays ready", async () => {
  const page = livePage({ config: SERVER_CONFIG });
  await page.press();
  const kernel = page.thebe.kernel();
  kernel.connection("connecting");
  kernel.connection("connected");
  await new Promise((resolve) => setTimeout(resolve, 40));   // past lostGrace
  assert.equal(page.view.state, "ready");
});

test("a connection lost on a plain server: 'lost', then back on its own", async () => {
  const page = livePage({ config: SERVER_CONFIG });
  await page.press();
  const kernel = page.thebe.kernel();
  kernel.connection("connecting");
  await until(() => page.view.state === "lost", "the grace to run out");
  assert.equal(page.view.problem, "lost");
  assert.match(page.ui.last, /was lost; trying to reconnect …/);
  kernel.connection("connected");
  assert.equal(page.view.state, "ready");
  assert.match(page.ui.last, /^Live code is ready/);
});

test("a connection the browser gives up on offers a new kernel", async () => {
  const page = livePage({ config: SERVER_CONFIG });
  await page.press();
  page.thebe.kernel().connection("disconnected");
  await until(() => page.view.state === "lost");
  assert.match(page.ui.last, /was lost\. Check your network connection/);
  await page.ui.press("Reconnect (new kernel)");
  assert.equal(page.view.state, "ready");
  assert.equal(page.thebe.sessions.length, 2);
});

test("a kernel that dies while the set-up cells run is not called ready", async () => {
  const page = livePage({ config: SERVER_CONFIG, sources: ["#init\nslow()", "x = 1"] });
  const original = page.thebe.notebook.cells[0].execute;
  page.thebe.notebook.cells[0].execute = async (code) => {
    page.thebe.kernel().setStatus("dead");
    return original(code);
  };
  await page.press();
  assert.deepEqual([page.view.state, page.view.problem], ["lost", "kernel"]);
  assert.match(page.ui.last, /your kernel stopped/);
});

test("Binder: the repository and branch are named; Thebe gets the BinderHub's options", async () => {
  const binder = { binderUrl: "https://mybinder.org", repo: "cpsy1291/recitation-11",
                   ref: "main", repoProvider: "github" };
  const page = livePage({ config: { ...SERVER_CONFIG, source: "binder", label: "mybinder.org",
                                    server: undefined, binder } });
  await page.press();
  assert.equal(page.view.state, "ready");
  assert.deepEqual(page.thebe.options.binderOptions, binder);
  assert.equal(page.thebe.options.useBinder, true);
  assert.ok(page.ui.lines.includes(
    "Live code: starting a kernel on mybinder.org (cpsy1291/recitation-11, main) …"));
  assert.deepEqual(page.asked, []);
  page.live.leave();
  assert.deepEqual(page.hub.calls, [], "Binder's kernels are Binder's to cull");
});

test("the set-up cells and trained models are mentioned only where they are", async () => {
  const plain = livePage({ config: SERVER_CONFIG, sources: ["x = 1"] });
  await plain.press();
  assert.ok(!plain.ui.lines.some((l) => l.includes("set-up cells")));
  assert.doesNotMatch(plain.ui.last, /trains its own copy/);
  const trained = livePage({ config: { ...SERVER_CONFIG, trainedModels: true } });
  await trained.press();
  assert.match(trained.ui.last, /Your kernel trains its own copy of this page's models/);
});

test("leaving the page shuts its kernel down (keepalive), on a server", async () => {
  const hub = ada();
  hub.start("ada");
  const page = livePage({ hub, answers: ["good"] });
  page.live.leave();   // nothing started: nothing to do
  assert.equal(hub.calls.length, 0);
  await page.press();
  page.live.leave();
  assert.equal(hub.calls.at(-1), "DELETE http://hub.test/user/ada/api/sessions/session-1");
});

test("a session's path keeps the notebook's folder and ends in .ipynb", () => {
  const fixed = () => 0.5;   // "0.i" in base 36
  assert.equal(sessionPath("book/further/vae.ipynb", fixed), "book/further/vae.live-i00000.ipynb");
  assert.equal(sessionPath("index.ipynb", fixed), "index.live-i00000.ipynb");
  assert.equal(sessionPath("book/page", fixed), "book/page.live-i00000.ipynb");
});
