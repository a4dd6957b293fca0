/* Where the kernel comes from: a BinderHub, a Jupyter server, or the
 * reader's own server on a JupyterHub.
 *
 * On a hub the reader pastes an API token (kept in sessionStorage, for
 * this browser session only). The hub's API finds the reader's server and
 * starts it if needed. The hub answers a start request only once the
 * server is up, or after its slow_spawn_timeout (10 s by default), so the
 * page polls the hub meanwhile, counting the seconds and showing the
 * hub's own progress messages.
 *
 * What it needs from the browser comes in `env`: fetch, now() and
 * pause(ms), sessionStorage and prompt(text), timing (config.js). Tests
 * pass fakes (tests/js).
 */

import { TIMING, TOKEN_KEY, host, problem } from "./config.js";

// --- the reader's token ---------------------------------------------------

export function askToken(server, env) {
  const key = TOKEN_KEY + server.url;
  let token = env.sessionStorage.getItem(key);
  if (token) return token;
  const question = server.hub
    ? `Live code runs on the JupyterHub at ${host(server.url)}. Paste an ` +
      `API token from its Token page (${server.url}hub/token):`
    : `Live code runs on the Jupyter server at ${host(server.url)}. ` +
      "Paste its token:";
  token = (env.prompt(question) || "").trim();
  if (!token) {
    const where = server.hub
      ? ` (make one on its Token page, ${server.url}hub/token)` : "";
    throw problem("no-token", "no token was pasted. Live code needs one " +
                  `to run your code on ${host(server.url)}${where}`);
  }
  env.sessionStorage.setItem(key, token);
  return token;
}

export function forgetToken(url, env) {
  env.sessionStorage.removeItem(TOKEN_KEY + url);
}

// --- the hub's API ----------------------------------------------------------

export function hubClient(hub, token, env) {
  const timing = { ...TIMING, ...env.timing };
  const api = hub + "hub/api/";
  const auth = { Authorization: "token " + token };

  async function call(url, method = "GET") {
    let response;
    try {
      response = await env.fetch(url, { method, headers: auth });
    } catch (err) {
      throw problem("hub", `the hub did not answer (${err.message}). ` +
        "Check your connection; if it persists, the hub may be down or " +
        "may not accept requests from this site (CORS)");
    }
    if (response.status === 401 || response.status === 403) {
      throw problem("token", "the hub did not accept your token: it may " +
        "be mistyped, expired or revoked. Make a new one on the hub's " +
        "Token page and paste it");
    }
    return response;
  }

  async function json(url) {
    const response = await call(url);
    if (!response.ok) {
      throw problem("hub", `the hub answered ${response.status} to ${url}`);
    }
    return response.json();
  }

  // {name, server}: the reader, and their default server ({ready,
  // pending, url}) or null.
  async function reader() {
    const user = await json(api + "user");
    return { name: user.name, server: (user.servers || {})[""] || null };
  }

  const userUrl = (name) => api + "users/" + encodeURIComponent(name);

  // The hub's progress messages while a server starts: an event stream
  // (fetch, so that it can carry the token). Until the hub has registered
  // the start it answers 400: ask again. Returns a stop() function.
  function followProgress(name, show) {
    const controller = new AbortController();
    const signal = controller.signal;
    (async () => {
      while (!signal.aborted) {
        const response = await env.fetch(userUrl(name) + "/server/progress",
                                         { headers: auth, signal });
        if (!response.ok || !response.body) {
          await env.pause(timing.poll);
          continue;
        }
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) return;
          buffer += decoder.decode(chunk.value, { stream: true });
          const lines = buffer.split("\n");
          buffer = lines.pop();
          for (const line of lines) {
            if (!line.startsWith("data:")) continue;
            try {
              show(JSON.parse(line.slice(5)).message || "");
            } catch (e) { /* not JSON: ignore */ }
          }
        }
      }
    })().catch(() => {});   // aborted, or the stream broke: progress is extra
    return () => controller.abort();
  }

  // Ask the hub to start the server. Its answer may take a while: the
  // outcome is kept in `start` for the polling loop to read.
  function requestStart(name) {
    const start = { answered: false, error: null };
    call(userUrl(name) + "/server", "POST").then(async (response) => {
      // 400: already running or pending, which is what we want
      if (!response.ok && response.status !== 400) {
        let detail = "";
        try {
          detail = (await response.json()).message || "";
        } catch (e) { /* no JSON */ }
        start.error = problem("spawn", "the hub could not start your " +
          `server (${response.status}${detail ? ": " + detail : ""})`);
      }
      start.answered = true;
    }, (err) => {
      start.error = err;
    });
    return start;
  }

  // The URL of the reader's running server, starting it if needed.
  // onProgress({seconds, latest}) is called about once a second.
  async function serverUrl(onProgress) {
    let { name, server } = await reader();
    if (server && server.ready) return new URL(server.url, hub).href;
    const started = env.now();
    let latest = "";
    // a start the hub has already begun (a reload mid-spawn) is not asked
    // for again; a stopping server is started again
    const start = !server || !server.pending || server.pending === "stop"
      ? requestStart(name) : { answered: true, error: null };
    const stopProgress = followProgress(name, (m) => { latest = m; });
    const after = () => (latest ? ` (${latest})` : "");
    try {
      for (;;) {
        const seconds = Math.round((env.now() - started) / 1000);
        onProgress({ seconds, latest });
        ({ server } = await reader());
        if (server && server.ready) return new URL(server.url, hub).href;
        // checked after the look at the hub, which the answer may overtake
        if (start.error) throw start.error;
        if (start.answered && !(server && server.pending)) {
          throw problem("spawn",
            "your server on the hub stopped while it was starting" + after());
        }
        if (env.now() - started > timing.spawn) {
          throw problem("spawn", "your server on the hub did not start " +
                        `within ${timing.spawn / 60000} minutes` + after());
        }
        await env.pause(timing.poll);
      }
    } finally {
      stopProgress();
    }
  }

  return { reader, serverUrl };
}

// --- Thebe's options for the source ----------------------------------------

// {options, token, baseUrl}: the kernel-source part of Thebe's options,
// and (for a Jupyter server or hub) where it is and the token it takes.
export async function kernelSource(config, env, onProgress) {
  if (config.source === "binder") {
    return {
      options: {
        useBinder: true,
        binderOptions: config.binder,
        savedSessionOptions: { enabled: true },
      },
      token: null,
      baseUrl: null,
    };
  }
  const server = config.server;
  const token = server.token || askToken(server, env);
  let baseUrl = server.url;
  if (server.hub) {
    try {
      baseUrl = await hubClient(server.url, token, env).serverUrl(onProgress);
    } catch (err) {
      if (err.kind === "token") forgetToken(server.url, env);
      throw err;
    }
  }
  return {
    options: {
      useBinder: false,
      serverSettings: {
        baseUrl,
        wsUrl: baseUrl.replace(/^http/, "ws"),
        token,
        appendToken: true,
      },
    },
    token,
    baseUrl,
  };
}
