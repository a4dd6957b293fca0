// Where the kernel comes from (server.js): the token prompt, the hub's
// answers, its progress stream.

import assert from "node:assert/strict";
import test from "node:test";

import { askToken, hubClient, kernelSource } from "../../src/rec11_book/static/livecode/server.js";
import { FakeStorage, SERVER_CONFIG, fakeClock, fakeHub } from "./fakes.mjs";

function env(hub, answers = []) {
  const clock = fakeClock();
  return { fetch: hub.fetch, now: clock.now, pause: clock.pause, sessionStorage: new FakeStorage(),
           prompt: () => answers.shift(), clock };
}

test("a token is asked for once a browser session, trimmed", () => {
  const e = env(fakeHub(), ["  abc \n"]);
  const server = { url: "http://127.0.0.1:8888/", hub: false };
  assert.equal(askToken(server, e), "abc");
  assert.equal(askToken(server, e), "abc", "kept: not asked again");
  assert.deepEqual(e.sessionStorage.keys(), ["rec11-live-code-token:http://127.0.0.1:8888/"]);
});

test("a token written in _config.yml is used as it is", async () => {
  const e = env(fakeHub());
  e.prompt = () => assert.fail("asked for a token the page has");
  const source = await kernelSource(SERVER_CONFIG, e);
  assert.equal(source.token, "secret");
  assert.equal(source.options.serverSettings.wsUrl, "ws://127.0.0.1:8888/");
});

test("a hub that cannot start the server says why, with its message", async () => {
  const hub = fakeHub({ tokens: { t: "ada" } });
  const fetch = hub.fetch;
  hub.fetch = async (url, options = {}) => (options.method === "POST"
    ? new Response(JSON.stringify({ message: "Quota exceeded" }), { status: 429 })
    : fetch(url, options));
  await assert.rejects(hubClient(hub.url, "t", env(hub)).serverUrl(() => {}),
                       { kind: "spawn", message: "the hub could not start your server (429: Quota exceeded)" });
});

test("a hub that answers with an error is named with the status", async () => {
  const hub = fakeHub({ tokens: { t: "ada" } });
  hub.fetch = async () => new Response("oops", { status: 502 });
  await assert.rejects(hubClient(hub.url, "t", env(hub)).reader(),
                       { kind: "hub", message: "the hub answered 502 to http://hub.test/hub/api/user" });
});

test("progress messages split across chunks are read whole; other lines are skipped", async () => {
  const hub = fakeHub({ tokens: { t: "ada" }, spawnPolls: 4 });
  const fetch = hub.fetch;
  const parts = ['data: {"message": "Server req', 'uested"}\n\n: keep-alive\n\n',
                 "data: not json\n\n", 'data: {"progress": 50, "message": "Pulling image"}\n\n'];
  hub.fetch = async (url, options) => {
    if (!url.endsWith("/progress")) return fetch(url, options);
    const stream = new ReadableStream({
      start(controller) {
        for (const p of parts) controller.enqueue(new TextEncoder().encode(p));
        controller.close();
      },
    });
    return new Response(stream, { status: 200 });
  };
  const seen = [];
  const url = await hubClient(hub.url, "t", env(hub)).serverUrl((p) => seen.push(p.latest));
  assert.equal(url, "http://hub.test/user/ada/");
  assert.ok(seen.includes("Pulling image"), seen);
  assert.ok(!seen.some((m) => m.includes("json") || m.includes("keep")), seen);
});

test("a running server is found without starting anything", async () => {
  const hub = fakeHub({ tokens: { t: "ada" } });
  hub.start("ada");
  const progress = [];
  const url = await hubClient(hub.url, "t", env(hub)).serverUrl((p) => progress.push(p));
  assert.equal(url, "http://hub.test/user/ada/");
  assert.deepEqual(progress, []);
  assert.deepEqual(hub.calls, ["GET http://hub.test/hub/api/user"]);
});
