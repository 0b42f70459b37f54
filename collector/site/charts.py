"""Vega-Lite charts, one small function each, built with Altair.

Every chart states its evidence kind in its title, carries an accessible description
(`description`, read out as the SVG's aria label), tooltips, error bars where the data has an
interval, and a log-scale toggle where values span more than a factor of ten (on at first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt

Row = dict[str, Any]
WIDTH = 560  # plot area of charts with a numeric y axis, px
DOT_WIDTH = 400  # plot area beside LABEL_LIMIT_PX of row labels: together a desktop column
WIDE_RANGE = 10.0  # max/min ratio above which a chart offers a log scale
LABEL_LIMIT_PX = 320  # row labels of dot charts (system, round, hardware; how measured)


def _values(rows: Sequence[Row], fields: Sequence[str]) -> list[float]:
    return [r[f] for r in rows for f in fields if isinstance(r.get(f), int | float) and r[f] > 0]


def is_wide(rows: Sequence[Row], fields: Sequence[str]) -> bool:
    """Whether positive values in these fields span more than WIDE_RANGE."""
    values = _values(rows, fields)
    return bool(values) and max(values) / min(values) > WIDE_RANGE


def log_first(rows: Sequence[Row], fields: Sequence[str]) -> bool:
    """Whether a chart offering a log scale starts with it: values that span orders of
    magnitude (a CPU beside GPUs) squash the rest against zero on a linear axis, but a log
    axis cannot show a value of zero or less (a run that was faster without NVLink)."""
    return not any(isinstance(r.get(f), int | float) and r[f] <= 0 for r in rows for f in fields)


def _log_param(name: str, on: bool) -> alt.Parameter:
    return alt.param(name=name, value=on, bind=alt.binding_checkbox(name="log scale "))


def _scaled(chart: alt.Chart, fields: Sequence[str], param: str | None) -> alt.Chart:
    """Add `<field>_plot` columns: log10 of the field when the toggle is on, else the field."""
    for f in fields:
        expr = (
            f"datum.{f}"
            if param is None
            else (f"{param} ? (datum.{f} > 0 ? log(datum.{f}) / LN10 : null) : datum.{f}")
        )
        chart = chart.transform_calculate(**{f"{f}_plot": expr})
    return chart


def _axis(title: str, param: str | None) -> alt.Axis:
    if param is None:
        return alt.Axis(title=title)
    return alt.Axis(
        title=title,
        labelExpr=f"{param} ? format(pow(10, datum.value), '.3~g') : datum.label",
    )


def _base(rows: Sequence[Row], title: str, description: str) -> alt.Chart:
    return alt.Chart(alt.Data(values=list(rows)))


def _finish(
    chart: alt.TopLevelMixin,
    title: str,
    description: str,
    param: str | None,
    on: bool = True,
    width: int = WIDTH,
) -> Any:
    """Top-level title, width, accessible description and the log toggle where offered (on
    at first when `on`). The title starts at the chart's left edge, on two lines where it
    names a benchmark ("benchmark:" / what and whose), and legends go below the plot, one
    entry a line, so that a chart keeps within the page's content column."""
    heading = alt.TitleParams(_title_lines(title), anchor="start", frame="bounds")
    chart = chart.properties(title=heading, description=description, width=width)
    if param:
        chart = chart.add_params(_log_param(param, on))
    return chart.configure_legend(orient="bottom", direction="vertical")


def _title_lines(title: str) -> str | list[str]:
    head, colon, rest = title.partition(": ")
    return [head + ":", rest] if colon else title


def time_to_train(rows: Sequence[Row], title: str, description: str) -> alt.LayerChart:
    """Score in minutes per configuration (dot) with fastest-slowest run bars.

    Rows: label, minutes, fastest_minutes, slowest_minutes, system, accelerators, runs_used, kind.
    """
    fields = ("minutes", "fastest_minutes", "slowest_minutes")
    param = "log_time" if is_wide(rows, fields) else None
    base = _scaled(_base(rows, title, description), fields, param)
    y = _row_labels("minutes", "ascending")
    x_title = "minutes to train (dot: score; bar: fastest to slowest converged run)"
    tooltip = [
        alt.Tooltip("system:N", title="system"),
        alt.Tooltip("kind:N", title="evidence"),
        alt.Tooltip("accelerators:Q", title="accelerators"),
        alt.Tooltip("minutes:Q", title="score, minutes", format=".4~g"),
        alt.Tooltip("fastest_minutes:Q", title="fastest run", format=".4~g"),
        alt.Tooltip("slowest_minutes:Q", title="slowest run", format=".4~g"),
        alt.Tooltip("runs_used:Q", title="runs averaged"),
    ]
    layers = _dot_and_range(base, rows, y, fields, x_title, param, tooltip)
    return _finish(layers, title, description, param, width=DOT_WIDTH)


def scaling(rows: Sequence[Row], title: str, description: str) -> alt.LayerChart:
    """A measure (speedup or minutes) against accelerator count, with interval error bars.

    Rows: accelerators, value, low, high, series, measure (axis title), kind.
    """
    fields = ("value", "low", "high")
    param = "log_scaling" if is_wide(rows, fields) else None
    measure = rows[0]["measure"] if rows else "value"
    base = _scaled(_base(rows, title, description), fields, param)
    counts = sorted({r["accelerators"] for r in rows})
    x = alt.X(
        "accelerators:Q",
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=counts, format="d"),  # ticks at the measured counts only
        title="accelerators",
    )
    tooltip = [
        alt.Tooltip("series:N", title="configuration"),
        alt.Tooltip("kind:N", title="evidence"),
        alt.Tooltip("accelerators:Q"),
        alt.Tooltip("value:Q", title=measure, format=".4~g"),
        alt.Tooltip("low:Q", title="interval low", format=".4~g"),
        alt.Tooltip("high:Q", title="interval high", format=".4~g"),
    ]
    color = alt.Color(
        "series:N", title="configuration", legend=alt.Legend(labelLimit=LABEL_LIMIT_PX)
    )
    bars = base.mark_rule().encode(
        x=x,
        y=alt.Y("low_plot:Q", axis=_axis(measure, param)),
        y2="high_plot:Q",
        color=color,
        tooltip=tooltip,
    )
    line = base.mark_line(point=True).encode(
        x=x,
        y=alt.Y("value_plot:Q", axis=_axis(measure, param)),
        color=color,
        tooltip=tooltip,
    )
    return _finish(alt.layer(bars, line), title, description, param, log_first(rows, fields))


def time_to_accuracy(rows: Sequence[Row], title: str, description: str) -> alt.Chart:
    """Quality against minutes since run start, one line per run, coloured by system.

    Rows: minutes, quality, system, run_id, run.
    """
    param = "log_tta" if is_wide(rows, ("minutes",)) else None
    base = _scaled(_base(rows, title, description), ("minutes",), param)
    chart = base.mark_line(point=alt.OverlayMarkDef(size=12), strokeWidth=1).encode(
        x=alt.X("minutes_plot:Q", axis=_axis("minutes since run start", param)),
        y=alt.Y("quality:Q", title="quality (as logged)", scale=alt.Scale(zero=False)),
        color=alt.Color("system:N", title="system"),
        detail="run_id:N",
        tooltip=[
            alt.Tooltip("system:N"),
            alt.Tooltip("run:Q", title="run"),
            alt.Tooltip("minutes:Q", format=".4~g"),
            alt.Tooltip("quality:Q", format=".4~g"),
        ],
    )
    return _finish(chart, title, description, param)


def bars(rows: Sequence[Row], title: str, description: str, measure: str) -> alt.LayerChart:
    """One value per labelled row (dot) with its interval where it has one (bar).

    Rows: label, value, low (optional), high (optional), kind, detail.
    """
    fields = ("value", "low", "high")
    param = "log_value" if is_wide(rows, fields) else None
    base = _scaled(_base(rows, title, description), fields, param)
    y = _row_labels("value", "descending")
    tooltip = [
        alt.Tooltip("label:N", title="what"),
        alt.Tooltip("kind:N", title="evidence"),
        alt.Tooltip("value:Q", title=measure, format=".4~g"),
        alt.Tooltip("low:Q", title="interval low", format=".4~g"),
        alt.Tooltip("high:Q", title="interval high", format=".4~g"),
        alt.Tooltip("detail:N", title="source"),
    ]
    layers = _dot_and_range(base, rows, y, fields, measure, param, tooltip)
    return _finish(layers, title, description, param, log_first(rows, fields), DOT_WIDTH)


def _row_labels(field: str, order: str) -> alt.Y:
    """The row axis of a dot chart: one labelled row per observation, sorted by `field`."""
    return alt.Y(
        "label:N",
        sort=alt.EncodingSortField(field, order=order),
        title=None,
        axis=alt.Axis(labelLimit=LABEL_LIMIT_PX),
    )


def _dot_and_range(
    base: alt.Chart,
    rows: Sequence[Row],
    y: alt.Y,
    fields: tuple[str, str, str],
    x_title: str,
    param: str | None,
    tooltip: list[alt.Tooltip],
) -> alt.LayerChart:
    """A range bar (low to high) under a dot (the value), coloured by kind of evidence; the
    dots alone where no row has both ends (a bar layer without data makes Vega warn of an
    infinite extent)."""
    value, low, high = fields
    dots = base.mark_point(filled=True, size=60).encode(
        y=y,
        x=alt.X(f"{value}_plot:Q", axis=_axis(x_title, param)),
        color=alt.Color("kind:N", title="evidence"),
        tooltip=tooltip,
    )
    if not any(_number(r.get(low)) and _number(r.get(high)) for r in rows):
        return alt.layer(dots)
    rule = base.mark_rule().encode(
        y=y,
        x=alt.X(f"{low}_plot:Q", axis=_axis(x_title, param)),
        x2=f"{high}_plot:Q",
        tooltip=tooltip,
    )
    return alt.layer(rule, dots)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and value == value
