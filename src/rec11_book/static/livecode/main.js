/* Live code for the Recitation 11 book: the entry point.
 *
 * The theme's "Live Code" button calls initThebe(). Live Code then loads
 * the Thebe that the site serves itself, turns the page's code cells into
 * editable cells and starts a kernel from the source chosen in
 * _config.yml (rec11_live_code): a BinderHub, or a Jupyter server /
 * JupyterHub. The build writes that choice into each live page as JSON,
 * and loads this module on those pages only (src/rec11_book/extensions/livecode.py).
 *
 * This module is all a page loads before the click: the state machine
 * (state.js), published as window.rec11LiveCode, and the status line
 * (status.js). The rest is imported on the click (start.js).
 *
 * The modules, each DOM-free unless its name says page:
 *   config.js      names, waits, small helpers
 *   state.js       the states and the one table of moves between them
 *   status.js      page: the status line under the title and its buttons
 *   start.js       page: the browser's fetch, timers, storage and Thebe
 *   thebe-compat.js  Thebe's globals, the one module that touches them
 *   session.js     from the click to a ready kernel, and every way on
 *   server.js      where the kernel comes from: Binder, a server, a hub
 *   connection.js  a new kernel's websocket, checked within seconds
 *   run-order.js   running a cell runs the cells above it first
 *   edits.js       a reader's edits, kept in localStorage
 *   cells.js       page: the code cells, their editors and reset buttons
 * tests/js holds their unit tests (node --test tests/js/).
 */

import { createMachine } from "./state.js";
import { say, showState } from "./status.js";

const machine = createMachine({
  now: () => performance.now(),
  onChange: (name) => showState(document, name),
});
window.rec11LiveCode = machine.view;

window.initThebe = function initThebe() {
  const view = machine.view;
  if (view.started) return view.started;   // pressed again: one start
  view.timings.click = performance.now();
  machine.transition("click");
  view.started = import("./start.js")
    .then((page) => page.start(machine))
    .catch((err) => {   // the modules did not load (offline?)
      console.error("[rec11 live code]", err);
      if (machine.transition("fail", "other")) {
        view.error = String(err.message || err);
        say(document, `Live code could not start: ${view.error}. Check ` +
            "your connection and reload the page.");
      }
    });
  return view.started;
};
