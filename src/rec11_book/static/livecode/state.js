/* The connection's states, and every move between them, in one table.
 *
 *   idle      the page as loaded; Live Code not pressed
 *   loading   Thebe loading; on a JupyterHub, the reader's server found
 *             or started (with its progress shown)
 *   starting  a kernel starting, its connection checked, set-up cells run
 *   ready     cells run on a live kernel
 *   lost      the kernel died, or its connection dropped (it may return)
 *   stopped   the hub stopped the reader's server (the idle culler)
 *   failed    it could not start, or the hub refused the token; the
 *             status line says why and offers a button
 *
 * `problem` says more about lost, stopped and failed: token, no-token,
 * hub, spawn, websocket (config.js: problem()), kernel (it died), lost
 * (the connection dropped), stopped, other.
 *
 * A move the table does not list is refused: transition() returns false
 * and nothing changes. That is how a late answer is ignored, for example
 * a check on a dropped connection that returns after the reader has
 * pressed "Start it again", or a second press of a button.
 */

export const TRANSITIONS = {
  idle: { click: "loading" },
  loading: { found: "starting", fail: "failed" },
  starting: { up: "ready", died: "lost", fail: "failed" },
  ready: { died: "lost", dropped: "lost", stop: "stopped", fail: "failed" },
  lost: {
    back: "ready",        // the connection came back on its own
    dropped: "lost",      // ... or the browser gave up on it
    died: "lost",
    stop: "stopped",
    fail: "failed",
    retry: "starting",
  },
  stopped: { retry: "starting" },
  failed: {
    retry: "starting",    // a new kernel for the live cells
    reload: "loading",    // it failed before the cells were live
  },
};

// The machine's view is what the page publishes as window.rec11LiveCode
// (tests read it): {state, problem, error, timings}. timings holds
// performance.now() at click, editor, kernel and ready, and at
// "became <state>" for each state entered.
export function createMachine({ now, onChange = () => {} }) {
  const view = {
    state: "idle",
    problem: null,
    error: null,
    timings: {},
    started: null,   // the promise initThebe() returns
  };

  function transition(event, problem = null) {
    const next = TRANSITIONS[view.state][event];
    if (!next) return false;
    view.state = next;
    view.problem = problem;
    view.timings["became " + next] = now();
    onChange(next, view);
    return true;
  }

  return { view, transition, is: (...names) => names.includes(view.state) };
}
