/* The browser's side of Live Code: the page's settings, the pinned Thebe
 * the site serves (_static/thebe, its version locked in
 * package-lock.json), and the browser's fetch, timers and storage, handed
 * to session.js (Thebe's globals through thebe-compat.js). main.js loads
 * this module when Live Code is pressed.
 */

import { CONFIG_ID } from "./config.js";
import { say } from "./status.js";
import { installEdits, labelEditors, markCells } from "./cells.js";
import { createLiveCode } from "./session.js";
import { replaceServer, setSession, thebeGlobals } from "./thebe-compat.js";

function load(doc, tag, attributes) {
  return new Promise((resolve, reject) => {
    const el = Object.assign(doc.createElement(tag), attributes);
    el.onload = resolve;
    el.onerror = () => reject(new Error("could not load " +
                                        (attributes.src || attributes.href)));
    doc.head.appendChild(el);
  });
}

// Thebe as session.js uses it: its globals, through thebe-compat.js.
function thebeOf(doc, config) {
  const thebe = thebeGlobals(window);
  return {
    load() {
      // loaded already when Live Code starts again after a failure
      if (thebe.loaded()) return Promise.resolve();
      return Promise.all([
        load(doc, "link", { rel: "stylesheet", href: config.thebeCss }),
        load(doc, "script", { src: config.thebeJs }),
      ]);
    },
    bootstrap: thebe.bootstrap,
    server: thebe.server,
    replaceServer: (options) => replaceServer(window, options),
    onStatus: thebe.onStatus,
    setSession: (session) => setSession(window, session),
    busy: thebe.busy,
    idle: thebe.idle,
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
