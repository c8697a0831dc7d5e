// MathJax 3 settings for pymdownx.arithmatex (generic mode); MathJax itself is served from
// assets/mathjax/, copied from a Python package at build time, so formulas render offline.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};
