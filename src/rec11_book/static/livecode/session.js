/* Live Code's course, from the click to a ready kernel, and every way on
 * from there: a kernel that dies, a connection that drops, a server the
 * hub stopped, a token it refused. Each ends in a sentence under the page
 * title, with a button when there is something to press; the buttons
 * start a new kernel without reloading the page.
 *
 * The state moves only through the table in state.js. This module does
 * not touch the page or the browser: all of it comes in `env`, which
 * start.js fills from the browser and tests/js fill with fakes:
 *
 *   machine   state.js's machine
 *   config    the page's settings (config.js)
 *   ui        say(text, actions), markCells(), labelEditors(cells),
 *             installEdits(notebook, cells, onResetAll)
 *   thebe     load(), bootstrap(options), server(), replaceServer(options),
 *             onStatus(fn), setSession(session), busy(id), idle(id)
 *   fetch, WebSocket, setTimeout, clearTimeout, now(), pause(ms),
 *   sessionStorage, prompt(text), log(...), timing (config.js)
 */

import { TIMING, host, isHub, where } from "./config.js";
import { forgetToken, hubClient, kernelSource } from "./server.js";
import { checkConnection } from "./connection.js";
import { createRunOrder } from "./run-order.js";

// On a page with trained models: the reader's kernel trains (or loads)
// its own.
const OTHER_WEIGHTS = "Your kernel trains its own copy of this page's " +
  "models, or loads one trained on another machine; training rounds " +
  "differently on another CPU, so your numbers can differ slightly from " +
  "the page's. What the page says about them holds for any such training.";

const ABOVE_AGAIN = "cells above the one you run will run again first.";

// A Jupyter server gives a new session the kernel of any session it holds
// at the same path. A page reloaded (or open in two tabs) would then share
// one kernel, and get a dying one while the reload's "leave" still shuts
// it down. So each kernel asks for a path of its own, in the notebook's
// folder (the kernel's working folder): book/page.ipynb becomes
// book/page.live-k3j9x2.ipynb.
export function sessionPath(notebook, random = Math.random) {
  const tag = random().toString(36).slice(2, 8).padEnd(6, "0");
  return notebook.replace(/(\.ipynb)?$/, `.live-${tag}.ipynb`);
}

export function createLiveCode(env) {
  const { machine, config, ui, thebe } = env;
  const timing = { ...TIMING, ...env.timing };
  const state = machine.view;
  const live = {
    notebook: null,   // Thebe's, once the cells are live
    cells: null,      // cells.js's records, one per cell
    order: null,      // run-order.js
    options: null,    // what Thebe was bootstrapped with
    session: null,    // the current kernel's session
    token: null,      // the reader's token, to ask the hub about their server
    watch: 0,         // which kernel the listeners listen to (the last)
    attempt: 0,       // which newKernel() is the latest
    restored: 0,      // edited cells that came back, said once ready
    listening: false, // to Thebe's status events
  };

  function readyText() {
    return `Live code is ready: a ${config.kernel.kernelName} kernel on ` +
      `${config.label}. Edit any cell and run it with its run button or ` +
      "Shift+Enter; cells above it run first if needed. Your edits are " +
      "kept in this browser." +
      (config.trainedModels ? " " + OTHER_WEIGHTS : "");
  }

  const sayStarting = () =>
    ui.say(`Live code: starting a kernel on ${where(config)} …`);

  // The kernel source's Thebe options; on a hub, the reader's server is
  // found or started first, its progress shown.
  async function findSource() {
    const source = await kernelSource(config, env, ({ seconds, latest }) => {
      ui.say(`Live code: starting your server on ${host(config.server.url)}` +
        ` … ${seconds} s${latest ? ` (${latest})` : ""}. A first start can ` +
        "take a minute or two when the whole class starts at once.");
    });
    live.token = source.token;
    return source;
  }

  // Thebe's own news while it connects (a Binder build's log lines).
  function onThebeStatus(_, data) {
    if (!machine.is("starting") || !data || !data.message) return;
    if (data.subject === "server") {
      const m = data.message;
      ui.say(`Live code: starting a kernel on ${where(config)}. ` +
             (m.length > 120 ? m.slice(0, 117) + "…" : m));
    }
  }

  // From the click (state loading) to a ready kernel.
  async function start() {
    ui.say(`Live code: loading Thebe ${config.thebeVersion} …`);
    await thebe.load();
    const source = await findSource();
    machine.transition("found");
    sayStarting();
    if (!live.listening) {
      thebe.onStatus(onThebeStatus);
      live.listening = true;
    }
    const cells = ui.markCells();
    live.options = {
      requestKernel: false,   // asked for below, so that it can be asked again
      selector: "[data-executable]",
      outputSelector: "[data-output]",
      // Thebe renders text/latex outputs only when it has a MathJax URL;
      // with no mathjaxConfig it never loads it (no MathJax 2 from a CDN).
      // rec11-livemath.js typesets those outputs with the site's own
      // MathJax 3, loaded on demand.
      mathjaxUrl: "_static/mathjax/tex-svg.js",
      mathjaxConfig: "",
      kernelOptions: config.kernel,
      codeMirrorConfig: { theme: "default", mode: "python", lineNumbers: true },
      ...source.options,
    };
    // renders the cells and connects to the server, but asks for no kernel
    const booted = await thebe.bootstrap(live.options);
    live.notebook = booted.notebook;
    live.cells = cells;
    ui.labelEditors(cells);
    state.timings.editor = env.now();
    live.restored = ui.installEdits(live.notebook, cells, () => {
      if (machine.is("ready")) {
        ui.say(readyText() + " Every cell shows the book's code again.");
      }
    });
    live.order = createRunOrder(live.notebook, cells, {
      busy: thebe.busy,
      idle: thebe.idle,
      canRun: () => machine.is("ready", "starting"),
      tell: (text) => ui.say(text),
      settle: () => {
        if (machine.is("ready")) ui.say(readyText());
      },
    });
    return newKernel();
  }

  // What pressing Live Code runs (main.js); a failure is told, not thrown.
  function begin() {
    return start().catch(reportFailure);
  }

  // A new kernel for the live cells (state starting): the first, or one
  // after a stop.
  async function newKernel() {
    const attempt = ++live.attempt;
    sayStarting();
    const session = await thebe.server().startNewSession(
      live.notebook.rendermime, { ...config.kernel, path: sessionPath(config.kernel.path) });
    await checkConnection(session, env, { hub: isHub(config) });
    state.timings.kernel = env.now();
    if (live.session) live.session.dispose();
    live.session = session;
    thebe.setSession(session);
    live.order.reset();
    live.notebook.attachSession(session);
    watchKernel(session);
    if (live.cells.some((c) => c.init)) {
      ui.say("Live code: running the page's set-up cells …");
    }
    await live.order.runInit();
    state.timings.ready = env.now();
    // A kernel that died during set-up has said so (state lost); a newer
    // attempt will say "ready" itself.
    if (attempt !== live.attempt || !machine.transition("up")) return session;
    const n = live.restored;
    live.restored = 0;
    ui.say(readyText() + (n ? ` Your edits to ${n} cell${n > 1 ? "s" : ""} ` +
      "from your last visit are back; each edited cell has a reset button."
      : ""));
    return session;
  }

  // After a kernel is up: notice when it dies or its connection drops.
  function watchKernel(session) {
    const kernel = session.kernel;
    const mine = ++live.watch;
    const current = () => mine === live.watch;
    kernel.statusChanged.connect((_, status) => {
      if (!current()) return;
      if (status === "restarting" || status === "autorestarting") {
        live.order.forget();
      }
      if (status === "autorestarting" && machine.is("ready")) {
        ui.say("Live code: your kernel stopped and was restarted (it may " +
          "have run out of memory), so what the cells had computed is " +
          "gone; " + ABOVE_AGAIN);
      }
      if (status === "dead" && machine.transition("died", "kernel")) {
        ui.say("Live code: your kernel stopped (it may have run out of " +
          "memory). Start a new one to go on; " + ABOVE_AGAIN,
          [["Start a new kernel", reconnect]]);
      }
    });
    kernel.connectionStatusChanged.connect((_, status) => {
      if (!current()) return;
      if (status === "connected") {
        if (state.problem === "lost" && machine.transition("back")) {
          ui.say(readyText());
        }
      } else if (status === "connecting" && machine.is("ready")) {
        env.setTimeout(() => {
          if (current() && kernel.connectionStatus !== "connected" &&
              machine.is("ready")) diagnose(false);
        }, timing.lostGrace);
      } else if (status === "disconnected" &&
                 (machine.is("ready") || state.problem === "lost")) {
        diagnose(true);
      }
    });
  }

  // A connection dropped: on a hub, ask it whether the reader's server is
  // still there (the idle culler stops servers); else say it was lost.
  async function diagnose(gaveUp) {
    const mine = live.watch;
    if (isHub(config)) {
      try {
        const { server } = await hubClient(config.server.url, live.token,
                                           env).reader();
        if (mine !== live.watch) return;
        if (!server || !server.ready) {
          if (machine.transition("stop", "stopped")) {
            ui.say(`Live code: your server on ${host(config.server.url)} ` +
              "has stopped (the hub stops servers that sit idle, or it was " +
              "restarted), so cells cannot run. Start it again to go on: " +
              "your edits are kept, and " + ABOVE_AGAIN,
              [["Start it again", reconnect]]);
          }
          return;
        }
      } catch (err) {
        if (mine !== live.watch) return;
        if (err.kind === "token") {
          if (machine.transition("fail", "token")) {
            state.error = err.message;
            ui.say(`Live code: ${err.message}.`,
                   [["Paste a new token", pasteNewToken]]);
          }
          return;
        }
        // the hub did not answer: say what the reader can see
      }
    }
    if (machine.transition("dropped", "lost")) {
      ui.say(`Live code: the connection to your kernel on ${where(config)} ` +
        `was lost${gaveUp ? "." : "; trying to reconnect …"} Check your ` +
        "network connection.", [["Reconnect (new kernel)", reconnect]]);
    }
  }

  function reportFailure(err) {
    const kind = (err && err.kind) || "other";
    env.log("[rec11 live code]", err);
    if (!machine.transition("fail", kind)) return;
    state.error = String((err && err.message) || err);
    let action = ["Try again", reconnect];
    if (kind === "token") action = ["Paste a new token", pasteNewToken];
    if (kind === "no-token") action = ["Paste a token", pasteNewToken];
    ui.say(`Live code could not start on ${where(config)}: ${state.error}.`,
           [action]);
  }

  function pasteNewToken() {
    forgetToken(config.server.url, env);
    return reconnect();
  }

  // "Try again", "Start it again", "Paste a new token", ...: without
  // reloading the page. A second press while it starts is refused by the
  // table (no retry from starting).
  function reconnect() {
    if (!live.notebook) {   // it failed before the cells were live
      if (machine.transition("reload")) {
        state.timings.click = env.now();
        state.started = begin();
      }
      return state.started;
    }
    if (!machine.transition("retry")) return state.started;
    state.started = (async () => {
      if (config.server) {
        // the reader's server may have moved, or the token changed
        const source = await findSource();
        const now = source.options.serverSettings;
        const was = thebe.server().config.serverSettings;
        if (now.baseUrl !== was.baseUrl || now.token !== was.token) {
          thebe.replaceServer({ ...live.options, ...source.options });
        }
      }
      return newKernel();
    })().catch(reportFailure);
    return state.started;
  }

  // A reader who leaves the page leaves its kernel: shut it down, so that
  // a reader going through the pages holds one kernel, not one per page
  // until the server culls them. (keepalive: the request outlives the
  // page; the server's kernel culler is the backstop.)
  function leave() {
    if (!live.session || !config.server) return;
    const s = thebe.server().config.serverSettings;
    env.fetch(s.baseUrl + "api/sessions/" + encodeURIComponent(live.session.id),
              { method: "DELETE", keepalive: true,
                headers: { Authorization: "token " + s.token } })
      .catch(() => { /* leaving anyway */ });
  }

  return { begin, reconnect, leave, readyText, live };
}
