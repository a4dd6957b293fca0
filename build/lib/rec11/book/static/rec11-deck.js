/* The instructor's deck (rec11.book.slides): reveal.js at 1280x720 (the size the tests check),
   speaker notes on S, math by the site's MathJax (SVG, so the speaker view can show it). */
(function () {
  const size = JSON.parse(document.getElementById("rec11-deck-config").textContent);
  window.MathJax = {
    tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]] },
    // Each formula carries its own glyphs: the speaker view gets copies of the notes.
    svg: { fontCache: "local" },
    startup: {
      pageReady() {
        return MathJax.startup.defaultPageReady().then(() => {
          window.Reveal.layout();
          document.documentElement.dataset.mathReady = "true";
        });
      },
    },
  };
  Reveal.initialize({
    width: size.width,
    height: size.height,
    margin: 0.04,
    center: false,
    hash: true,
    transition: "none",
    slideNumber: "c/t",
    plugins: [RevealNotes],
  }).then(() => {
    // reveal's arrows are an <aside>: a complementary landmark may not sit inside <main>
    const controls = document.querySelector(".reveal .controls");
    controls.setAttribute("role", "region");
    controls.setAttribute("aria-label", "Slide controls");
  });
})();
