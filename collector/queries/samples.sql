-- samples: the runs behind each configuration's time, as lists in ascending order of value,
-- for the intervals of configurations and of the ratio tables (bootstrap_score,
-- bootstrap_score_ratio) to resample. For runs (official, local) the list is the one the
-- configuration's score keeps or drops (scores.scored_minutes: converged runs times the RCP
-- factor) with the runs the olympic mean drops at each end; a configuration that cannot be
-- scored has none. For a published number, the number itself, nothing dropped. Sorted by
-- value, a list's order depends on its values alone, so the same runs always give the same
-- resamples. Internal: it feeds the intervals, it is not shown.
WITH observed AS (
    SELECT
        config_id, any_value(source) AS source, any_value(round) AS round,
        any_value(system_id) AS system_id, any_value(benchmark) AS benchmark,
        any_value(precision) AS precision, any_value(interconnect) AS interconnect,
        any_value(accelerators) AS accelerators, any_value(division) AS division,
        nullif(list_sort(list(minutes) FILTER (WHERE minutes IS NOT NULL)), []) AS published,
        nullif(list_sort(list(throughput_samples_per_s) FILTER (
            WHERE throughput_samples_per_s IS NOT NULL)), []) AS throughput_samples_per_s
    FROM observations
    GROUP BY config_id
)
SELECT
    o.config_id,
    CASE WHEN o.source = 'published' THEN o.published ELSE s.scored_minutes END AS minutes,
    CASE WHEN o.source = 'published' THEN 0 ELSE s.dropped_low END AS dropped_low,
    CASE WHEN o.source = 'published' THEN 0 ELSE s.dropped_high END AS dropped_high,
    o.throughput_samples_per_s
FROM observed AS o
LEFT JOIN scores AS s
    ON o.source <> 'published' AND s.source = o.source AND s.round = o.round
    AND s.system_id = o.system_id AND s.benchmark = o.benchmark AND s.division = o.division
    AND s.precision IS NOT DISTINCT FROM o.precision
    AND s.interconnect IS NOT DISTINCT FROM o.interconnect
    AND s.accelerators IS NOT DISTINCT FROM o.accelerators
    AND s.score_minutes IS NOT NULL
