/* Names, waits and small helpers shared by the Live Code modules.
 *
 * Nothing here touches the page, so every module can be tested under Node
 * (tests/js). The page's own settings (where kernels come from, the kernel's
 * name, Thebe's files) are JSON the build writes into each live page:
 * <script id="rec11-live-code-config">, see src/rec11_book/extensions/livecode.py.
 */

export const CONFIG_ID = "rec11-live-code-config";
export const TOKEN_KEY = "rec11-live-code-token:";   // + server URL
export const EDITS_KEY = "rec11-live-code-edits:";   // + path + ":" + code hash

// How long to wait, in ms. Modules take these as defaults; tests pass
// shorter ones so that a "five-minute" spawn times out in milliseconds.
export const TIMING = {
  connect: 15000,   // a new kernel's websocket, before the page says so
  reprobe: 1500,    // before a refused probe is tried once more
  lostGrace: 3000,  // a dropped connection may come back on its own
  spawn: 300000,    // the hub starting a reader's server
  poll: 1000,       // between two looks at the hub while it starts one
};

// An error the reader is told about in words, with a way on. `kind`
// becomes window.rec11LiveCode.problem: token, no-token, hub, spawn,
// websocket (see state.js for the others).
export function problem(kind, message) {
  const err = new Error(message);
  err.kind = kind;
  return err;
}

export function host(url) {
  return new URL(url).host;
}

// Where kernels come from, in the words of the status line.
export function where(config) {
  if (config.source === "binder") {
    return `${config.label} (${config.binder.repo}, ${config.binder.ref})`;
  }
  return config.label;
}

export function isHub(config) {
  return Boolean(config.server && config.server.hub);
}
