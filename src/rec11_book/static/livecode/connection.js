/* A new kernel's connection, checked before the page says "ready".
 *
 * A browser cannot tell why a websocket was refused (a 403 looks like any
 * other failure), and Thebe's kernel would retry in silence for minutes.
 * So the page opens a websocket of its own to the kernel (a probe): a
 * refused probe is reported within seconds, naming the likely cause.
 *
 * env: WebSocket, setTimeout, clearTimeout, pause(ms), timing (config.js).
 */

import { TIMING, problem } from "./config.js";

// true: the probe opened; false: it was refused or closed; null: no
// answer within timing.connect.
export function probeWebsocket(kernel, env) {
  const timing = { ...TIMING, ...env.timing };
  const s = kernel.serverSettings;
  const session = "rec11-probe-" + Math.random().toString(36).slice(2);
  let url = s.wsUrl.replace(/\/?$/, "/") + "api/kernels/" +
    encodeURIComponent(kernel.id) + "/channels?session_id=" + session;
  if (s.appendToken && s.token) url += "&token=" + encodeURIComponent(s.token);
  return new Promise((resolve) => {
    let ws;
    try {
      ws = new env.WebSocket(url);
    } catch (e) {   // a URL the browser will not even try
      resolve(false);
      return;
    }
    let done = false;
    const finish = (ok) => {
      if (done) return;
      done = true;
      env.clearTimeout(timer);
      try {
        ws.close();
      } catch (e) { /* already closed */ }
      resolve(ok);
    };
    const timer = env.setTimeout(() => finish(null), timing.connect);
    ws.onopen = () => finish(true);
    ws.onerror = () => finish(false);
    ws.onclose = () => finish(false);
  });
}

// Whether Thebe's own connection to the kernel opens within `ms`. The
// promise's cancel() stops waiting (it resolves false).
export function waitConnected(kernel, ms, env) {
  let cancel = () => {};
  const promise = new Promise((resolve) => {
    if (kernel.connectionStatus === "connected") {
      resolve(true);
      return;
    }
    const finish = (ok) => {
      env.clearTimeout(timer);
      kernel.connectionStatusChanged.disconnect(on);
      resolve(ok);
    };
    const on = (_, status) => {
      if (status === "connected") finish(true);
    };
    const timer = env.setTimeout(() => finish(false), ms);
    kernel.connectionStatusChanged.connect(on);
    cancel = () => finish(false);
  });
  promise.cancel = () => cancel();
  return promise;
}

export function refusedMessage(hub) {
  const base = "the server refused the connection to your kernel (its " +
    "WebSocket), so no cell can run";
  if (hub) {
    return base + ". This hub does not accept API tokens on kernel " +
      "connections. Tell your instructor: the hub's admins must set " +
      "JUPYTERHUB_ALLOW_TOKEN_IN_URL=1 for user servers (see the book's " +
      "hub guide)";
  }
  return base + ". The server must allow this site's origin " +
    "(allow_origin) and accept the token";
}

// Resolves once the kernel is connected; otherwise shuts the session
// down (it is of no use to anyone) and throws a "websocket" problem.
export async function checkConnection(session, env, { hub = false } = {}) {
  const timing = { ...TIMING, ...env.timing };
  const kernel = session.kernel;
  const probe = probeWebsocket(kernel, env);
  const connected = waitConnected(kernel, timing.connect, env);
  const outcome = async () => ((await connected) ? "connected" : "timeout");
  let first = await Promise.race([
    outcome(),
    probe.then((ok) => (ok === false ? "refused" : null)),
  ]);
  if (first === null) first = await outcome();   // the probe opened first
  if (first === "refused") {
    // A busy server can refuse a probe for a moment while it sets the
    // kernel up; a real refusal (a 403) meets a second probe too.
    await env.pause(timing.reprobe);
    const again = kernel.connectionStatus === "connected"
      ? true : await probeWebsocket(kernel, env);
    if (again === true) first = "connected";
    else if (again === null) first = await outcome();
  }
  if (first === "connected") return;
  connected.cancel();
  session.shutdown().catch(() => {});
  if (first === "refused") throw problem("websocket", refusedMessage(hub));
  throw problem("websocket", "the connection to your kernel did not open " +
    `within ${timing.connect / 1000} s. Check your connection and try again`);
}
