// Explorable figures (rec11_book.extensions.explore): a slider picks one of the frames the page
// drew when the book was built. Nothing is computed here but the choice of frame.
// Without this script the figure is its default frame and the control stays invisible.
"use strict";
(function () {
  const ANNOUNCE_AFTER = 400;  // ms of stillness before the new frame's alt text is read

  function setUp(figure) {
    const frames = JSON.parse(figure.querySelector(".rec11-explore-frames").textContent);
    const image = figure.querySelector("img");
    const input = figure.querySelector("input[type=range]");
    const output = figure.querySelector("output");
    const live = figure.querySelector(".rec11-explore-live");
    let announce = null;
    let fetched = null;

    // The other frames are fetched the first time the reader reaches for the control,
    // so a reader who never does downloads only the default frame. The images are kept:
    // one the garbage collector took could leave the memory cache, and be fetched again
    // where the HTTP cache does not serve it.
    function fetchAll() {
      if (fetched) return;
      fetched = frames.map(function (frame) {
        const preload = new Image();
        preload.src = frame.src;
        return preload;
      });
    }

    function show(index) {
      const frame = frames[index];
      image.src = frame.src;
      image.alt = frame.alt;
      input.setAttribute("aria-valuetext", frame.text);
      output.textContent = frame.text;
      clearTimeout(announce);
      announce = setTimeout(function () { live.textContent = frame.alt; }, ANNOUNCE_AFTER);
    }

    for (const event of ["pointerdown", "focus", "touchstart"]) {
      input.addEventListener(event, fetchAll, {passive: true});
    }
    input.addEventListener("input", function () { show(Number(input.value)); });
    if (Number(input.value) !== Number(input.defaultValue)) show(Number(input.value));
    figure.querySelector(".rec11-explore-control").classList.remove("rec11-explore-waiting");
  }

  function start() {
    document.querySelectorAll(".rec11-explore").forEach(setUp);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
