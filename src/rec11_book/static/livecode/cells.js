/* The page's code cells, in the page: what Thebe makes live, their
 * editors' labels, the alt text of figures they redraw, and the reset
 * buttons that connect the editors to a reader's kept edits (edits.js).
 */

import { button, addLasting } from "./status.js";
import { editStore } from "./edits.js";

// myst-nb writes each code cell as <div class="cell tag_...">, with a
// .cell_input and, when it printed or drew something, a .cell_output.
// Thebe pairs the n-th input with the n-th output on the page, so every
// cell gets an output area; rec11-livemath.js watches the [data-output]
// areas for TeX. Returns one record per cell, in page order.
export function markCells(doc) {
  const cells = [];
  for (const cell of doc.querySelectorAll("article div.cell, main div.cell")) {
    const input = cell.querySelector(".cell_input");
    if (!input) continue;
    let output = cell.querySelector(".cell_output");
    if (!output) {
      output = doc.createElement("div");
      output.className = "cell_output docutils container";
      input.insertAdjacentElement("afterend", output);
    }
    // Thebe reads the cell's code from the text of the input; the copy
    // button's tooltip ("Copy to clipboard") is text too, and would
    // become code.
    input.querySelectorAll("button.copybtn").forEach((b) => b.remove());
    input.setAttribute("data-executable", "true");
    input.setAttribute("data-language", "python");
    output.setAttribute("data-output", "true");
    const info = {
      element: cell,
      output,
      alts: [...output.querySelectorAll("img[alt]")].map((img) => img.alt),
      init: cell.classList.contains("tag_thebe-init"),
      raises: cell.classList.contains("tag_raises-exception"),
    };
    // A figure appears when the kernel sends it, before its run ends:
    // it gets its alt text as it arrives, not after the run.
    new MutationObserver(() => keepAltText(info))
      .observe(output, { childList: true, subtree: true });
    cells.push(info);
  }
  return cells;
}

// An image the kernel drew has no alt text; give it the figure's.
function keepAltText(info) {
  info.output.querySelectorAll("img").forEach((img, k) => {
    if (!img.getAttribute("alt")) {
      img.setAttribute("alt", info.alts[k] || info.alts[0] ||
                       "Figure drawn by this cell's code");
    }
  });
}

export function labelEditors(cells) {
  cells.forEach((info, n) => {
    const area = info.element.querySelector(".CodeMirror textarea");
    if (area) {
      area.setAttribute("aria-label", `Code of cell ${n + 1} (editable: ` +
        "Shift+Enter runs it, Escape leaves the editor)");
    }
    info.element.querySelectorAll(".thebe-controls button")
      .forEach((b) => b.setAttribute("type", "button"));
  });
}

// The reader's kept edits back in the editors, every change kept, and a
// reset button per edited cell plus one for the page (in the status
// line). onResetAll() runs after the page's reset. Returns how many
// cells came back edited.
export function installEdits(doc, notebook, cells, { storage, onResetAll }) {
  const originals = notebook.cells.map((cell) => cell.source);
  const store = editStore(storage, doc.location.pathname, originals);
  const editors = cells.map((info) => {
    const el = info.element.querySelector(".CodeMirror");
    return el && el.CodeMirror;
  });
  const pageReset = button(doc, "Reset the page's code", resetAll,
                           "rec11-reset-page");
  pageReset.hidden = true;
  addLasting(doc, pageReset);

  function show() {
    const n = store.count();
    pageReset.hidden = n === 0;
    pageReset.textContent = `Reset the page's code (${n} edited ` +
      `cell${n === 1 ? "" : "s"})`;
    cells.forEach((info, i) => {
      if (info.reset) info.reset.hidden = !store.has(i);
    });
  }

  function resetAll() {
    for (const i of store.resetAll()) {
      if (editors[i]) editors[i].setValue(originals[i]);
    }
    show();
    onResetAll();
    const first = cells.length &&
      cells[0].element.querySelector(".CodeMirror textarea");
    if (first) first.focus({ preventScroll: true });
  }

  let restored = 0;
  cells.forEach((info, i) => {
    const cm = editors[i];
    if (!cm) return;
    if (i in store.restored) {
      cm.setValue(store.restored[i]);
      restored++;
    }
    const controls = info.element.querySelector(".thebe-controls");
    if (controls) {
      info.reset = button(doc, "reset", () => {
        cm.setValue(store.reset(i));
        show();
      }, "thebe-button rec11-reset-cell");
      info.reset.title = "Put back the book's code for this cell";
      controls.insertBefore(info.reset, controls.querySelector(".thebe-busy"));
    }
    cm.on("change", () => {
      store.set(i, cm.getValue());
      show();
    });
  });
  show();
  return restored;
}
