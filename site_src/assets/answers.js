// Answers: the pickers of the Answers page, over the rows embedded in it (the derived tables
// site_smallest, site_model_pairs, site_nearest and site_cost); its long tables sort and filter
// as every page's do (site.js). Builds every answer with DOM nodes and textContent only.
(function () {
  "use strict";

  function el(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }

  // Three significant digits below 1000, whole numbers above: what the pages' numbers show.
  function fmt(x, digits) {
    if (x === null || x === undefined || !isFinite(Number(x))) return "—";
    var n = Number(x);
    if (Math.abs(n) >= 1000) return n.toFixed(0);
    var parts = n.toPrecision(digits || 3).split("e");
    if (parts[0].indexOf(".") !== -1) parts[0] = parts[0].replace(/0+$/, "").replace(/\.$/, "");
    return parts.join("e");
  }

  // "low–high", with the digits that tell the ends apart (up to six), never "12–12".
  function range(low, high) {
    var d = 3;
    while (d < 6 && low !== high && fmt(low, d) === fmt(high, d)) d++;
    return fmt(low, d) + "–" + fmt(high, d);
  }

  function minutes(m) { return m >= 120 ? fmt(m) + " min (" + fmt(m / 60) + " h)" : fmt(m) + " min"; }

  function byId(id) { return document.getElementById(id); }

  function options(select, values, labels) {
    var keep = select.value || select.getAttribute("data-default");
    select.replaceChildren();
    values.forEach(function (v, i) { select.appendChild(el("option", labels ? labels[i] : v, {value: String(v)})); });
    if (values.map(String).indexOf(String(keep)) !== -1) select.value = String(keep);
  }

  function unique(rows, key) {
    var seen = [];
    rows.forEach(function (r) { if (seen.indexOf(r[key]) === -1) seen.push(r[key]); });
    return seen;
  }

  function benchmarksOf(data, rows) {
    var have = unique(rows, "benchmark");
    var list = data.benchmarks.filter(function (b) { return have.indexOf(b.benchmark) !== -1; });
    return [list.map(function (b) { return b.benchmark; }), list.map(function (b) { return b.title; })];
  }

  function para(text, cls) { return el("p", text, cls ? {"class": cls} : {}); }
  // " to its quality target (eval loss 0.925)", or nothing where the round states none
  function target(text) { return text ? " to its quality target (" + text + ")" : ""; }

  function link(text, href) { return el("a", text, {href: href}); }

  // A card: a heading line, then label: value lines.
  function card(head, lines, cls) {
    var box = el("div", null, {"class": "answer-card" + (cls ? " " + cls : "")});
    box.appendChild(el("p", head, {"class": "answer-card-head"}));
    var dl = box.appendChild(el("dl"));
    lines.forEach(function (l) {
      if (l[1] === null || l[1] === undefined || l[1] === "") return;
      dl.appendChild(el("dt", l[0]));
      var dd = dl.appendChild(el("dd"));
      if (l[1] instanceof Node) dd.appendChild(l[1]); else dd.textContent = String(l[1]);
    });
    return box;
  }

  function scoreBasis(score, raw, rcp, fastest, slowest, runs) {
    var text = "score " + minutes(score);
    if (raw !== null && raw !== undefined) {
      text += " = olympic mean of the runs " + fmt(raw) + " min x RCP factor " + fmt(rcp, 4);
    }
    if (fastest !== null && fastest !== undefined) {
      text += "; runs " + range(fastest, slowest) + " min";
      if (score > slowest * 1.0005) text += " (the RCP factor puts the score above the slowest run)";
    }
    if (runs) text += "; " + runs + " converged runs";
    return text;
  }

  // 1. The smallest system within a deadline.
  function smallest(data) {
    var row = data.smallest.filter(function (r) {
      return r.benchmark === byId("smallest-benchmark").value &&
        r.deadline_hours === Number(byId("smallest-hours").value);
    })[0];
    var out = byId("smallest-answer");
    out.replaceChildren();
    if (!row) { out.appendChild(para("No official result of this workload.")); return; }
    var where = row.title + target(row.quality_target) + ", " + row.round +
      " (the newest round with an official result), within " + fmt(row.deadline_hours) +
      " h by the MLPerf score";
    if (row.smallest_accelerators === null) {
      out.appendChild(para("Nothing meets it: " + where + ". The fastest of " + row.configurations +
        " configurations: " + row.fastest_hardware + ", " + minutes(row.fastest_score_minutes) +
        " (" + row.fastest_division_availability + ").",
        "answer-summary"));
    } else {
      var size = row.smallest_accelerators === 0 ? "a CPU-only system (no accelerators)" :
        row.smallest_accelerators + " accelerators";
      out.appendChild(para("Smallest: " + size + ". " + where +
        "; vendors that meet it: " + row.vendors_meeting + " (of " + row.vendors_in_round +
        " in the round).", "answer-summary"));
      out.appendChild(card("At " + size, [
        ["Systems that meet it, fastest first", row.smallest_hardware],
        ["Division and availability of the best there", row.smallest_division_availability],
        ["Best score there", scoreBasis(row.smallest_score_minutes, row.smallest_raw_minutes,
          row.smallest_rcp_factor)],
        ["Configurations that meet it", row.configurations_meeting + " of " + row.configurations],
        ["Fastest of all", row.fastest_hardware + ", " + minutes(row.fastest_score_minutes) +
          " (" + row.fastest_division_availability + ")"]
      ]));
    }
    if (row.raw_only) {
      out.appendChild(para("Decided by the RCP factor: " + row.raw_only_hardware +
        ". Its runs meet the deadline; its score does not.", "answer-note"));
    }
    var more = out.appendChild(el("p"));
    more.appendChild(document.createTextNode("Every configuration, smallest or fastest first: "));
    more.appendChild(link("the Guide", "guide.html"));
    more.appendChild(document.createTextNode("; every result of the benchmark: "));
    more.appendChild(link(row.title + " on its page", row.href));
    more.appendChild(document.createTextNode("."));
  }

  // 2. Two accelerator models side by side.
  function pairsControls(data) {
    var b = byId("pairs-benchmark");
    if (!b.options.length) { var bl = benchmarksOf(data, data.pairs); options(b, bl[0], bl[1]); }
    var rows = data.pairs.filter(function (r) { return r.benchmark === b.value; });
    options(byId("pairs-count"), unique(rows, "accelerators").sort(function (x, y) { return x - y; }));
    var n = Number(byId("pairs-count").value);
    var models = unique(rows.filter(function (r) { return r.accelerators === n; }), "model_a").sort();
    options(byId("pairs-a"), models);
    options(byId("pairs-b"), models);
    if (byId("pairs-a").value === byId("pairs-b").value && models.length > 1) {
      byId("pairs-b").value = models.filter(function (m) { return m !== byId("pairs-a").value; })[0];
    }
  }

  function pairs(data) {
    pairsControls(data);
    var out = byId("pairs-answer");
    out.replaceChildren();
    var n = Number(byId("pairs-count").value);
    var r = data.pairs.filter(function (p) {
      return p.benchmark === byId("pairs-benchmark").value && p.accelerators === n &&
        p.model_a === byId("pairs-a").value && p.model_b === byId("pairs-b").value;
    })[0];
    if (!r) { out.appendChild(para("Pick two different models with a result at this count.")); return; }
    var verdict;
    var interval = r.ci_low === null ? " (no interval: under three runs of either)" :
      " (95% interval " + range(r.ci_low, r.ci_high) + ")";
    if (r.tie) verdict = "A tie: " + r.model_a + " and " + r.model_b + " are within the ±" + fmt(r.variance_pct) +
      "% run-to-run variance MLPerf allows or within noise, " + fmt(r.a_over_b_speed) + " x" + interval + ".";
    else if (r.a_over_b_speed >= 1) verdict = r.model_a + " trains " + fmt(r.a_over_b_speed) + " x as fast as " + r.model_b + interval + ".";
    else verdict = r.model_b + " trains " + fmt(1 / r.a_over_b_speed) + " x as fast as " + r.model_a +
      (r.ci_low === null ? interval : " (95% interval " + range(1 / r.ci_high, 1 / r.ci_low) + ")") + ".";
    out.appendChild(para(verdict + " " + r.accelerators + " accelerators each, one server, " + r.title +
      target(r.quality_target) + ", " + r.round + ", closed division, available systems.", "answer-summary"));
    [["a", r.model_a], ["b", r.model_b]].forEach(function (s) {
      var k = s[0];
      out.appendChild(card(s[1], [
        ["System", r["hardware_" + k] + " (" + r["submitter_" + k] + ")"],
        ["Time", scoreBasis(r["score_" + k + "_minutes"], r["raw_" + k + "_minutes"], r["rcp_" + k], null, null, r["runs_" + k])],
        ["Result logs", link("in the published results", r["logs_url_" + k])]
      ]));
    });
  }

  // 5. Can N x MODEL do it?
  function nearestControls(data) {
    var b = byId("nearest-benchmark");
    if (!b.options.length) { var bl = benchmarksOf(data, data.nearest); options(b, bl[0], bl[1]); }
    var rows = data.nearest.filter(function (r) { return r.benchmark === b.value; });
    options(byId("nearest-model"), unique(rows, "model").sort());
    var mine = rows.filter(function (r) { return r.model === byId("nearest-model").value; });
    options(byId("nearest-count"), unique(mine, "asked_accelerators").sort(function (x, y) { return x - y; }));
  }

  function nearest(data) {
    nearestControls(data);
    var out = byId("nearest-answer");
    out.replaceChildren();
    var hours = parseFloat(byId("nearest-hours").value);
    var n = Number(byId("nearest-count").value);
    var model = byId("nearest-model").value;
    var rows = data.nearest.filter(function (r) {
      return r.benchmark === byId("nearest-benchmark").value && r.model === model && r.asked_accelerators === n;
    });
    if (!rows.length) { out.appendChild(para("No evidence for this model and count.")); return; }
    if (!(hours > 0)) { out.appendChild(para("Type a deadline in hours.")); return; }
    var limit = hours * 60;
    var first = rows[0];
    var say = first.inferred_minutes <= limit ? "Likely yes" : "Likely no";
    if (first.step_rank === 1) say = first.inferred_minutes <= limit ? "Yes" : "No";
    out.appendChild(para(say + ": " + n + " x " + model + ", " + first.title + " within " + fmt(hours) +
      " h. Nearest evidence (" + first.evidence_kind + "): " + minutes(first.inferred_minutes) + ".", "answer-summary"));
    rows.forEach(function (r) {
      var quality = r.quality_target === null ? "" : " (quality target " +
        (r.quality_metric ? r.quality_metric + " " : "") + fmt(r.quality_target) + ")";
      var lines = [
        ["Evidence", r.hardware + ", " + r.round + quality],
        [r.step_rank === 4 ? "Projected time" : "Official",
          r.step_rank === 4 ? minutes(r.score_minutes) + " (interval " + range(r.fastest_minutes, r.slowest_minutes) + " min)" :
            scoreBasis(r.score_minutes, r.raw_score_minutes, r.rcp_scaling_factor, r.fastest_minutes, r.slowest_minutes, r.runs)],
        ["Step", r.step],
        ["For " + n + " x " + model, minutes(r.inferred_minutes) + (r.inferred_minutes <= limit ? ": within " : ": over ") + fmt(hours) + " h"]
      ];
      if (r.logs_url) lines.push(["Result logs", link("in the published results", r.logs_url)]);
      out.appendChild(card(r.evidence_kind, lines, r.step_rank === 4 ? "answer-projected" : ""));
    });
  }

  // 6. Cost and energy.
  var prices = {};
  function cost(data) {
    var b = byId("cost-benchmark");
    if (!b.options.length) { var bl = benchmarksOf(data, data.cost); options(b, bl[0], bl[1]); }
    var rows = data.cost.filter(function (r) { return r.benchmark === b.value; });
    var out = byId("cost-answer");
    out.replaceChildren();
    if (!rows.length) return;
    out.appendChild(para(rows.length + " accelerator models, " + rows[0].title + target(rows[0].quality_target) +
      ", " + rows[0].round + ", official MLPerf results (each row's division under its system); fewest accelerator-hours first.",
      "answer-summary"));
    var t = el("table", null, {"class": "answer-table", id: "cost-table"});
    var head = t.appendChild(el("thead")).appendChild(el("tr"));
    ["Model", "Time", "Energy", "Price, $ per accelerator-hour", "Cost"].forEach(function (c) { head.appendChild(el("th", c)); });
    var body = t.appendChild(el("tbody"));
    rows.forEach(function (r) {
      var tr = body.appendChild(el("tr"));
      var m = tr.appendChild(el("td", null, {"data-label": "Model"}));
      m.appendChild(el("strong", r.accelerator_model));
      m.appendChild(el("br"));
      m.appendChild(link(r.hardware, r.logs_url));
      m.appendChild(el("br"));
      m.appendChild(el("span", r.division + " division, " + (r.available ? "available" : "not available (preview or research)"),
        {"class": "answer-note"}));
      tr.appendChild(el("td", r.accelerators + " x " + minutes(r.score_minutes) + " = " + fmt(r.accelerator_hours) + " accelerator-hours", {"data-label": "Time"}));
      var ec = tr.appendChild(el("td", null, {"data-label": "Energy"}));
      if (r.energy_kwh !== null) {
        ec.textContent = fmt(r.energy_kwh) + " kWh at " + fmt(r.power_used_w) + " W (" + r.power_basis + ")";
      } else {
        // no power known: the reader may type the board power of their own datasheet
        var watts = ec.appendChild(el("input", null, {type: "number", min: "0", step: "any",
          placeholder: "W", "aria-label": "Board power in watts of " + r.accelerator_model, "class": "answer-price"}));
        var kwh = ec.appendChild(el("span", " board power not in the accelerator table: type it", {"class": "answer-note"}));
        watts.addEventListener("input", function () {
          var w = parseFloat(watts.value);
          kwh.textContent = w >= 0 ? " W: " + fmt(w * r.accelerator_hours / 1000) + " kWh (your figure)" :
            " board power not in the accelerator table: type it";
        });
      }
      var pc = tr.appendChild(el("td", null, {"data-label": "Price, $ per accelerator-hour"}));
      var key = r.accelerator_model;
      var value = prices[key] !== undefined ? prices[key] : (r.example_usd_per_accelerator_hour === null ? "" : String(r.example_usd_per_accelerator_hour));
      var input = pc.appendChild(el("input", null, {type: "number", min: "0", step: "any", value: value,
        placeholder: "type", "aria-label": "Price per accelerator-hour of " + key, "class": "answer-price"}));
      if (r.example_usd_per_accelerator_hour !== null) pc.appendChild(el("span", " example", {"class": "answer-note"}));
      var cell = tr.appendChild(el("td", null, {"data-label": "Cost", "class": "answer-value"}));
      function update() {
        var p = parseFloat(input.value);
        prices[key] = input.value;
        cell.textContent = p >= 0 ? "$" + fmt(p * r.accelerator_hours) : "type a price";
      }
      input.addEventListener("input", update);
      update();
    });
    out.appendChild(t);
  }

  function start() {
    var node = byId("answers-data");
    if (!node) return;
    var data = JSON.parse(node.textContent);
    var sb = byId("smallest-benchmark");
    sb.value = sb.getAttribute("data-default");
    [["smallest", smallest, ["smallest-benchmark", "smallest-hours"]],
      ["pairs", pairs, ["pairs-benchmark", "pairs-count", "pairs-a", "pairs-b"]],
      ["nearest", nearest, ["nearest-benchmark", "nearest-model", "nearest-count", "nearest-hours"]],
      ["cost", cost, ["cost-benchmark"]]].forEach(function (q) {
      q[2].forEach(function (id) {
        byId(id).addEventListener(byId(id).tagName === "INPUT" ? "input" : "change", function () { q[1](data); });
      });
      q[1](data);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
