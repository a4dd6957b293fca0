/* A reader's edits, kept in the browser (localStorage).
 *
 * Edits are kept per page and per version of the page's code (a hash of
 * the code the build wrote): a new build that changes the page's code
 * starts from the book's code, and stale edits are not brought back over
 * it; they are deleted. Only the cells a reader changed are stored, as
 * {cell index: code}.
 *
 * `storage` is window.localStorage, or null where the browser forbids it
 * (edits then last for this visit only). cells.js connects this store to
 * the editors and the reset buttons.
 */

import { EDITS_KEY } from "./config.js";

// FNV-1a, 32 bits: names a version of the page's code.
export function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

export function editStore(storage, pathname, originals) {
  const prefix = EDITS_KEY + pathname + ":";
  const key = prefix + hash(originals.join("\u0000"));
  let saved = {};
  try {
    saved = JSON.parse((storage && storage.getItem(key)) || "{}") || {};
  } catch (e) { /* unreadable: start afresh */ }
  let edits = {};
  for (const [i, code] of Object.entries(saved)) {
    if (i in originals && typeof code === "string" && code !== originals[i]) {
      edits[i] = code;
    }
  }
  if (storage) {   // older versions of this page's edits are stale
    for (let k = storage.length - 1; k >= 0; k--) {
      const name = storage.key(k);
      if (name && name.startsWith(prefix) && name !== key) {
        storage.removeItem(name);
      }
    }
  }

  function save() {
    if (!storage) return;
    try {
      if (!Object.keys(edits).length) storage.removeItem(key);
      else storage.setItem(key, JSON.stringify(edits));
    } catch (e) { /* full or forbidden: edits stay for this visit only */ }
  }
  save();

  return {
    key,
    restored: { ...edits },   // what the reader left last time
    count: () => Object.keys(edits).length,
    has: (i) => String(i) in edits,
    // A cell's code changed: keep it, unless it is the book's code again.
    set(i, code) {
      if (code === originals[i]) delete edits[i];
      else edits[i] = code;
      save();
    },
    // Back to the book's code: one cell, or every cell (returns which).
    reset(i) {
      delete edits[i];
      save();
      return originals[i];
    },
    resetAll() {
      const changed = Object.keys(edits).map(Number);
      edits = {};
      save();
      return changed;
    },
  };
}
