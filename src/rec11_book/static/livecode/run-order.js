/* Running cells in order.
 *
 * Every cell can be run on its own: running a cell first runs, in order,
 * the cells above it that have not run yet in this kernel, so a reader
 * never meets a NameError for a name an earlier cell defines. Runs wait
 * in one queue, so two cells never run at once. A cell that raised is not
 * counted as run (it runs again next time), unless it is tagged
 * raises-exception: it raises on purpose.
 *
 * `notebook` is Thebe's: its cells have id, source, execute(source) and
 * an output area (area.model). `infos` are cells.js's records ({init,
 * raises}), one per cell, in the same order. `hooks`:
 *   busy(id), idle(id)  Thebe's busy marks on a cell's run button
 *   canRun()            whether a kernel is there to run on
 *   tell(text)          the status line
 *   settle()            put the status line back after tell()
 */

const NOT_CONNECTED = "Not run: live code is not connected to a kernel. " +
  "See the message under the page title.";

function failed(result) {
  return result == null || (result.error && result.error.length > 0);
}

function firstLine(source) {
  const line = (source || "").split("\n").find((l) => l.trim()) || "";
  return line.length > 60 ? line.slice(0, 57) + "…" : line;
}

// A message in a cell's output, where the reader is looking.
function note(cell, text) {
  cell.area.model.clear();
  cell.area.model.add({ output_type: "stream", name: "stderr",
                        text: text + "\n" });
}

export function createRunOrder(notebook, infos, hooks) {
  const cells = notebook.cells;
  const plain = cells.map((cell) => cell.execute.bind(cell));
  const ran = new Set();        // cells run (without an error) in this kernel
  let queue = Promise.resolve();
  let generation = 0;           // a new kernel drops runs queued for the old

  async function runOne(i, source = cells[i].source) {
    hooks.busy(cells[i].id);
    let result;
    try {
      result = await plain[i](source);
    } finally {
      hooks.idle(cells[i].id);
    }
    const ok = !failed(result) || infos[i].raises;
    if (ok) ran.add(i);
    return { result, ok };
  }

  async function runWithEarlier(i, source) {
    const todo = [];
    for (let j = 0; j < i; j++) if (!ran.has(j)) todo.push(j);
    if (todo.length) {
      const n = todo.length === 1
        ? "1 earlier cell" : `${todo.length} earlier cells`;
      hooks.tell(`Live code: running ${n} first, so that this one has ` +
                 "what it needs …");
    }
    for (const j of todo) {
      const earlier = await runOne(j);
      if (!earlier.ok) {
        note(cells[i], "Not run: an earlier cell raised an error (the one " +
             `starting "${firstLine(cells[j].source)}"). Fix it, then run ` +
             "this cell again.");
        hooks.settle();
        return earlier.result;
      }
    }
    const mine = await runOne(i, source);
    if (todo.length) hooks.settle();
    return mine.result;
  }

  function enqueue(work) {
    const mine = generation;
    const job = queue.then(() => (mine === generation ? work() : null));
    queue = job.catch(() => {});
    return job;
  }

  // Thebe's run button and Shift+Enter call cell.execute().
  cells.forEach((cell, i) => {
    cell.execute = (source) => {
      if (!hooks.canRun()) {
        note(cell, NOT_CONNECTED);
        return Promise.resolve(null);
      }
      return enqueue(() => runWithEarlier(i, source));
    };
  });

  return {
    // the page's set-up cells (tag thebe-init), as soon as a kernel is up
    runInit: () => enqueue(async () => {
      for (let i = 0; i < cells.length; i++) if (infos[i].init) await runOne(i);
    }),
    // a new kernel: nothing has run in it, and runs queued for the old
    // one are dropped
    reset() {
      generation++;
      ran.clear();
      queue = Promise.resolve();
      cells.forEach((cell) => hooks.idle(cell.id));
    },
    // the kernel restarted: what ran is gone, but the queue stands
    forget: () => ran.clear(),
    ran: () => [...ran].sort((a, b) => a - b),
  };
}
