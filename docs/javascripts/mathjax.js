// MathJax settings for the maths written with pymdownx.arithmatex (generic mode): the
// extension wraps each formula in an element of class "arithmatex" with \( … \) or \[ … \]
// delimiters, and MathJax typesets those elements only (never code blocks or other text).
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|", // every element, also one without a class ("")
    processHtmlClass: "arithmatex",
  },
};
