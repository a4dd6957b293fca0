// Typeset TeX to SVG with the book's pinned MathJax (npm `mathjax`), once per build.
//
//   node tex2svg.js MATHJAX_DIR < formulas.json > rendered.json
//
// stdin:  [{"tex": "...", "display": true|false}, ...]
// stdout: {"css": "<the SVG output's stylesheet>",
//          "results": [{"html": "<mjx-container ...>"} | {"error": "message"}, ...]}
//
// Each formula carries its own glyphs (fontCache: local) and MathJax's assistive MathML
// (a visually hidden <math> element that screen readers read; the SVG is aria-hidden).
// A TeX error is returned for that formula, never drawn in red on the page: undefined
// macros are errors too (the `noundefined` package is left out).
"use strict";
const path = require("path");

const mathjaxDir = process.argv[2];
if (!mathjaxDir) {
  process.stderr.write("usage: node tex2svg.js MATHJAX_DIR < formulas.json\n");
  process.exit(2);
}

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on("data", (c) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

async function main() {
  const formulas = JSON.parse(await readStdin());
  const MathJax = await require(path.resolve(mathjaxDir)).init({
    loader: { load: ["input/tex", "output/svg", "a11y/assistive-mml"] },
    tex: {
      packages: { "[-]": ["noundefined"] },
      tags: "none",
      formatError: (jax, err) => { throw err; },
    },
    svg: { fontCache: "local" },
    startup: { typeset: false },
  });
  const adaptor = MathJax.startup.adaptor;
  const results = [];
  for (const { tex, display } of formulas) {
    try {
      const node = await MathJax.tex2svgPromise(tex, { display: !!display });
      results.push({ html: adaptor.outerHTML(node) });
    } catch (err) {
      results.push({ error: String((err && err.message) || err) });
    }
  }
  const css = adaptor.textContent(MathJax.svgStylesheet());
  process.stdout.write(JSON.stringify({ css, results }));
}

main().catch((err) => {
  process.stderr.write(`tex2svg.js: ${(err && err.stack) || err}\n`);
  process.exit(1);
});
