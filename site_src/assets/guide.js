// Guide: filters the configurations embedded in the page by workload and deadline.
// Builds the answer with DOM nodes and textContent only, so no data string is parsed as HTML.
(function () {
  "use strict";

  function el(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }

  // Three significant digits below 1000, whole numbers above, trailing zeros of a fraction
  // dropped: what the pages' own numbers show (480 stays 480, 8.00 becomes 8).
  function fmt(x) {
    if (x === null || x === undefined || !isFinite(Number(x))) return "—";
    var n = Number(x);
    if (Math.abs(n) >= 1000) return n.toFixed(0);
    var parts = n.toPrecision(3).split("e");
    if (parts[0].indexOf(".") !== -1) parts[0] = parts[0].replace(/0+$/, "").replace(/\.$/, "");
    return parts.join("e");
  }

  function deadlineHours() {
    var picked = document.querySelector('input[name="guide-deadline"]:checked');
    if (!picked) return null;
    if (picked.value === "custom") {
      var h = parseFloat(document.getElementById("guide-hours").value);
      return isFinite(h) && h > 0 ? h : null;
    }
    return parseFloat(picked.value);
  }

  function matches(row, workload) {
    if (workload.indexOf("domain:") === 0) return row.domain === workload.slice(7);
    return row.benchmark === workload;
  }

  function link(text, href) {
    var a = el("a", text);
    a.setAttribute("href", href);
    return a;
  }

  function render(data) {
    var workload = document.getElementById("guide-workload").value;
    var hours = deadlineHours();
    var answer = document.getElementById("guide-answer");
    answer.replaceChildren();
    if (hours === null) {
      answer.appendChild(el("p", "Type a deadline in hours."));
      return;
    }
    var limit = hours * 60;
    var rows = data.configurations.filter(function (r) {
      return matches(r, workload) && r.minutes <= limit;
    });
    var all = data.configurations.filter(function (r) { return matches(r, workload); });
    // counted per kind of evidence: a proxy-scale run meeting a deadline says nothing about
    // an official one
    answer.appendChild(el("p", rows.length ?
      "Configurations that train within " + fmt(hours) + " h (" + fmt(limit) +
      " minutes), by kind of evidence:" :
      "None of the " + all.length + " configurations trains within " + fmt(hours) + " h (" +
      fmt(limit) + " minutes).", {"class": "guide-summary"}));
    if (!rows.length) return;
    // one table per kind of evidence, official results first: kinds are never ranked as one
    var kinds = rows.map(function (r) { return r.kind; }).filter(function (k, i, all) {
      return all.indexOf(k) === i;
    }).sort(function (a, b) { return evidenceRank(a) - evidenceRank(b); });
    kinds.forEach(function (kind) {
      var mine = rows.filter(function (r) { return r.kind === kind; });
      var of = all.filter(function (r) { return r.kind === kind; }).length;
      answer.appendChild(el("h3", kind + ": " + mine.length + " of " + of + " configuration" +
        (of === 1 ? "" : "s"), {"class": "guide-kind"}));
      if (kind.indexOf("proxy scale") !== -1) {
        answer.appendChild(el("p", "Proxy-scale runs train a smaller problem than MLPerf's; " +
          "their minutes compare with each other, not with official results."));
      }
      // wide on a phone: the table scrolls in its own box, the page does not
      answer.appendChild(el("div", null, {"class": "guide-scroll"})).appendChild(
        table(mine, limit));
    });
  }

  function evidenceRank(kind) {
    if (kind.indexOf("official") === 0) return 0;
    return kind.indexOf("proxy scale") === -1 ? 1 : 2;
  }

  function table(rows, limit) {
    var t = el("table", null, {"class": "guide-table"});
    var head = el("tr");
    ["accelerators", "hardware", "system", "workload", "minutes", "run range",
     "meets deadline", "reasons"].forEach(function (h) { head.appendChild(el("th", h)); });
    t.appendChild(el("thead")).appendChild(head);
    var body = t.appendChild(el("tbody"));
    rows.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", r.accelerators || "CPU only"));
      tr.appendChild(el("td", r.hardware + (r.interconnect ? ", " + r.interconnect : "") +
        (r.precision ? ", " + r.precision : "")));
      var sys = el("td");
      sys.appendChild(link(r.submitter + " " + r.system + " " + r.round, r.system_href));
      tr.appendChild(sys);
      var wl = el("td");
      wl.appendChild(link(r.title, r.benchmark_href));
      tr.appendChild(wl);
      tr.appendChild(el("td", fmt(r.minutes)));
      tr.appendChild(el("td", fmt(r.fastest_minutes) + "–" + fmt(r.slowest_minutes)));
      tr.appendChild(el("td", r.slowest_minutes !== null && r.slowest_minutes <= limit
        ? "all runs" : "on average"));
      tr.appendChild(el("td", (r.reasons || []).join("; ") || "—"));
      body.appendChild(tr);
    });
    return t;
  }

  function renderAdvice(data) {
    var box = document.getElementById("guide-advice");
    var workload = document.getElementById("guide-workload").value;
    var domain = workload.indexOf("domain:") === 0 ? workload.slice(7) : null;
    if (!domain) {
      var row = data.configurations.find(function (r) { return r.benchmark === workload; });
      domain = row ? row.domain : null;
    }
    box.replaceChildren();
    var lines = (domain && data.advice[domain]) || [];
    box.appendChild(el("h2", "Advice for " + (domain || "this workload")));
    if (!lines.length) {
      box.appendChild(el("p", "No scaling, precision or interconnect measurement for this " +
        "domain yet, so no advice."));
      return;
    }
    var ul = box.appendChild(el("ul"));
    lines.forEach(function (t) { ul.appendChild(el("li", t)); });
  }

  function init() {
    var source = document.getElementById("guide-data");
    if (!source) return;
    var data = JSON.parse(source.textContent);
    var update = function () { render(data); renderAdvice(data); };
    document.getElementById("guide-form").addEventListener("input", update);
    document.getElementById("guide-form").addEventListener("change", update);
    update();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
