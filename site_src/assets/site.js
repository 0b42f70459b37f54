// Draws every chart on the page from the Vega-Lite spec embedded beside it (no request, so
// pages opened from files draw too) with the vendored vega-embed, at the width of its column;
// without JavaScript the static SVG in <noscript> shows. Long tables and code blocks show
// their first rows or lines and a button for the rest (a page stays short enough to scan);
// tables of more than 20 rows sort (click a heading) and filter (type words of a row), and
// on a phone a table of three columns or more is a card per row;
// identifiers cut short in a table cell (paths at their start, so the file name shows) show
// in full on hover (title) and on a tap; a table wider than its column says which of its
// columns are out of sight.
(function () {
  "use strict";
  var LONG_TABLE_PX = 600; // tables taller than this show their first rows and "Show all"
  var FIRST_ROWS_PX = 360; // about the height of the rows they show
  var FIRST_LINES = 6; // lines a long code block shows before "Show all"
  var LONG_CODE = 12; // code blocks with more lines than this are shortened
  var SORT_ROWS = 20; // tables with more rows than this sort and filter

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

  // The rows a table shows: those holding every word typed in its filter; while nothing is
  // typed and the table is folded to its first rows ("Show all" not pressed), only those.
  function showRows(table) {
    var words = table.filterWords || [];
    var limit = words.length || !table.firstRows ? Infinity : table.firstRows;
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
      var text = tr.textContent.toLowerCase();
      var match = words.every(function (w) { return text.indexOf(w) !== -1; });
      tr.hidden = !match || shown >= limit;
      if (!tr.hidden) shown++;
    });
  }

  function fold(table) {
    var body = table.tBodies[0];
    if (!body || table.offsetHeight <= LONG_TABLE_PX) return;
    var top = body.rows[0].offsetTop;
    var first = 1;
    while (first < body.rows.length && body.rows[first].offsetTop - top < FIRST_ROWS_PX) first++;
    table.firstRows = first;
    showRows(table);
    more(table.closest(".md-typeset__scrollwrap") || table, "Show all " + body.rows.length + " rows",
      function () { table.firstRows = 0; showRows(table); });
  }

  // A table in a closed section has no height yet: it folds when the section first opens.
  function longTables() {
    document.querySelectorAll(".md-typeset table:not([class])").forEach(function (table) {
      var closed = table.closest("details:not([open])");
      if (!closed) { fold(table); return; }
      closed.addEventListener("toggle", function opened() {
        closed.removeEventListener("toggle", opened);
        fold(table);
      });
    });
  }

  // A number where a cell starts with one ("12.5", "3 of 5", "1.2–1.4"), else the text.
  function sortKey(cell) {
    var text = cell.getAttribute("data-sort") || cell.textContent.trim();
    var n = parseFloat(text.replace(/,/g, ""));
    return isFinite(n) && /^[-\d.,]/.test(text) ? n : text.toLowerCase();
  }

  function sortable(table) {
    table.querySelectorAll("thead th").forEach(function (th, i) {
      th.setAttribute("role", "button");
      th.tabIndex = 0;
      th.title = "sort";
      function sort() {
        var body = table.tBodies[0];
        var up = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows).map(function (r, at) {
          return {row: r, key: r.cells[i] ? sortKey(r.cells[i]) : "", at: at};
        });
        rows.sort(function (a, b) {
          var x = a.key, y = b.key, c;
          if (typeof x === typeof y) c = typeof x === "number" ? x - y : x.localeCompare(y);
          else c = typeof x === "number" ? -1 : 1; // numbers before words, either way
          return (up || typeof x !== typeof y ? c : -c) || a.at - b.at;
        });
        rows.forEach(function (r) { body.appendChild(r.row); });
        showRows(table);
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  }

  function filterBox(table, input) {
    input.addEventListener("input", function () {
      table.filterWords = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      showRows(table);
    });
  }

  // Tables that ask for it (data-sortable, a filter box naming them) and every other table
  // of more than SORT_ROWS rows sort and filter.
  function sortFilter() {
    document.querySelectorAll("input.answer-filter[data-for]").forEach(function (input) {
      var table = document.getElementById(input.getAttribute("data-for"));
      if (table && table.tBodies[0]) { table.hasFilter = true; filterBox(table, input); }
    });
    document.querySelectorAll(".md-typeset table").forEach(function (table) {
      var body = table.tBodies[0];
      if (!body || !table.tHead) return;
      var long = !table.className && body.rows.length > SORT_ROWS;
      if (long && !table.hasFilter) {
        var input = document.createElement("input");
        input.className = "answer-filter";
        input.placeholder = "filter " + body.rows.length + " rows: type any words of a row";
        input.setAttribute("aria-label", "Filter the table's rows");
        (table.closest(".md-typeset__scrollwrap") || table).insertAdjacentElement("beforebegin", input);
        filterBox(table, input);
      }
      if (long || table.hasAttribute("data-sortable")) sortable(table);
    });
  }

  // Every cell carries its column's heading (data-label); on a phone a table of three columns
  // or more shows a card per row, each cell led by its heading, so no column is off-screen.
  function cards() {
    document.querySelectorAll(".md-typeset table:not(.answer-table):not(.guide-table)").forEach(function (table) {
      var head = table.tHead && table.tHead.rows[0];
      if (!head || !table.tBodies[0] || head.cells.length < 3) return;
      var names = Array.prototype.map.call(head.cells, function (th) { return th.textContent.trim(); });
      Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
        Array.prototype.forEach.call(tr.cells, function (td, i) {
          if (names[i]) td.setAttribute("data-label", names[i]);
        });
      });
      table.setAttribute("data-cards", "");
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

  // A table of more columns than fit beside each other on a laptop shows first what is
  // compared and the answer (the first data-shown columns of its box); a button above it
  // names the other columns and shows them (the table then scrolls sideways).
  function someColumns() {
    document.querySelectorAll(".some-columns[data-shown]").forEach(function (box) {
      var table = box.querySelector("table"), head = table && table.tHead && table.tHead.rows[0];
      var n = Number(box.getAttribute("data-shown"));
      if (!head || !(n < head.cells.length)) return;
      Array.prototype.forEach.call(table.rows, function (tr) {
        Array.prototype.forEach.call(tr.cells, function (cell, i) {
          if (i >= n) cell.classList.add("col-more");
        });
      });
      var names = Array.prototype.slice.call(head.cells, n).map(function (th) {
        return th.textContent.trim();
      });
      var more = "Show " + names.length + " more column" + (names.length > 1 ? "s" : "") +
        ": " + names.join(" · ");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "more-columns-button";
      button.textContent = more;
      button.setAttribute("aria-expanded", "false");
      button.addEventListener("click", function () {
        var all = box.classList.toggle("all-columns");
        button.setAttribute("aria-expanded", String(all));
        button.textContent = all ? "Show fewer columns" : more;
        sideways(box);
      });
      box.insertAdjacentElement("afterbegin", button);
    });
  }

  // A table wider than its column scrolls inside its own box: a line above it names the
  // columns out of sight to the right, so that none is hidden without a word (on a phone the
  // cards show every column and no line is needed). Tables in folded sections get theirs when
  // opened.
  function sideways(root) {
    root.querySelectorAll(".md-typeset__scrollwrap").forEach(function (wrap) {
      var table = wrap.querySelector("table"), head = table && table.tHead && table.tHead.rows[0];
      var old = wrap.previousElementSibling;
      if (old && old.classList.contains("more-columns")) old.remove();
      if (!head || !wrap.clientWidth || wrap.scrollWidth <= wrap.clientWidth + 2) return;
      var edge = wrap.getBoundingClientRect().right;
      var hidden = Array.prototype.filter.call(head.cells, function (th) {
        return th.getBoundingClientRect().right > edge + 2;
      }).map(function (th) { return th.textContent.trim(); });
      if (!hidden.length) return;
      var note = document.createElement("p");
      note.className = "more-columns";
      note.textContent = hidden.length + " more column" + (hidden.length > 1 ? "s" : "") +
        " to the right (scroll the table sideways): " + hidden.join(" · ") + " →";
      wrap.insertAdjacentElement("beforebegin", note);
    });
  }

  function init() {
    charts(); someColumns(); sortFilter(); longTables(); cards(); longCode(); identifiers();
    openTarget();
    sideways(document);
    document.querySelectorAll(".md-typeset details").forEach(function (d) {
      d.addEventListener("toggle", function () { if (d.open) sideways(d); });
    });
    window.addEventListener("hashchange", openTarget);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
