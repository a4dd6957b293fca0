/* The status line under the page title, and its buttons.
 *
 * The other modules never touch it: they call say(text, actions), where
 * actions are [label, function] pairs shown as buttons ("Try again",
 * "Start it again", ...). Loaded with the page (main.js), so that even a
 * failure to load the rest of Live Code can be reported.
 */

import { CONFIG_ID } from "./config.js";

// A button in the line, or in a cell's controls (cells.js).
export function button(doc, label, onClick, className = "") {
  const b = doc.createElement("button");
  b.type = "button";
  b.className = "rec11-live-button " + className;
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

// The box under the title. The theme's Live Code button (initThebeSBT)
// puts an empty <button> after the title before it calls initThebe(),
// unless the element after the title has that class already; the page's
// settings name the class ("placeholder": rec11_book.compat.book_theme
// .live_code_placeholder, probed against the theme's script). The box
// takes the placeholder's place and its class, so the theme finds it
// there next time.
export function placeholderClass(doc) {
  return JSON.parse(doc.getElementById(CONFIG_ID).textContent).placeholder;
}

export function statusBox(doc) {
  let box = doc.querySelector(".rec11-live");
  if (box) return box;
  const placeholder = placeholderClass(doc);
  box = doc.createElement("div");
  box.className = `rec11-live ${placeholder}`;
  const line = doc.createElement("p");
  line.className = "rec11-live-status";
  line.setAttribute("role", "status");
  line.setAttribute("aria-live", "polite");
  const actions = doc.createElement("div");
  actions.className = "rec11-live-actions";
  box.append(line, actions);
  doc.querySelector(`button.${placeholder}`).replaceWith(box);
  return box;
}

export function say(doc, text, actions = []) {
  const box = statusBox(doc);
  box.querySelector(".rec11-live-status").textContent = text;
  const row = box.querySelector(".rec11-live-actions");
  row.querySelectorAll(".rec11-live-action").forEach((b) => b.remove());
  for (const [label, onClick] of actions) {
    row.prepend(button(doc, label, onClick, "rec11-live-action"));
  }
}

// A button that stays in the line whatever it says ("Reset the page's
// code"): say() replaces only the action buttons.
export function addLasting(doc, b) {
  statusBox(doc).querySelector(".rec11-live-actions").append(b);
}

// The state, on <html data-rec11-live-code>, for the stylesheet (a red
// edge when something is wrong) and for tests.
export function showState(doc, name) {
  doc.documentElement.setAttribute("data-rec11-live-code", name);
}
