// Guide: filters the guide table embedded in the page (the rows of the site_guide table) by
// workload, deadline and hardware, ranks what meets the deadline by time, newest round first.
// Builds the answer with DOM nodes and textContent only, so no data string is parsed as HTML.
(function () {
  "use strict";

  var SHOWN = 10;  // rows of an answer; the rest are counted and left to the download
  var LABELS = {official: "official MLPerf", local: "measured here", projected: "projected from full-size throughput"};

  function el(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }

  // Three significant digits below 1000, whole numbers above, trailing zeros dropped: what
  // the pages' own numbers show.
  function fmt(x) {
    if (x === null || x === undefined || !isFinite(Number(x))) return "—";
    var n = Number(x);
    if (Math.abs(n) >= 1000) return n.toFixed(0);
    var parts = n.toPrecision(3).split("e");
    if (parts[0].indexOf(".") !== -1) parts[0] = parts[0].replace(/0+$/, "").replace(/\.$/, "");
    return parts.join("e");
  }

  // A duration in minutes as people say it: "45 s", "3.2 min", "2.1 h".
  function duration(minutes) {
    var m = Math.abs(minutes);
    if (m < 1) return fmt(m * 60) + " s";
    if (m < 120) return fmt(m) + " min";
    return fmt(m / 60) + " h";
  }

  function value(id) {
    var node = document.getElementById(id);
    return node ? node.value : "";
  }

  function roundKey(r) {
    return r.replace(/^v/, "").split(".").map(Number);
  }

  function newerFirst(a, b) {
    var x = roundKey(a.round), y = roundKey(b.round);
    for (var i = 0; i < Math.max(x.length, y.length); i++) {
      if ((x[i] || 0) !== (y[i] || 0)) return (y[i] || 0) - (x[i] || 0);
    }
    return 0;
  }

  // The rows of the workload that meet the hardware constraints (all but the deadline).
  function candidates(rows) {
    var bench = value("guide-workload");
    var most = parseInt(value("guide-max-accelerators"), 10);
    var hw = value("guide-hardware");
    var servers = value("guide-servers");
    var precision = value("guide-precision");
    return rows.filter(function (r) {
      if (r.benchmark !== bench) return false;
      if (isFinite(most) && !(r.accelerators && r.accelerators <= most)) return false;
      if (hw.indexOf("vendor:") === 0 && r.vendor !== hw.slice(7)) return false;
      if (hw.indexOf("model:") === 0 && r.accelerator_model !== hw.slice(6)) return false;
      if (servers === "one" && r.one_server !== true) return false;
      if (servers === "several" && r.one_server !== false) return false;
      // official results state no precision: a filter on it keeps them ("not stated")
      if (precision && r.precision && r.precision !== precision) return false;
      return true;
    });
  }

  // The answer as data: what meets the deadline (ranked) or the closest, and what to say.
  function answer(data, hours) {
    var limit = hours * 60;
    var pool = candidates(data.rows);
    var smallestFirst = value("guide-order") === "smallest";
    var ranked = pool.slice().sort(function (a, b) {
      if (smallestFirst) {
        var size = (a.accelerators || Infinity) - (b.accelerators || Infinity);
        return newerFirst(a, b) || (isNaN(size) ? 0 : size) || a.score_minutes - b.score_minutes;
      }
      return newerFirst(a, b) || a.score_minutes - b.score_minutes;
    });
    var fits = ranked.filter(function (r) { return r.score_minutes <= limit; });
    var closest = pool.slice().sort(function (a, b) { return a.score_minutes - b.score_minutes; });
    return {pool: pool, fits: fits, closest: closest.slice(0, 3), limit: limit};
  }

  function table(rows, limit) {
    var t = el("table", null, {"class": "guide-table"});
    var head = t.appendChild(el("thead")).appendChild(el("tr"));
    ["hardware", "time", "spare", "every run in time", "range of runs", "round", "evidence",
      "precision", "submitter"]
      .forEach(function (c) { head.appendChild(el("th", c)); });
    var body = t.appendChild(el("tbody"));
    var names = Array.prototype.map.call(head.children, function (th) { return th.textContent; });
    rows.forEach(function (r) {
      var tr = body.appendChild(el("tr"));
      tr.appendChild(el("td", r.hardware, {title: r.system_id || ""}));
      // a score with an RCP factor above 1 shows its runs' mean beside it
      var scaled = r.rcp_scaling_factor && r.rcp_scaling_factor > 1;
      tr.appendChild(el("td", fmt(r.score_minutes) + " min" + (scaled ? " (runs' mean " +
        fmt(r.raw_score_minutes) + " x RCP " + Number(r.rcp_scaling_factor).toPrecision(4) +
        (r.raw_score_minutes <= limit && r.score_minutes > limit ? "; the runs meet it, the score does not" : "") +
        ")" : "")));
      var spare = limit - r.score_minutes;
      tr.appendChild(el("td", spare >= 0 ? duration(spare) : duration(-spare) + " late"));
      tr.appendChild(el("td", r.slowest_minutes !== null && r.slowest_minutes <= limit ? "yes" : "no"));
      tr.appendChild(el("td", fmt(r.fastest_minutes) + "–" + fmt(r.slowest_minutes) + " min"));
      tr.appendChild(el("td", r.round));
      tr.appendChild(el("td", LABELS[r.evidence] || r.evidence));
      tr.appendChild(el("td", r.precision || "not stated"));
      tr.appendChild(el("td", r.submitter));
    });
    // each cell names its column, so a phone can show a row as a card (answers.css)
    Array.prototype.forEach.call(body.children, function (tr) {
      Array.prototype.forEach.call(tr.children, function (td, i) { td.setAttribute("data-label", names[i]); });
    });
    var box = el("div", null, {"class": "guide-scroll"});
    box.appendChild(t);
    return box;
  }

  function render(data) {
    var out = document.getElementById("guide-answer");
    out.replaceChildren();
    var hours = parseFloat(value("guide-hours"));
    if (!(isFinite(hours) && hours > 0)) {
      out.appendChild(el("p", "Type a deadline in hours."));
      return;
    }
    var a = answer(data, hours);
    var bench = value("guide-workload");
    var official = data.rows.filter(function (r) {
      return r.benchmark === bench && r.evidence === "official";
    });
    var last = official.slice().sort(newerFirst)[0];
    if (!official.length) {
      out.appendChild(el("p", "This benchmark has no official result in this data.",
        {"class": "guide-note"}));
    } else if (last.round !== data.newest_round) {
      out.appendChild(el("p", "No official result in " + data.newest_round +
        ": the newest is from " + last.round + ".", {"class": "guide-note"}));
    }
    if (!a.pool.length) {
      out.appendChild(el("p", "No configuration matches these constraints; loosen them.",
        {"class": "guide-summary"}));
      return;
    }
    if (a.fits.length) {
      out.appendChild(el("p", a.fits.length + " of " + a.pool.length +
        " configurations train it within " + fmt(hours) + " h (" + fmt(a.limit) + " min), " +
        (value("guide-order") === "smallest" ? "fewest accelerators first:" : "fastest first:"),
        {"class": "guide-summary"}));
      var shown = out.appendChild(table(a.fits.slice(0, SHOWN), a.limit));
      if (a.fits.length > SHOWN) {
        var more = out.appendChild(el("p", "And " + (a.fits.length - SHOWN) + " more: ",
          {"class": "guide-more"}));
        var all = more.appendChild(el("button", "show all " + a.fits.length, {"type": "button"}));
        all.addEventListener("click", function () {
          shown.replaceWith(table(a.fits, a.limit));
          more.remove();
        });
      }
    } else {
      out.appendChild(el("p", "Nothing meets " + fmt(hours) + " h (" + fmt(a.limit) +
        " min) among " + a.pool.length + " configurations. The closest:",
        {"class": "guide-summary"}));
      out.appendChild(table(a.closest, a.limit));
    }
    // configurations whose runs meet the deadline while their score (x RCP factor) does not
    var decided = a.pool.filter(function (r) {
      return r.raw_score_minutes !== null && r.raw_score_minutes !== undefined &&
        r.raw_score_minutes <= a.limit && r.score_minutes > a.limit;
    });
    if (decided.length) {
      out.appendChild(el("p", "Decided by the RCP factor (the score counts): " + decided.map(function (r) {
        return r.hardware + " (" + r.submitter + ", " + r.round + "), score " + fmt(r.score_minutes) + " min = runs' mean " +
          fmt(r.raw_score_minutes) + " min x " + Number(r.rcp_scaling_factor).toPrecision(4);
      }).join("; ") + ".", {"class": "guide-note"}));
    }
  }

  function start() {
    var node = document.getElementById("guide-data");
    if (!node) return;
    var data = JSON.parse(node.textContent);
    var form = document.getElementById("guide-form");
    // a field left after typing fires "change" as the next click lands: render again only
    // when a value changed, so that the click (e.g. "show all") is not lost to a new answer
    var last = null;
    function update() {
      var now = Array.prototype.map.call(form.elements || [], function (e) {
        return e.type === "checkbox" || e.type === "radio" ? e.checked : e.value;
      }).join("|");
      if (now === last && last !== null) return;
      last = now;
      render(data);
    }
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    update();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
