/* Accessibility fixes to the stock theme (pydata-sphinx-theme / sphinx-book-theme /
 * myst-nb), found by axe-core in tests/browser/test_accessibility.py:
 *
 * - label-content-name-mismatch (WCAG 2.5.3): a control's accessible name must
 *   contain its visible text. The search buttons say "Search Ctrl+K" but are named
 *   "Search"; myst-nb's hidden-code toggles say "Show code cell source" but are named
 *   "Toggle hidden content"; the colour-mode button's icons carry titles
 *   ("Light", "Dark") that its name "Color mode" lacks. The visible text is a good
 *   name, so the overriding aria-label goes, and the icons become decorative.
 * - icons: the Font Awesome <i> glyphs are decorative (aria-hidden), as the theme's
 *   fontawesome.js, which the build empties to keep pages light, used to make them.
 * - region: the primary sidebar (book title, search, table of contents) sits in no
 *   landmark; it becomes one, "Book navigation".
 * - summary-name: a sidebar entry with going-further pages under it has a bare chevron
 *   that opens them; it is named after its entry ("Going-further pages of Attention").
 * - scrollable-region-focusable (WCAG 2.1.1): a displayed formula wider than the column
 *   (on a phone) scrolls sideways, so a keyboard user must be able to reach it. The
 *   theme makes wide code blocks tab stops; a wide formula becomes one too, only while
 *   it is wider than its column (at every width, as the window changes, and once a
 *   dropdown around it opens).
 */
(function () {
  "use strict";

  // The icons' titles count as text inside the button (even when aria-hidden), so
  // they go; the button keeps its name and its tooltip, "Color mode".
  function decorativeIcons(button) {
    button.querySelectorAll("svg, i").forEach(function (icon) {
      if (icon.getAttribute("aria-hidden") !== "true") icon.setAttribute("aria-hidden", "true");
      if (icon.hasAttribute("title")) icon.removeAttribute("title");
      if (icon.hasAttribute("aria-labelledby")) icon.removeAttribute("aria-labelledby");
      icon.querySelectorAll("title").forEach(function (title) { title.remove(); });
    });
  }

  function fix() {
    document.querySelectorAll("button.search-button-field[aria-label]").forEach(function (button) {
      button.removeAttribute("aria-label");
    });
    document.querySelectorAll("details.hide > summary[aria-label]").forEach(function (summary) {
      summary.removeAttribute("aria-label");
    });
    document.querySelectorAll(".theme-switch-button").forEach(function (button) {
      decorativeIcons(button);
      // Font Awesome swaps each <i> for an <svg> with a <title> after this runs.
      new MutationObserver(function () { decorativeIcons(button); })
        .observe(button, { childList: true, subtree: true });
    });
    // Icon-font glyphs are decoration (the controls have names); keep screen readers
    // from announcing their private-use characters.
    document.querySelectorAll("i[class*='fa-']").forEach(function (icon) {
      if (!icon.textContent.trim() && !icon.hasAttribute("aria-hidden")) icon.setAttribute("aria-hidden", "true");
    });
    document.querySelectorAll(".bd-sidenav li > details > summary").forEach(function (summary) {
      if (summary.textContent.trim() || summary.hasAttribute("aria-label")) return;
      var entry = summary.parentElement.parentElement.querySelector(":scope > a");
      summary.setAttribute("aria-label", "Going-further pages of " + (entry ? entry.textContent.trim() : "this page"));
    });
    var sidebar = document.getElementById("pst-primary-sidebar");
    if (sidebar && !sidebar.hasAttribute("role")) {
      sidebar.setAttribute("role", "navigation");
      sidebar.setAttribute("aria-label", "Book navigation");
    }
  }

  // Which formulas are wider than their column is read in a ResizeObserver's callback, which
  // the browser calls when it has laid the page out anyway, and again whenever a formula's
  // box changes size (the window's width changes, a dropdown around it opens). Read from a
  // script while the page loads, the widths would make the browser lay out the whole page
  // there and then, once more than it must (0.5 s on Lighthouse's phone, book/further/vae).
  var MATH = "mjx-container[display='true'], div.math-wrapper";

  function markScrollable(maths) {
    var wide = maths.map(function (math) { return math.scrollWidth > math.clientWidth; });  // all reads first
    maths.forEach(function (math, i) {
      if (wide[i] && math.getAttribute("tabindex") !== "0") math.setAttribute("tabindex", "0");
      else if (!wide[i] && math.getAttribute("tabindex") === "0") math.removeAttribute("tabindex");
    });
  }

  function start() {
    fix();
    var observer = new ResizeObserver(function (entries) {
      markScrollable(entries.map(function (entry) { return entry.target; }));
    });
    function observeAll() {  // observing a formula twice is observing it once
      document.querySelectorAll(MATH).forEach(function (math) { observer.observe(math); });
    }
    observeAll();
    window.addEventListener("resize", observeAll, { passive: true });  // and formulas typeset since
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
