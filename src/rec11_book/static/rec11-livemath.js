/* Math in Live Code outputs, typeset on demand (rec11_book.extensions.mathsvg).

   The book's own math is typeset when the book is built: no page loads a math engine
   to show it. Only when a live cell's output contains TeX (IPython's Latex(), Math(),
   or Markdown with $...$) is the site's pinned MathJax (_static/mathjax/tex-svg.js)
   loaded, once, and told to typeset that output. Thebe writes outputs into the areas
   marked [data-output] (static/livecode/); this script only watches them. */
(function () {
  "use strict";
  var me = document.currentScript;
  var base = me ? me.src.replace(/[^/]*(\?.*)?$/, "") : "_static/";
  var RENDERED = ".jp-RenderedLatex, .jp-RenderedMarkdown, .jp-RenderedHTMLCommon";
  var TEX = /\$|\\\(|\\\[|\\begin\{/;
  var engine = null;
  var waiting = [];
  var timer = null;

  function loadEngine() {
    if (!engine) {
      engine = new Promise(function (resolve, reject) {
        window.MathJax = {
          tex: {
            inlineMath: [["$", "$"], ["\\(", "\\)"]],
            displayMath: [["$$", "$$"], ["\\[", "\\]"]],
            processEscapes: true,
          },
          svg: { fontCache: "local" },
          startup: {
            typeset: false,
            ready: function () {
              window.MathJax.startup.defaultReady();
              window.MathJax.startup.promise.then(resolve, reject);
            },
          },
        };
        var tag = document.createElement("script");
        tag.src = base + "mathjax/tex-svg.js";
        tag.async = true;
        tag.onerror = function () { reject(new Error("could not load " + tag.src)); };
        document.head.appendChild(tag);
      });
    }
    return engine;
  }

  function typesetWaiting() {
    timer = null;
    var areas = waiting.filter(function (el) { return el.isConnected; });
    waiting = [];
    if (!areas.length) return;
    loadEngine()
      .then(function () { return window.MathJax.typesetPromise(areas); })
      .then(function () { document.documentElement.dataset.rec11LiveMath = "typeset"; })
      .catch(function (err) { console.error("rec11-livemath:", err); });
  }

  function consider(node) {
    if (node.nodeType !== 1) return;
    var candidates = node.matches(RENDERED) ? [node] : Array.prototype.slice.call(node.querySelectorAll(RENDERED));
    candidates.forEach(function (el) {
      if (el.closest("[data-output]") && TEX.test(el.textContent) && waiting.indexOf(el) < 0) waiting.push(el);
    });
    if (waiting.length && !timer) timer = setTimeout(typesetWaiting, 50);
  }

  new MutationObserver(function (records) {
    records.forEach(function (record) {
      Array.prototype.forEach.call(record.addedNodes, consider);
    });
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
