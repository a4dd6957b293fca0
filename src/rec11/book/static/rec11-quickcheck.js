// {quick-check}: compare a student's short answer with the page's (rec11.book.quickcheck).
// Without this script the form shows its prompt and an empty answer box, and no button.
"use strict";
(function () {
  // "(2, 3, 5, 4)", "torch.Size([2, 3, 5, 4])" and "2,3,5,4" are the same answer
  function normalise(text) {
    return text.toLowerCase().replace(/torch\.size/g, "")
      .replace(/[\s()[\]{}'"`]/g, "").replace(/\u2212/g, "-");
  }

  function number(text) {
    const t = text.trim().replace(/\u2212/g, "-");
    const fraction = /^(-?\d+)\s*\/\s*(\d+)$/.exec(t);
    if (fraction) return Number(fraction[2]) ? Number(fraction[1]) / Number(fraction[2]) : NaN;
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t) : NaN;
  }

  function accepts(form, given) {
    const answer = form.dataset.answer;
    if (form.dataset.kind === "choice") return given === answer;
    if (form.dataset.kind === "number") {
      const value = number(given);
      const want = Number(answer);
      const tolerance = form.dataset.tolerance !== undefined
        ? Number(form.dataset.tolerance) : Math.abs(want) * 0.01;
      return !Number.isNaN(value) && Math.abs(value - want) <= tolerance + 1e-12;
    }
    return normalise(given) === normalise(answer);
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
      const right = accepts(form, text);
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
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
