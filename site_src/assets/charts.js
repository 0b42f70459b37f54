// Renders every chart on the page from its Vega-Lite spec file (beside the page, same site)
// with the vendored vega-embed; without JavaScript the static SVG in <noscript> shows.
(function () {
  "use strict";
  function init() {
    document.querySelectorAll("figure.vl-chart").forEach(function (fig) {
      var target = fig.querySelector(".vl-target");
      var dark = document.body.getAttribute("data-md-color-scheme") === "slate";
      fetch(fig.getAttribute("data-spec"))
        .then(function (response) {
          if (!response.ok) throw new Error("chart spec: HTTP " + response.status);
          return response.json();
        })
        .then(function (spec) {
          return window.vegaEmbed(target, spec,
            {actions: false, renderer: "svg", theme: dark ? "dark" : undefined});
        })
        .then(function () { fig.setAttribute("data-rendered", "true"); })
        .catch(function (err) { fig.setAttribute("data-error", String(err)); console.error(err); });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
