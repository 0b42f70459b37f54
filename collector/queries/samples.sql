-- samples: the runs behind each configuration's means, as lists in ascending order of value,
-- for configurations (bootstrap_mean) and the ratio tables (bootstrap_ratio) to resample.
-- Sorted by value, a list's order depends on its values alone (not on ids or on how the rows
-- were read), so the same runs always give the same resamples. Internal: it feeds the
-- intervals, it is not shown.
SELECT
    config_id,
    nullif(list_sort(list(minutes) FILTER (WHERE minutes IS NOT NULL)), []) AS minutes,
    nullif(list_sort(list(throughput_samples_per_s) FILTER (
        WHERE throughput_samples_per_s IS NOT NULL)), []) AS throughput_samples_per_s
FROM observations
GROUP BY config_id
