// A new kernel's connection, checked by a probe of its own (connection.js).

import assert from "node:assert/strict";
import test from "node:test";

import { checkConnection, probeWebsocket } from "../../src/rec11_book/static/livecode/connection.js";
import { FakeKernel, fakeNetwork } from "./fakes.mjs";

const SETTINGS = { wsUrl: "ws://127.0.0.1:8888", token: "a b", appendToken: true };

function env(net, timing = {}) {
  return { WebSocket: net.WebSocket, setTimeout, clearTimeout,
           pause: () => new Promise((resolve) => setImmediate(resolve)),
           timing: { connect: 5000, ...timing } };
}

function session(net) {
  const s = { kernel: new FakeKernel(SETTINGS, net), shutDown: false,
              async shutdown() { s.shutDown = true; } };
  return s;
}

test("the probe goes to the kernel's channels, with the token when the server takes it in URLs", async () => {
  const net = fakeNetwork();
  const kernel = new FakeKernel(SETTINGS, net);
  assert.equal(await probeWebsocket(kernel, env(net)), true);
  const probe = new URL(net.sockets[0].url);
  assert.equal(probe.origin + probe.pathname, `ws://127.0.0.1:8888/api/kernels/${kernel.id}/channels`);
  assert.match(probe.searchParams.get("session_id"), /^rec11-probe-\w+$/);
  assert.match(probe.search, /&token=a%20b$/);
  kernel.serverSettings = { ...SETTINGS, appendToken: false };
  await probeWebsocket(kernel, env(net));
  assert.doesNotMatch(net.sockets[1].url, /token=/);
});

test("a probe that is never answered gives null after the wait", async () => {
  const net = fakeNetwork();
  net.ws = "silent";
  assert.equal(await probeWebsocket(new FakeKernel(SETTINGS, net), env(net, { connect: 10 })), null);
});

test("a probe refused once, then let through, is a connection (a busy server)", async () => {
  const net = fakeNetwork();
  net.ws = "refuse";
  const s = session(net);
  const WebSocket = net.WebSocket;
  let made = 0;
  const e = env(net);
  e.WebSocket = class extends WebSocket {
    constructor(url) {
      if (++made === 2) {   // the second probe: the server is ready now
        net.ws = "open";
        setImmediate(() => s.kernel.connection("connected"));
      }
      super(url);
    }
  };
  await checkConnection(s, e);
  assert.equal(made, 2);
  assert.equal(s.shutDown, false);
});

test("a probe refused twice is a refusal: the session is shut down", async () => {
  const net = fakeNetwork();
  net.ws = "refuse";
  const s = session(net);
  await assert.rejects(checkConnection(s, env(net), { hub: true }),
                       { kind: "websocket", message: /JUPYTERHUB_ALLOW_TOKEN_IN_URL=1/ });
  assert.ok(s.shutDown);
});
