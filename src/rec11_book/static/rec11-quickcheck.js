// {quick-check}: compare a student's short answer with the page's (rec11_book.extensions.quickcheck).
// Without this script the form shows its prompt and an empty answer box, and no button.
// Node's tests load the comparison alone (tests/js/quickcheck.test.mjs).
"use strict";
const rec11QuickCheck = (function () {
  // A shape or a list, however it is typed: "(2, 3, 5, 4)", "[2 3 5 4]", "2 3 5 4", "2x3x5x4",
  // "2 × 3 × 5 × 4", "(2,3,5,4,)", "torch.Size([2, 3, 5, 4])" and "Size([2,3,5,4])" are one
  // answer, and so are "(N, H, T, d/H)" and "N,H,T,d/H". Anything else: case and spaces aside.
  function items(text) {
    const t = text.toLowerCase().replace(/\u2212/g, "-")
      .replace(/\btorch\.size\b|\bsize(?=\s*\()/g, "")
      .replace(/\s*\/\s*/g, "/")  // d / H is d/H
      .replace(/(\d)\s*[x×*]\s*(?=\d)/g, "$1,");  // 2x3 and 2 × 3, not the x of a name
    return t.replace(/[()[\]{}'"`]/g, " ").split(/[\s,;]+/).filter(Boolean);
  }

  // without spaces, brackets or case: "dim = -1" is "dim=-1"
  function squeezed(text) {
    return text.toLowerCase().replace(/\btorch\.size\b/g, "").replace(/[\s()[\]{}'"`]/g, "")
      .replace(/\u2212/g, "-");
  }

  function sameText(given, answer) {
    const a = items(given), b = items(answer);
    const sameItems = a.length === b.length && a.every((item, i) => item === b[i]);
    return sameItems || squeezed(given) === squeezed(answer);
  }

  // A number, however it is typed: "6,400", "8x", "×8", "6 bits", "73.1%", "−0.5", "3/4".
  // A percentage is a hundredth of its number ("73.1%" is 0.731); the page's answer says
  // which scale it is on, so accepts() tries both where the answer is above 1.
  function number(text) {
    let t = text.trim().toLowerCase().replace(/\u2212/g, "-").replace(/^[x×]\s*|\s*[x×]$/g, "");
    let scale = 1;
    if (t.endsWith("%")) {
      scale = 0.01;
      t = t.slice(0, -1).trim();
    }
    t = t.replace(/\s*(bits?|nats?|times|ms|s|mib|mb|kb)$/, "");  // a unit after the number
    if (/^[-+]?\d{1,3}(,\d{3})+(\.\d*)?$/.test(t)) t = t.replace(/,/g, "");  // 6,400
    const fraction = /^(-?\d+)\s*\/\s*(\d+)$/.exec(t);
    if (fraction) return Number(fraction[2]) ? scale * Number(fraction[1]) / Number(fraction[2]) : NaN;
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/.test(t) ? scale * Number(t) : NaN;
  }

  function accepts(kind, answer, tolerance, given) {
    if (kind === "choice") return given === answer;
    if (kind === "number") {
      const want = Number(answer);
      const within = tolerance !== undefined && tolerance !== "" ? Number(tolerance) : Math.abs(want) * 0.01;
      const value = number(given);
      const values = /%\s*$/.test(given) && Math.abs(want) > 1 ? [value, value * 100] : [value];
      return values.some((v) => !Number.isNaN(v) && Math.abs(v - want) <= within + 1e-12);
    }
    return sameText(given, answer);
  }

  function setUp(form) {
    const button = form.querySelector(".quick-check-button");
    const feedback = form.querySelector(".quick-check-feedback");
    const hint = form.querySelector(".quick-check-hint");
    const input = form.querySelector(".quick-check-input");
    function given() {
      if (input) return input.value;
      const picked = form.querySelector("input[type=radio]:checked");
      return picked ? picked.value : "";
    }
    function check() {
      const text = given();
      if (!text.trim()) {
        feedback.textContent = input ? "Type an answer first." : "Choose an answer first.";
        return;
      }
      const right = accepts(form.dataset.kind, form.dataset.answer, form.dataset.tolerance, text);
      feedback.textContent = right ? "Right." : "Not yet." + (hint ? " A hint follows." : " Try again.");
      form.classList.toggle("quick-check-right", right);
      form.classList.toggle("quick-check-wrong", !right);
      if (input) input.setAttribute("aria-invalid", String(!right));
      if (hint) hint.hidden = right;
    }
    button.hidden = false;
    button.addEventListener("click", check);
    form.addEventListener("submit", function (event) { // Enter in the text box
      event.preventDefault();
      check();
    });
  }

  function start() {
    document.querySelectorAll("form.quick-check").forEach(setUp);
  }
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  }
  return { accepts, number, items };
})();
if (typeof module === "object" && module.exports) module.exports = rec11QuickCheck;
