-- full_size_ratios: two accelerator models side by side on the same workload at full size
-- (local runs of scale throughput: compute throughput on synthetic data, data loading not
-- included), per benchmark, precision, accelerator count and interconnect: the newest run of
-- each model, its throughput per accelerator (median and the slowest and fastest timed window), its
-- fractions of the official throughput and of the matmul ceiling (throughput_fractions) and
-- its time to train projected from measured throughput (projection). Model b is the one
-- after model a in name order (H200-SXM after H100-SXM); the ratio b / a is of the mean
-- window throughputs, with the percentile-bootstrap interval over the windows of both
-- (bootstrap_ratio). One accelerator has no link: of its runs the newest counts, whatever
-- link its server recorded.
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
    FROM newest AS n
    LEFT JOIN projection AS p USING (run_id)
),
pairs AS (
    SELECT
        a.benchmark, a.precision, a.accelerators,
        CASE WHEN a.accelerators > 1 THEN a.interconnect END AS interconnect, a.evidence,
        a.accelerator_model AS model_a, b.accelerator_model AS model_b,
        b.accelerator_model || ' against ' || a.accelerator_model AS comparison,
        a.run_id AS a_run_id, b.run_id AS b_run_id,
        a.samples_per_s_per_accelerator AS a_samples_per_s_per_accelerator,
        a.window_min_samples_per_s_per_accelerator AS a_window_min_samples_per_s_per_accelerator,
        a.window_max_samples_per_s_per_accelerator AS a_window_max_samples_per_s_per_accelerator,
        b.samples_per_s_per_accelerator AS b_samples_per_s_per_accelerator,
        b.window_min_samples_per_s_per_accelerator AS b_window_min_samples_per_s_per_accelerator,
        b.window_max_samples_per_s_per_accelerator AS b_window_max_samples_per_s_per_accelerator,
        list_avg(b.window_samples_per_s) / list_avg(a.window_samples_per_s) AS ratio,
        bootstrap_ratio(b.window_samples_per_s, a.window_samples_per_s) AS ci,
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
    * EXCLUDE (ci, ratio, checked_submissions, checked_median_abs_error_pct),
    ratio AS b_over_a_ratio, ci.low AS b_over_a_ci_low_ratio, ci.high AS b_over_a_ci_high_ratio,
    'projected from measured throughput' AS projection_evidence, checked_submissions,
    checked_median_abs_error_pct
FROM pairs
ORDER BY model_a, model_b, accelerators, interconnect, benchmark, precision
