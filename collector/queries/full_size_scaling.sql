-- full_size_scaling: data-parallel scaling on one machine at full size (local runs of scale
-- throughput: compute throughput on synthetic data, data loading not included). Each run on
-- several accelerators is set against the 1-accelerator run of the same campaign (submitter),
-- benchmark and precision: weak-scaling efficiency = its mean window throughput / (accelerators
-- x the 1-accelerator run's), the batch per accelerator being the same. A run with
-- peer-to-peer off (no-p2p: the same server with its GPU-to-GPU link unused) is also set
-- against the run of the same count with it on. Intervals: percentile bootstrap over the timed
-- windows of both runs (bootstrap_ratio). The newest run of each setting counts; one
-- accelerator has no link, so of its runs the newest whatever link was recorded.
WITH newest AS (
    SELECT *
    FROM throughput_fractions
    WHERE window_samples_per_s IS NOT NULL
    QUALIFY row_number() OVER (
        PARTITION BY submitter, benchmark, precision, accelerator_model, accelerators,
            CASE WHEN accelerators > 1 THEN interconnect END
        ORDER BY run_start_unix_s DESC, run_id) = 1
),
pairs AS (
    SELECT
        n.submitter, n.benchmark, n.precision, n.accelerator_model, n.accelerators,
        n.interconnect, n.evidence, n.run_id, one.run_id AS one_run_id,
        d.run_id AS linked_run_id,
        n.samples_per_s_per_accelerator,
        one.samples_per_s_per_accelerator AS one_samples_per_s_per_accelerator,
        list_avg(n.window_samples_per_s)
            / (n.accelerators * list_avg(one.window_samples_per_s)) AS efficiency,
        bootstrap_ratio(n.window_samples_per_s, one.window_samples_per_s) AS efficiency_ci,
        list_avg(n.window_samples_per_s) / list_avg(d.window_samples_per_s) AS of_linked,
        bootstrap_ratio(n.window_samples_per_s, d.window_samples_per_s) AS of_linked_ci
    FROM newest AS n
    JOIN newest AS one
        ON one.submitter = n.submitter AND one.benchmark = n.benchmark
        AND one.precision = n.precision
        AND one.accelerator_model IS NOT DISTINCT FROM n.accelerator_model
        AND one.accelerators = 1
    LEFT JOIN newest AS d
        ON n.interconnect = 'no-p2p' AND d.interconnect IS DISTINCT FROM 'no-p2p'
        AND d.submitter = n.submitter AND d.benchmark = n.benchmark
        AND d.precision = n.precision AND d.accelerators = n.accelerators
        AND d.accelerator_model IS NOT DISTINCT FROM n.accelerator_model
    WHERE n.accelerators > 1
)
SELECT
    * EXCLUDE (efficiency, efficiency_ci, of_linked, of_linked_ci),
    100 * efficiency AS efficiency_pct,
    100 * efficiency_ci.low / accelerators AS efficiency_ci_low_pct,
    100 * efficiency_ci.high / accelerators AS efficiency_ci_high_pct,
    of_linked AS of_linked_ratio, of_linked_ci.low AS of_linked_ci_low_ratio,
    of_linked_ci.high AS of_linked_ci_high_ratio
FROM pairs
ORDER BY submitter, benchmark, precision, accelerators, interconnect = 'no-p2p', interconnect
