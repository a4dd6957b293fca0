/* Thebe's globals, as Live Code uses them: the one module that touches
 * window.thebe and window.thebeCore. start.js hands them to session.js.
 *
 * Each export's comment ends in the build's fixed form (rec11_book.compat),
 * which python -m rec11_book.compat lists in docs/architecture.md's table;
 * tests/js/thebe-compat.test.mjs probes them in the pinned Thebe (the
 * version in package-lock.json) and fails when it differs from the one
 * named here.
 */

/**
 * What Live Code calls on the Thebe the page has loaded.
 *
 * Relies on: Thebe's bundle (its npm main, served as _static/thebe/index.js)
 * setting window.thebe with bootstrap(options), on("status", fn) and, since it
 * spreads every export of its thebe module into the global,
 * setButtonsBusy(id) and clearButtonsBusy(id), which its ThebeGlobal type does
 * not declare; bootstrap() keeping the server it starts in window.thebe.server.
 * Package: thebe. Checked against: 0.9.3.
 * Public alternative: none: Thebe 0.9 publishes its API as these globals (its
 * ES module build needs a bundler, which the book's Live Code does not use).
 */
export function thebeGlobals(win) {
  return {
    loaded: () => Boolean(win.thebe && win.thebe.bootstrap),
    bootstrap: (options) => win.thebe.bootstrap(options),
    server: () => win.thebe.server,
    onStatus: (fn) => win.thebe.on("status", fn),
    busy: (id) => win.thebe.setButtonsBusy(id),
    idle: (id) => win.thebe.clearButtonsBusy(id),
  };
}

/**
 * Connect to another Jupyter server (the reader's server has moved) and put
 * it where Thebe's cells look for theirs; the old server is disposed of.
 *
 * Relies on: window.thebeCore.api.makeConfiguration(options, events) and
 * .connectToJupyter(config), with window.thebe.events, and Thebe reading its
 * server from window.thebe.server, which this replaces.
 * Package: thebe. Checked against: 0.9.3.
 * Public alternative: none (bootstrap() starts a new server, but also renders
 * the cells again).
 */
export function replaceServer(win, options) {
  const api = win.thebeCore.api;
  const old = win.thebe.server;
  win.thebe.server = api.connectToJupyter(api.makeConfiguration(options, win.thebe.events));
  try {
    old.dispose();
  } catch (e) { /* gone already */ }
}

/**
 * Make the session Live Code started the page's own, as bootstrap() does
 * with the one it starts.
 *
 * Relies on: Thebe keeping the page's session in window.thebe.session, which
 * this replaces.
 * Package: thebe. Checked against: 0.9.3.
 * Public alternative: none.
 */
export function setSession(win, session) {
  win.thebe.session = session;
}
