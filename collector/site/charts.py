"""Vega-Lite charts, one small function each, built with Altair.

Every chart states its evidence kind in its title, carries an accessible description
(`description`, read out as the SVG's aria label), tooltips, error bars where the data has an
interval, and a log-scale toggle where values span more than a factor of ten (on at first).

Charts take the width of their column (`width: "container"`), from a 390 px phone to a
desktop: the row labels of dot charts sit above their row, across the plot, and are cut at a
word boundary to the width drawn (the full text is in the tooltip); a dot chart draws its first
TOP_ROWS rows in its order (the page lists every row in a table beside it); titles are broken
into lines. Value axes carry ticks at round numbers (1, 2, 5, 10 ...) and times read as durations
("45 s", "3.2 min", "2.1 h").
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from typing import Any

import altair as alt

from collector.site.model import Row

WIDE_RANGE = 10.0  # max/min ratio above which a chart offers a log scale
STATIC_WIDTH = 640  # px, the width of the static SVG drawn beside each chart
ROW_STEP = 30  # px per row of a dot chart: a line of label above the dot and its range
TOP_ROWS = 20  # rows a dot chart draws at most: its first in its order, readable on a phone
PLOT_HEIGHT = 260  # px, charts with a numeric y axis
CHAR_PX = 6.3  # mean width of a label character at 11 px, to cut labels to the width drawn
TITLE_CHARS = 40  # a title line, at most: fits a 390 px phone
AXIS_TITLE_CHARS = 48
MAX_TICKS = 6

# Vega expressions that print a tick or tooltip value `v` (in the chart's unit).
_MINUTES = (
    "({v}) == 0 ? '0' : abs({v}) < 1 ? format(({v}) * 60, ',.{d}~r') + ' s'"
    " : abs({v}) < 60 ? format({v}, ',.{d}~r') + ' min'"
    " : format(({v}) / 60, ',.{d}~r') + ' h'"
)
_NUMBER = "format({v}, ',.{d}~r')"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and value == value


def _numbers(rows: Sequence[Row], fields: Sequence[str]) -> list[float]:
    """The numbers (not NaN) in these fields of the rows."""
    return [r[f] for r in rows for f in fields if _number(r.get(f))]


def _positive(rows: Sequence[Row], fields: Sequence[str]) -> list[float]:
    return [v for v in _numbers(rows, fields) if v > 0]


def is_wide(rows: Sequence[Row], fields: Sequence[str]) -> bool:
    """Whether positive values in these fields span more than WIDE_RANGE."""
    values = _positive(rows, fields)
    return bool(values) and max(values) / min(values) > WIDE_RANGE


def log_first(rows: Sequence[Row], fields: Sequence[str]) -> bool:
    """Whether a chart offering a log scale starts with it: values that span orders of
    magnitude (a CPU beside GPUs) squash the rest against zero on a linear axis, but a log
    axis cannot show a value of zero or less (a run that was faster without NVLink)."""
    return all(v > 0 for v in _numbers(rows, fields))


def at_width(spec: dict[str, Any], width: int) -> dict[str, Any]:
    """A chart spec drawn at a fixed width (the static SVG), not the width of its column."""
    return {**spec, "width": width}


def value_text(expr: str, minutes: bool, digits: int = 2) -> str:
    """A Vega expression printing the number `expr` as people write it: a duration for a
    value in minutes ('45 s', '3.2 min', '2.1 h'), else with thousands separators."""
    return (_MINUTES if minutes else _NUMBER).format(v=expr, d=digits)


def _round_values(lo: float, hi: float, minutes: bool) -> list[float]:
    """Round values to tick a log axis from lo to hi: 1, 2, 5 x 10^k (for minutes: 1, 2, 5,
    10, 30 s and min, and 1, 2, 5 x 10^k h), thinned to decades (10 s, 1 min, 10 min, 1 h,
    10 h ...) where that would crowd the axis; the first is at most lo, the last at least hi."""
    if minutes:
        below = [s / 60 for s in (0.001, 0.01, 0.1)]
        fine = below + [s / 60 for s in (1, 2, 5, 10, 30)] + [1, 2, 5, 10, 30]
        fine += [60 * m * 10**k for k in range(5) for m in (1, 2, 5)]
        coarse = below + [1 / 60, 10 / 60, 1, 10] + [60 * 10**k for k in range(5)]
    else:
        fine = [m * 10.0**k for k in range(-6, 10) for m in (1, 2, 5)]
        coarse = [10.0**k for k in range(-6, 10)]
    for candidates in (fine, coarse):
        first = max([v for v in candidates if v <= lo] or candidates[:1])
        last = min([v for v in candidates if v >= hi] or candidates[-1:])
        ticks = [v for v in candidates if first <= v <= last]
        if len(ticks) <= MAX_TICKS + 2:
            return ticks
    k = math.ceil(len(ticks) / (MAX_TICKS + 2))
    return ticks[::k] + ticks[-1:] * bool((len(ticks) - 1) % k)


def _step(span: float) -> float:
    """A round step (1, 2, 5 x 10^k) giving at most MAX_TICKS - 1 intervals over span."""
    raw = span / (MAX_TICKS - 1) if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _linear_values(lo: float, hi: float, minutes: bool) -> list[float]:
    """Round ticks from min(lo, 0) to max(hi, 0); for minutes, steps that are round in the
    unit the largest value reads in (seconds, minutes or hours)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    unit = 1.0
    if minutes:
        top = max(abs(lo), abs(hi))
        unit = 1 / 60 if top < 2 else (60.0 if top >= 120 else 1.0)
    step = _step((hi - lo) / unit) * unit
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def _axis_scale(
    rows: Sequence[Row], fields: Sequence[str], title: str, param: str | None, minutes: bool
) -> tuple[alt.Axis, alt.Scale]:
    """The axis and scale of a value axis: ticks at round values over the data, on the linear
    axis and, where the chart has a log toggle `param`, on the log one (the plotted field is
    then log10 of the value)."""
    nums = [float(v) for v in _numbers(rows, fields)] or [0.0, 1.0]
    linear = _linear_values(min(nums), max(nums), minutes)
    values, domain = linear, [linear[0], linear[-1]]
    text = value_text("datum.value", minutes)
    if param is not None:
        positive = _positive(rows, fields) or [1.0]
        logs = [math.log10(v) for v in _round_values(min(positive), max(positive), minutes)]
        values, domain = _switch(param, logs, values), _switch(param, [logs[0], logs[-1]], domain)
        text = f"{param} ? {value_text('pow(10, datum.value)', minutes)} : {text}"
    lines = _lines(title, AXIS_TITLE_CHARS)
    common = {"title": lines, "labelOverlap": "greedy", "labelFlush": True, "grid": True}
    return (
        alt.Axis(values=values, labelExpr=text, **common),
        alt.Scale(domain=domain, nice=False, zero=False),
    )


def _switch(param: str, on: list[float], off: list[float]) -> alt.ExprRef:
    return alt.ExprRef(f"{param} ? {json.dumps(on)} : {json.dumps(off)}")


def _base(
    rows: Sequence[Row], fields: Sequence[str] = (), param: str | None = None, minutes: bool = False
) -> alt.Chart:
    """The rows as a chart's data, with `<field>_plot` columns (log10 of the field when the
    toggle `param` is on, else the field) and `<field>_text` columns (the value as the
    tooltip prints it)."""
    # a tuple: Altair copies a chart's lists, row by row, at every method called on it
    chart = alt.Chart(alt.Data(values=tuple(rows)))
    for f in fields:
        expr = (
            f"datum.{f}"
            if param is None
            else (f"{param} ? (datum.{f} > 0 ? log(datum.{f}) / LN10 : null) : datum.{f}")
        )
        chart = chart.transform_calculate(**{f"{f}_plot": expr})
    for f in fields:
        expr = f"isValid(datum.{f}) ? {value_text(f'datum.{f}', minutes, 3)} : ''"
        chart = chart.transform_calculate(**{f"{f}_text": expr})
    return chart


def _lines(text: str, width: int) -> str | list[str]:
    """Text broken at word boundaries into lines of at most `width` characters."""
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    return lines[0] if len(lines) == 1 else lines or text


def _fitted(text: str, room: str) -> str:
    """A Vega expression: the string `text` cut at a word boundary, with an ellipsis, to
    about the characters that fit in `room` px (a label longer than it reads in full in the
    tooltip)."""
    n = f"floor(({room}) / {CHAR_PX})"
    cut = f"lastindexof(substring({text}, 0, {n} - 1), ' ')"
    head = f"substring({text}, 0, {cut} > {n} / 2 ? {cut} : {n} - 1)"
    return f"length({text}) <= {n} ? {text} : replace({head}, regexp('[ ·,;:(]+$'), '') + ' …'"


def _finish(
    chart: alt.TopLevelMixin,
    title: str,
    description: str,
    param: str | None,
    on: bool = True,
    height: int | alt.Step = PLOT_HEIGHT,
) -> Any:
    """Top-level title, the width of the column, accessible description and the log toggle
    where offered (on at first when `on`). The title starts at the chart's left edge, on two
    lines where it names a benchmark ("benchmark:" / what and whose) and broken at words
    where longer, and legends go below the plot, one entry a line, labels cut to the width."""
    heading = alt.TitleParams(_title_lines(title), anchor="start", frame="group")
    chart = chart.properties(
        title=heading,
        description=description,
        width="container",
        height=height,
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
    )
    if param:
        chart = chart.add_params(
            alt.param(name=param, value=on, bind=alt.binding_checkbox(name="log scale "))
        )
    return chart.configure_legend(orient="bottom", direction="vertical")


def _color(field: str, title: str) -> alt.Color:
    """Colour by `field`, its legend labels cut at a word to the chart's width."""
    legend = alt.Legend(
        labelLimit=alt.ExprRef("max(width - 24, 60)"),
        labelExpr=_fitted("datum.label", "width - 24"),
    )
    return alt.Color(field, title=title, legend=legend)


def _title_lines(title: str) -> str | list[str]:
    head, colon, rest = title.partition(": ")
    if not colon:
        return _lines(title, TITLE_CHARS)
    parts = [head + ":", rest]
    return [line for part in parts for line in textwrap.wrap(part, TITLE_CHARS)]


ROW_MARK = "\u2063"  # between a dot chart row's label and its place (invisible separator)
TIME_MEASURE = "time to train (dot: score; bar: fastest to slowest run)"
# Tooltips of dot charts: (field, title); a title of None is the chart's measure.
TIME_TIPS = (
    ("label:N", "configuration"), ("system:N", "system"), ("kind:N", "evidence"),
    ("accelerators:Q", "accelerators"), ("value_text:N", "score"), ("low_text:N", "fastest run"),
    ("high_text:N", "slowest run"), ("runs_used:Q", "runs averaged"),
)  # fmt: skip
RATIO_TIPS = (
    ("label:N", "what"), ("kind:N", "evidence"), ("value_text:N", None),
    ("low_text:N", "interval low"), ("high_text:N", "interval high"), ("detail:N", "source"),
)  # fmt: skip


def dots(
    rows: Sequence[Row],
    title: str,
    description: str,
    measure: str,
    minutes: bool = False,
    tips: Sequence[tuple[str, str | None]] = RATIO_TIPS,
) -> alt.LayerChart:
    """One value per labelled row (dot) with its interval where it has one (bar): times to
    train (`minutes`: fastest first, read as durations) or ratios (largest first); of more
    than TOP_ROWS rows, the first TOP_ROWS in that order, its axis fitted to them; rows of equal
    value keep the order given (the tables rank them). A bar spans low to high under the dot.

    Rows: label, value, low and high (None where there is no interval), kind, and the fields
    that `tips` names.
    """
    first = sorted(rows, key=lambda r: r["value"] if minutes else -r["value"])[:TOP_ROWS]
    # each row its own place on the axis: rows labelled alike (a study's runs that differ in
    # what the label leaves out) would share one and draw fewer rows than the chart says
    rows = [{**r, "row": f"{r['label']}{ROW_MARK}{i}"} for i, r in enumerate(first)]
    fields = ("value", "low", "high")
    param = "log_value" if is_wide(rows, fields) else None
    base = _base(rows, fields, param, minutes)
    axis, scale = _axis_scale(rows, fields, measure, param, minutes)
    y = _row_labels("ascending" if minutes else "descending")
    tooltip = [alt.Tooltip(f, title=t or measure) for f, t in tips]
    dot = base.mark_point(filled=True, size=60).encode(
        y=y,
        x=alt.X("value_plot:Q", axis=axis, scale=scale),
        color=_color("kind:N", "evidence"),
        tooltip=tooltip,
    )
    layers = alt.layer(dot)
    # no bars where no row has both ends: a bar layer without data makes Vega warn of an
    # infinite extent
    if any(_number(r.get("low")) and _number(r.get("high")) for r in rows):
        rule = base.mark_rule().encode(
            y=y,
            x=alt.X("low_plot:Q", axis=axis, scale=scale),
            x2="high_plot:Q",
            tooltip=tooltip,
        )
        layers = alt.layer(rule, dot)
    on = log_first(rows, fields)
    return _finish(layers, title, description, param, on, alt.Step(ROW_STEP))


def _accelerators_axis(rows: Sequence[Row]) -> alt.X:
    """Accelerator counts on a log2 axis, ticks at the counts measured."""
    counts = sorted({r["accelerators"] for r in rows})
    return alt.X(
        "accelerators:Q",
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=counts, format="d", labelOverlap="greedy"),
        title="accelerators",
    )


def scaling(rows: Sequence[Row], title: str, description: str) -> alt.LayerChart:
    """Minutes to train against accelerator count, one line per series, with bars from the
    fastest to the slowest converged run.

    Rows: accelerators, score_minutes, fastest_minutes, slowest_minutes, series, kind.
    """
    fields = ("score_minutes", "fastest_minutes", "slowest_minutes")
    param = "log_scaling" if is_wide(rows, fields) else None
    base = _base(rows, fields, param, True)
    x = _accelerators_axis(rows)
    axis, scale = _axis_scale(rows, fields, "time to train", param, True)
    tooltip = [
        alt.Tooltip("series:N", title="configuration"),
        alt.Tooltip("kind:N", title="evidence"),
        alt.Tooltip("accelerators:Q"),
        alt.Tooltip("score_minutes_text:N", title="score"),
        alt.Tooltip("fastest_minutes_text:N", title="fastest run"),
        alt.Tooltip("slowest_minutes_text:N", title="slowest run"),
    ]
    color = _color("series:N", "configuration")
    bars = base.mark_rule().encode(
        x=x,
        y=alt.Y("fastest_minutes_plot:Q", axis=axis, scale=scale),
        y2="slowest_minutes_plot:Q",
        color=color,
        tooltip=tooltip,
    )
    line = base.mark_line(point=True).encode(
        x=x,
        y=alt.Y("score_minutes_plot:Q", axis=axis, scale=scale),
        color=color,
        tooltip=tooltip,
    )
    return _finish(alt.layer(bars, line), title, description, param, log_first(rows, fields))


def efficiency(rows: Sequence[Row], title: str, description: str) -> alt.LayerChart:
    """Percentage of linear against accelerator count on one server: a line per benchmark
    and link (dashed where NVLink peer-to-peer was disabled), a bar per point over its
    interval, a rule at 100% (linear).

    Rows: accelerators, value, low, high (None where there is no interval), series, link,
    value_text.
    """
    x = _accelerators_axis(rows)
    values = _positive(rows, ("value", "low", "high")) + [100.0]
    y_scale = alt.Scale(domain=[min(values) * 0.95, max(values) * 1.02], zero=False)
    axis = alt.Axis(title="% of linear (bar: 95% interval)", tickCount=MAX_TICKS)
    tooltip = [
        alt.Tooltip("series:N", title="benchmark"),
        alt.Tooltip("link:N", title="link"),
        alt.Tooltip("accelerators:Q"),
        alt.Tooltip("value_text:N", title="% of linear"),
    ]
    base = _base(rows)
    color = _color("series:N", "benchmark")
    # above the plot: beside the benchmarks' legend a phone would cut its long labels off
    legend = alt.Legend(
        symbolType="stroke", orient="top", labelLimit=alt.ExprRef("max(width - 24, 60)")
    )
    dash = alt.StrokeDash("link:N", title="link", legend=legend)
    bars = base.mark_rule().encode(
        x=x, y=alt.Y("low:Q", axis=axis, scale=y_scale), y2="high:Q", color=color
    )
    line = base.mark_line(point=True).encode(
        x=x,
        y=alt.Y("value:Q", axis=axis, scale=y_scale),
        color=color,
        strokeDash=dash,
        detail="link:N",
        tooltip=tooltip,
    )
    linear = alt.Chart(alt.Data(values=[{"linear": 100.0}])).mark_rule(strokeDash=[2, 3])
    layers = alt.layer(linear.encode(y=alt.Y("linear:Q", scale=y_scale)), bars, line)
    return _finish(layers, title, description, None)


def time_to_accuracy(rows: Sequence[Row], title: str, description: str) -> alt.Chart:
    """Quality against time since run start, one line per run, coloured by system.

    Rows: minutes, quality, system, run_id, run.
    """
    param = "log_tta" if is_wide(rows, ("minutes",)) else None
    base = _base(rows, ("minutes",), param, True)
    axis, scale = _axis_scale(rows, ("minutes",), "time since run start", param, True)
    chart = base.mark_line(point=alt.OverlayMarkDef(size=12), strokeWidth=1).encode(
        x=alt.X("minutes_plot:Q", axis=axis, scale=scale),
        y=alt.Y("quality:Q", title="quality (as logged)", scale=alt.Scale(zero=False)),
        color=_color("system:N", "system"),
        detail="run_id:N",
        tooltip=[
            alt.Tooltip("system:N"),
            alt.Tooltip("run:Q", title="run"),
            alt.Tooltip("minutes_text:N", title="time"),
            alt.Tooltip("quality:Q", format=".4~g"),
        ],
    )
    return _finish(chart, title, description, param)


def _row_labels(order: str) -> alt.Y:
    """The row axis of a dot chart: one row per observation (`row`: its label and place),
    sorted by value, its label above the row across the plot, cut at a word to the plot's
    width."""
    return alt.Y(
        "row:N",
        sort=alt.EncodingSortField("value", order=order),
        title=None,
        axis=alt.Axis(
            orient="left",
            labelAlign="left",
            labelBaseline="bottom",
            labelPadding=-3,
            labelOffset=-6,
            labelFontSize=11,
            labelLimit=alt.ExprRef("width"),
            labelExpr=_fitted(f"split(datum.label, '{ROW_MARK}')[0]", "width"),
            ticks=False,
            domain=False,
            labelOverlap=False,
        ),
    )
