/* The instructor's deck (rec11_book.extensions.slides): reveal.js at 1280x720 (the size the tests check),
   speaker notes on S. Math arrives as SVG typeset when the book was built. */
(function () {
  const size = JSON.parse(document.getElementById("rec11-deck-config").textContent);
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
