-- projection_anchor_error: how far the anchored projection misses out of sample, per benchmark
-- and pair of accelerator models (both directions), and over all pairs (benchmark 'all'):
-- median and 90th percentile of |error| over projection_anchor_check, and how many pairs.
WITH checked AS (
    SELECT benchmark, least(target_model, anchor_model) || ' / '
        || greatest(target_model, anchor_model) AS models, error_pct
    FROM projection_anchor_check
)
SELECT
    benchmark, models, count(*) AS pairs,
    median(abs(error_pct)) AS median_abs_error_pct,
    quantile_cont(abs(error_pct), 0.9) AS p90_abs_error_pct,
    median(error_pct) AS median_error_pct
FROM checked
GROUP BY benchmark, models
UNION ALL
SELECT
    'all', 'all', count(*), median(abs(error_pct)), quantile_cont(abs(error_pct), 0.9),
    median(error_pct)
FROM checked
HAVING count(*) > 0
ORDER BY benchmark = 'all', benchmark, models
