// Draws every chart on the page from the Vega-Lite spec embedded beside it (no request, so
// pages opened from files draw too) with the vendored vega-embed, at the width of its column;
// without JavaScript the static SVG in <noscript> shows. Long tables and code blocks show
// their first rows or lines and a button for the rest (a page stays short enough to scan);
// identifiers cut short in a table cell (paths at their start, so the file name shows) show
// in full on hover (title) and on a tap.
(function () {
  "use strict";
  var LONG_TABLE_PX = 600; // tables taller than this show their first rows and "Show all"
  var FIRST_ROWS_PX = 360; // about the height of the rows they show
  var FIRST_LINES = 6; // lines a long code block shows before "Show all"
  var LONG_CODE = 12; // code blocks with more lines than this are shortened

  function charts() {
    document.querySelectorAll("figure.vl-chart").forEach(function (fig) {
      var target = fig.querySelector(".vl-target");
      var dark = document.body.getAttribute("data-md-color-scheme") === "slate";
      var spec;
      try {
        spec = JSON.parse(fig.querySelector("script.vl-spec").textContent);
      } catch (err) {
        fig.setAttribute("data-error", String(err));
        console.error(err);
        return;
      }
      window.vegaEmbed(target, spec, {actions: false, renderer: "svg", theme: dark ? "dark" : undefined})
        .then(function () { fig.setAttribute("data-rendered", "true"); })
        .catch(function (err) { fig.setAttribute("data-error", String(err)); console.error(err); });
    });
  }

  function more(after, text, show) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "md-button show-all";
    button.textContent = text;
    button.addEventListener("click", function () { show(); button.remove(); });
    after.insertAdjacentElement("afterend", button);
  }

  function longCode() {
    document.querySelectorAll(".md-typeset pre > code").forEach(function (code) {
      var lines = code.textContent.split("\n").length;
      if (lines <= LONG_CODE) return;
      var pre = code.parentElement;
      pre.style.maxHeight = (FIRST_LINES * 1.4) + "em";
      pre.style.overflowY = "hidden";
      more(pre.closest(".highlight") || pre, "Show all " + lines + " lines", function () {
        pre.style.maxHeight = "";
        pre.style.overflowY = "";
      });
    });
  }

  function longTables() {
    document.querySelectorAll(".md-typeset table:not([class])").forEach(function (table) {
      var body = table.tBodies[0];
      if (!body || table.offsetHeight <= LONG_TABLE_PX) return;
      var top = body.rows[0].offsetTop;
      var first = 1;
      while (first < body.rows.length && body.rows[first].offsetTop - top < FIRST_ROWS_PX) first++;
      var rows = Array.prototype.slice.call(body.rows, first);
      rows.forEach(function (row) { row.hidden = true; });
      more(table.closest(".md-typeset__scrollwrap") || table, "Show all " + body.rows.length + " rows",
        function () { rows.forEach(function (row) { row.hidden = false; }); });
    });
  }

  function identifiers() {
    document.querySelectorAll(".md-typeset td code").forEach(function (code) {
      if (code.scrollWidth > code.clientWidth) {
        var text = code.textContent;
        code.title = text;
        if (text.indexOf("/") !== -1) {
          // a path: cut at its start, so that the file name shows ("…/gnmt/result_0.txt")
          var inner = document.createElement("span");
          inner.dir = "ltr";
          inner.textContent = text;
          code.replaceChildren(inner);
          code.classList.add("tail");
        }
        code.tabIndex = 0;
        code.addEventListener("click", function () { code.classList.toggle("full"); });
      }
    });
  }

  // the system a link names (systems/<round>.html#<system>) opens its section's details
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var details = id && document.getElementById(id) && document.getElementById(id).nextElementSibling;
    if (details && details.tagName === "DETAILS") details.open = true;
  }

  function init() {
    charts(); longTables(); longCode(); identifiers(); openTarget();
    window.addEventListener("hashchange", openTarget);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
