-- full_size_scaling: data-parallel scaling on one machine at full size (local runs of scale
-- throughput: compute throughput on synthetic data, data loading not included). Each setting on
-- several accelerators is set against the 1-accelerator setting of the same campaign
-- (submitter), benchmark and precision: weak-scaling efficiency = its mean per-accelerator
-- throughput over its runs / the 1-accelerator setting's (the batch per accelerator being the
-- same), from the very statistic printed beside it (samples_per_s_per_accelerator: each run's
-- median window / accelerators, averaged over the runs of the system of the setting's newest
-- run: the same machine and configuration). A setting with
-- peer-to-peer off (no-p2p) is also set against the setting of the same count with it on.
-- Intervals come from runs, never from the timed windows of one run: a percentile bootstrap
-- over the runs of both settings (bootstrap_score_ratio, nothing dropped), none from fewer than
-- 3 runs a side. An efficiency above 100% is withheld unless its interval lies above 100%.
WITH newest AS (
    -- the newest run of each setting (one accelerator has no link: whatever it recorded)
    SELECT *
    FROM throughput_fractions
    WHERE samples_per_s_per_accelerator > 0
    QUALIFY row_number() OVER (
        PARTITION BY submitter, benchmark, precision, accelerator_model, accelerators,
            CASE WHEN accelerators > 1 THEN interconnect END
        ORDER BY run_start_unix_s DESC, run_id) = 1
),
settings AS (
    -- with the runs of its system (the same machine and configuration) as the newest
    SELECT
        n.submitter, n.benchmark, n.precision, n.accelerator_model, n.accelerators,
        n.interconnect, n.evidence, n.run_id, count(*) AS runs,
        list_sort(list(t.samples_per_s_per_accelerator)) AS rates
    FROM newest AS n
    JOIN throughput_fractions AS t
        ON t.system_id = n.system_id AND t.benchmark = n.benchmark
        AND t.precision = n.precision AND t.accelerators = n.accelerators
        AND t.samples_per_s_per_accelerator > 0
    GROUP BY ALL
),
pairs AS (
    SELECT
        n.submitter, n.benchmark, n.precision, n.accelerator_model, n.accelerators,
        n.interconnect, n.evidence, n.run_id, one.run_id AS one_run_id,
        d.run_id AS linked_run_id, n.runs, one.runs AS one_runs,
        list_avg(n.rates) AS samples_per_s_per_accelerator,
        list_avg(one.rates) AS one_samples_per_s_per_accelerator,
        list_avg(n.rates) / list_avg(one.rates) AS efficiency,
        bootstrap_score_ratio(n.rates, 0, 0, one.rates, 0, 0) AS efficiency_ci,
        list_avg(n.rates) / list_avg(d.rates) AS of_linked,
        bootstrap_score_ratio(n.rates, 0, 0, d.rates, 0, 0) AS of_linked_ci
    FROM settings AS n
    JOIN settings AS one
        ON one.submitter = n.submitter AND one.benchmark = n.benchmark
        AND one.precision = n.precision
        AND one.accelerator_model IS NOT DISTINCT FROM n.accelerator_model
        AND one.accelerators = 1
    LEFT JOIN settings AS d
        ON n.interconnect = 'no-p2p' AND d.interconnect IS DISTINCT FROM 'no-p2p'
        AND d.submitter = n.submitter AND d.benchmark = n.benchmark
        AND d.precision = n.precision AND d.accelerators = n.accelerators
        AND d.accelerator_model IS NOT DISTINCT FROM n.accelerator_model
    WHERE n.accelerators > 1
),
judged AS (
    SELECT
        *,
        CASE WHEN efficiency > 1 + 1e-9 AND NOT coalesce(efficiency_ci.low > 1, false)
            THEN 'above 100% of linear without runs whose interval lies above it'
        END AS withheld_reason
    FROM pairs
)
SELECT
    * EXCLUDE (efficiency, efficiency_ci, of_linked, of_linked_ci, withheld_reason, runs,
        one_runs),
    CASE WHEN withheld_reason IS NULL THEN 100 * efficiency END AS efficiency_pct,
    CASE WHEN withheld_reason IS NULL THEN 100 * efficiency_ci.low END AS efficiency_ci_low_pct,
    CASE WHEN withheld_reason IS NULL THEN 100 * efficiency_ci.high END
        AS efficiency_ci_high_pct,
    of_linked AS of_linked_ratio, of_linked_ci.low AS of_linked_ci_low_ratio,
    of_linked_ci.high AS of_linked_ci_high_ratio, runs, one_runs, withheld_reason
FROM judged
ORDER BY submitter, benchmark, precision, accelerators, interconnect = 'no-p2p', interconnect
