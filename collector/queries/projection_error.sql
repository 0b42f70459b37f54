-- projection_error: how far the projection misses on official submissions, per benchmark and
-- target: the spread of |error| of projection_check, leave-one-out.
SELECT
    benchmark, quality_target, count(*) AS submissions,
    list(DISTINCT round ORDER BY round) AS rounds,
    median(abs(error_pct)) AS median_abs_error_pct,
    quantile_cont(abs(error_pct), 0.9) AS p90_abs_error_pct,
    median(error_pct) AS median_error_pct,
    median(abs(timing_error_pct)) AS median_abs_timing_error_pct,
    median(abs(epochs_error_pct)) AS median_abs_epochs_error_pct
FROM projection_check
GROUP BY benchmark, quality_target
ORDER BY benchmark, quality_target
