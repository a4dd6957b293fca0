/* The browser's side of Live Code: the page's settings, the pinned Thebe
 * the site serves (_static/thebe, its version locked in
 * package-lock.json), and the browser's fetch, timers and storage, handed
 * to session.js. main.js loads this module when Live Code is pressed.
 */

import { CONFIG_ID } from "./config.js";
import { say } from "./status.js";
import { installEdits, labelEditors, markCells } from "./cells.js";
import { createLiveCode } from "./session.js";

function load(doc, tag, attributes) {
  return new Promise((resolve, reject) => {
    const el = Object.assign(doc.createElement(tag), attributes);
    el.onload = resolve;
    el.onerror = () => reject(new Error("could not load " +
                                        (attributes.src || attributes.href)));
    doc.head.appendChild(el);
  });
}

// Thebe 0.9.3 as session.js uses it: window.thebe (bootstrap, the server,
// busy marks on run buttons, events) and window.thebeCore.api (a new
// server connection when the reader's server has moved).
function thebeOf(doc, config) {
  return {
    load() {
      // loaded already when Live Code starts again after a failure
      if (window.thebe && window.thebe.bootstrap) return Promise.resolve();
      return Promise.all([
        load(doc, "link", { rel: "stylesheet", href: config.thebeCss }),
        load(doc, "script", { src: config.thebeJs }),
      ]);
    },
    bootstrap: (options) => window.thebe.bootstrap(options),
    server: () => window.thebe.server,
    replaceServer(options) {
      const api = window.thebeCore.api;
      const old = window.thebe.server;
      window.thebe.server = api.connectToJupyter(
        api.makeConfiguration(options, window.thebe.events));
      try {
        old.dispose();
      } catch (e) { /* gone already */ }
    },
    onStatus: (fn) => window.thebe.on("status", fn),
    setSession(session) {
      window.thebe.session = session;
    },
    busy: (id) => window.thebe.setButtonsBusy(id),
    idle: (id) => window.thebe.clearButtonsBusy(id),
  };
}

function localStore() {
  try {
    return window.localStorage;
  } catch (e) {   // storage forbidden (a browser setting)
    return null;
  }
}

// Called by main.js with the state machine, in state "loading".
export function start(machine) {
  const doc = document;
  const config = JSON.parse(doc.getElementById(CONFIG_ID).textContent);
  const live = createLiveCode({
    machine,
    config,
    ui: {
      say: (text, actions) => say(doc, text, actions),
      markCells: () => markCells(doc),
      labelEditors,
      installEdits: (notebook, cells, onResetAll) => installEdits(
        doc, notebook, cells, { storage: localStore(), onResetAll }),
    },
    thebe: thebeOf(doc, config),
    fetch: (...args) => window.fetch(...args),
    WebSocket: window.WebSocket,
    setTimeout: (fn, ms) => window.setTimeout(fn, ms),
    clearTimeout: (id) => window.clearTimeout(id),
    now: () => performance.now(),
    pause: (ms) => new Promise((resolve) => window.setTimeout(resolve, ms)),
    sessionStorage: window.sessionStorage,
    prompt: (text) => window.prompt(text),
    log: (...args) => console.error(...args),
  });
  window.addEventListener("pagehide", live.leave);
  return live.begin();
}
