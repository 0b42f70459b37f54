-- full_size_ratios: two accelerator models side by side on the same workload at full size
-- (local runs of scale throughput: compute throughput on synthetic data, data loading not
-- included), per benchmark, precision, accelerator count and interconnect: the newest run of
-- each model, its throughput per accelerator (median and the slowest and fastest timed window), its
-- fractions of the official throughput and of the matmul ceiling (throughput_fractions) and
-- its time to train projected from measured throughput (projection). Model b is the one
-- after model a in name order (H200-SXM after H100-SXM); the ratio b / a is of the
-- throughputs per accelerator averaged over the runs of the system of each side's newest run
-- (the same machine and configuration; each run's median window),
-- the statistic printed, with the percentile-bootstrap interval over those runs (never over
-- the timed windows of one run, which are not independent; none from fewer than 3 runs a
-- side). One accelerator has no link: its runs count whatever link its server recorded.
WITH newest AS (
    SELECT *
    FROM throughput_fractions
    QUALIFY row_number() OVER (
        PARTITION BY benchmark, precision, accelerators, accelerator_model,
            CASE WHEN accelerators > 1 THEN interconnect END
        ORDER BY run_start_unix_s DESC, run_id) = 1
),
sides AS (
    SELECT
        n.*, p.projected_minutes, p.projected_ci_low_minutes,
        p.projected_ci_high_minutes, p.checked_submissions, p.checked_median_abs_error_pct
        , s.runs, s.rates
    FROM newest AS n
    LEFT JOIN projection AS p USING (run_id)
    JOIN (
        -- the runs of the newest run's system (the same machine and configuration)
        SELECT
            system_id, benchmark, precision, accelerators, count(*) AS runs,
            list_sort(list(samples_per_s_per_accelerator)) AS rates
        FROM throughput_fractions
        WHERE samples_per_s_per_accelerator > 0
        GROUP BY ALL
    ) AS s
        ON s.system_id = n.system_id AND s.benchmark = n.benchmark
        AND s.precision = n.precision AND s.accelerators = n.accelerators
),
pairs AS (
    SELECT
        a.benchmark, a.precision, a.accelerators,
        CASE WHEN a.accelerators > 1 THEN a.interconnect END AS interconnect, a.evidence,
        a.accelerator_model AS model_a, b.accelerator_model AS model_b,
        b.accelerator_model || ' against ' || a.accelerator_model AS comparison,
        a.run_id AS a_run_id, b.run_id AS b_run_id,
        list_avg(a.rates) AS a_samples_per_s_per_accelerator,
        a.window_min_samples_per_s_per_accelerator AS a_window_min_samples_per_s_per_accelerator,
        a.window_max_samples_per_s_per_accelerator AS a_window_max_samples_per_s_per_accelerator,
        list_avg(b.rates) AS b_samples_per_s_per_accelerator,
        b.window_min_samples_per_s_per_accelerator AS b_window_min_samples_per_s_per_accelerator,
        b.window_max_samples_per_s_per_accelerator AS b_window_max_samples_per_s_per_accelerator,
        list_avg(b.rates) / list_avg(a.rates) AS ratio,
        bootstrap_score_ratio(b.rates, 0, 0, a.rates, 0, 0) AS ci, a.runs AS a_runs,
        b.runs AS b_runs,
        a.official_fraction AS a_official_fraction, a.official_round AS a_official_round,
        a.official_system AS a_official_system,
        a.official_missing_reason AS a_official_missing_reason,
        b.official_fraction AS b_official_fraction, b.official_round AS b_official_round,
        b.official_system AS b_official_system,
        b.official_missing_reason AS b_official_missing_reason,
        a.ceiling_fraction AS a_ceiling_fraction, b.ceiling_fraction AS b_ceiling_fraction,
        a.projected_minutes AS a_projected_minutes,
        a.projected_ci_low_minutes AS a_projected_ci_low_minutes,
        a.projected_ci_high_minutes AS a_projected_ci_high_minutes,
        b.projected_minutes AS b_projected_minutes,
        b.projected_ci_low_minutes AS b_projected_ci_low_minutes,
        b.projected_ci_high_minutes AS b_projected_ci_high_minutes,
        coalesce(a.checked_submissions, b.checked_submissions) AS checked_submissions,
        coalesce(a.checked_median_abs_error_pct, b.checked_median_abs_error_pct)
            AS checked_median_abs_error_pct
    FROM sides AS a
    JOIN sides AS b
        ON b.benchmark = a.benchmark AND b.precision = a.precision
        AND b.accelerators = a.accelerators
        AND (a.accelerators = 1 OR b.interconnect IS NOT DISTINCT FROM a.interconnect)
        AND b.accelerator_model > a.accelerator_model
)
SELECT
    * EXCLUDE (ci, ratio, checked_submissions, checked_median_abs_error_pct, a_runs, b_runs),
    ratio AS b_over_a_ratio, ci.low AS b_over_a_ci_low_ratio, ci.high AS b_over_a_ci_high_ratio,
    'projected from measured throughput' AS projection_evidence, checked_submissions,
    checked_median_abs_error_pct, a_runs, b_runs
FROM pairs
ORDER BY model_a, model_b, accelerators, interconnect, benchmark, precision
