-- projection_anchored: time to train of each local full-size bf16 run on one accelerator
-- projected by anchoring on the nearest official result of an accelerator measured here too (an
-- official score, in the closed division, of the same benchmark model as the local workload,
-- definitions.yml): that score x the anchor model's local throughput per accelerator (one
-- accelerator, bf16, mean over its shipped runs) / this run's, at the anchor's accelerator
-- count, so that the local implementation's own efficiency cancels. Nearest: the run's own
-- accelerator model if it has such a result, else another; then the newest round, the fewest
-- accelerators and the fastest score. Beside it, the anchored method's error measured out of
-- sample on pairs of official results (projection_anchor_error; null where no pair could be
-- checked).
WITH anchors AS (
    SELECT *, local_samples_per_s_per_accelerator AS rate FROM projection_anchors
),
runs AS (
    -- one accelerator, as the anchors' local rates: a run on several carries this
    -- implementation's data-parallel efficiency at its count, which nothing would cancel
    SELECT * FROM throughput_fractions
    WHERE precision = 'bf16' AND accelerators = 1 AND samples_per_s_per_accelerator > 0
),
chosen AS (
    SELECT r.run_id, a.*
    FROM runs AS r
    JOIN anchors AS a USING (benchmark)
    QUALIFY row_number() OVER (
        PARTITION BY r.run_id
        ORDER BY a.accelerator_model IS DISTINCT FROM r.accelerator_model,
            round_key(a.round) DESC, a.accelerators, a.score_minutes, a.system_id) = 1
)
SELECT
    r.run_id, r.submitter, r.system_id, r.system, r.benchmark, r.accelerator_model,
    r.accelerators, r.precision, r.interconnect,
    'projected from measured throughput' AS evidence,
    r.samples_per_s_per_accelerator, c.accelerator_model AS anchor_model,
    c.round AS anchor_round, c.system_id AS anchor_system_id, c.system AS anchor_system,
    c.accelerators AS projected_accelerators, c.nodes AS projected_nodes,
    c.score_minutes AS anchor_minutes, c.rate AS anchor_local_samples_per_s_per_accelerator,
    c.local_runs AS anchor_local_runs,
    c.score_minutes * c.rate / r.samples_per_s_per_accelerator AS projected_minutes,
    e.pairs AS checked_pairs, e.median_abs_error_pct AS checked_median_abs_error_pct,
    e.p90_abs_error_pct AS checked_p90_abs_error_pct
FROM runs AS r
JOIN chosen AS c USING (run_id)
LEFT JOIN (
    SELECT benchmark, sum(pairs)::BIGINT AS pairs,
        -- one row per pair of models: the benchmark's rows pooled would need the pairs
        any_value(median_abs_error_pct) AS median_abs_error_pct,
        any_value(p90_abs_error_pct) AS p90_abs_error_pct
    FROM projection_anchor_error
    WHERE benchmark <> 'all'
    GROUP BY benchmark
    HAVING count(*) = 1
) AS e ON e.benchmark = r.benchmark
ORDER BY r.benchmark, r.accelerator_model, r.accelerators, r.interconnect, r.run_id
