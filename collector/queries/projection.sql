-- projection: time to train projected from measured throughput, for local full-size runs
-- (scale throughput: compute throughput on synthetic data). Samples to reach the v0.5 quality
-- target at the run's global batch come from the official runs nearest in global batch
-- (samples_to_target); projected time = samples / measured samples per second + the run's
-- measured start-up + the evaluations those official runs made per epoch x the run's measured
-- seconds per evaluation. The interval is bootstrap_ratio of the official samples to target over
-- the run's timed windows' throughputs, plus the same costs; beside it, how far the method
-- misses on official submissions of the benchmark and target (projection_error).
-- The language models (token_benchmarks), whose official logs count samples, not epochs, are
-- anchored instead on the official result of the same accelerator model that
-- throughput_fractions sets beside the run: its mean time to train x its samples per second
-- per accelerator / the run's, at its accelerator count (projected_accelerators); the interval
-- from the run's slowest and fastest windows; not yet checked on official submissions.
WITH local_runs AS (
    SELECT
        r.run_id, r.submitter, r.system_id, r.system, r.benchmark, r.accelerator,
        r.accelerators, r.nodes, r.precision, r.interconnect, r.scale, r.run_start_unix_s,
        r.throughput_samples_per_s, r.log_path, t.quality_target
    FROM store.runs AS r
    JOIN quality_targets AS t ON t.round = 'v0.5' AND t.benchmark = r.benchmark
    WHERE r.source = 'local' AND r.scale = 'throughput' AND r.throughput_samples_per_s > 0
),
marks AS (
    SELECT e.run_id, e.key, e.time_unix_s, e.value_text, e.seq
    FROM store.events AS e
    WHERE e.key IN ('global_batch_size', 'epoch_start', 'block_start', 'eval_start',
                    'eval_stop', 'tracked_stats')
        AND e.run_id IN (SELECT run_id FROM local_runs)
),
measured AS (
    -- per run: global batch, the first epoch or block start, the timed windows' throughputs
    SELECT
        run_id,
        any_value(try_cast(trim(value_text, '"') AS DOUBLE))
            FILTER (WHERE key = 'global_batch_size') AS global_batch,
        min(time_unix_s) FILTER (WHERE key IN ('epoch_start', 'block_start')) AS first_start_s,
        list_sort(list(CASE WHEN key = 'tracked_stats'
            THEN try_cast(json_extract(value_text, '$.throughput') AS DOUBLE) END)
            FILTER (WHERE key = 'tracked_stats')) AS window_samples_per_s
    FROM marks
    GROUP BY run_id
),
evaluations AS (
    -- seconds of each evaluation: the k-th eval_start to the k-th eval_stop
    SELECT run_id, median(stop_s - start_s) AS eval_s
    FROM (
        SELECT run_id, key, time_unix_s,
            row_number() OVER (PARTITION BY run_id, key ORDER BY seq) AS k
        FROM marks WHERE key IN ('eval_start', 'eval_stop')
    ) PIVOT (any_value(time_unix_s) FOR key IN ('eval_start' AS start_s, 'eval_stop' AS stop_s)
        GROUP BY run_id, k)
    GROUP BY run_id
),
official AS (
    -- the v0.5 round's runs: its targets are the ones projected to
    SELECT * FROM samples_to_target WHERE round = 'v0.5' AND global_batch > 0
),
nearest AS (
    -- the official runs of the benchmark at the least distance in global batch
    SELECT l.run_id, o.samples_to_target, o.evals_per_epoch, o.epochs_to_target, o.log_path
    FROM local_runs AS l
    JOIN measured AS m USING (run_id)
    JOIN official AS o ON o.benchmark = l.benchmark AND o.quality_target = l.quality_target
    QUALIFY abs(ln(o.global_batch / m.global_batch))
        = min(abs(ln(o.global_batch / m.global_batch))) OVER (PARTITION BY l.run_id)
),
reference AS (
    SELECT
        run_id, count(*) AS official_runs, avg(samples_to_target) AS samples_to_target,
        list_sort(list(samples_to_target::DOUBLE)) AS samples_list,
        median(epochs_to_target * evals_per_epoch) AS evals,
        string_agg(DISTINCT log_path, ' ' ORDER BY log_path) AS official_logs
    FROM nearest
    GROUP BY run_id
),
costed AS (
    SELECT
        l.*, m.global_batch, m.window_samples_per_s, r.official_runs, r.samples_to_target,
        r.samples_list, r.evals, r.official_logs,
        greatest(m.first_start_s - l.run_start_unix_s, 0) AS startup_s, e.eval_s,
        coalesce(greatest(m.first_start_s - l.run_start_unix_s, 0), 0)
            + r.evals * coalesce(e.eval_s, 0) AS costs_s
    FROM local_runs AS l
    JOIN measured AS m USING (run_id)
    JOIN reference AS r USING (run_id)
    LEFT JOIN evaluations AS e USING (run_id)
)
SELECT
    run_id, submitter, system_id, system, benchmark, accelerator, accelerators, precision,
    interconnect, scale, 'projected from measured throughput' AS evidence, quality_target,
    global_batch, throughput_samples_per_s, len(window_samples_per_s) AS windows,
    samples_to_target, official_runs, startup_s, evals, eval_s,
    (samples_to_target / throughput_samples_per_s + costs_s) / 60 AS projected_minutes,
    (ci.low + costs_s) / 60 AS projected_ci_low_minutes,
    (ci.high + costs_s) / 60 AS projected_ci_high_minutes,
    checked.submissions AS checked_submissions,
    checked.median_abs_error_pct AS checked_median_abs_error_pct,
    checked.p90_abs_error_pct AS checked_p90_abs_error_pct, official_logs, log_path,
    'v0.5' AS round, accelerators AS projected_accelerators, nodes AS projected_nodes
FROM (
    SELECT *, bootstrap_ratio(samples_list, window_samples_per_s) AS ci FROM costed
) AS c
LEFT JOIN projection_error AS checked USING (benchmark, quality_target)
UNION ALL
SELECT
    f.run_id, f.submitter, f.system_id, f.system, f.benchmark, r.accelerator, f.accelerators,
    f.precision, f.interconnect, r.scale, 'projected from measured throughput' AS evidence,
    t.quality_target, f.global_batch, r.throughput_samples_per_s, f.windows,
    NULL AS samples_to_target, f.official_runs, NULL AS startup_s, NULL AS evals,
    NULL AS eval_s,
    f.official_minutes * f.official_samples_per_s_per_accelerator
        / f.samples_per_s_per_accelerator AS projected_minutes,
    f.official_minutes * f.official_samples_per_s_per_accelerator
        / f.window_max_samples_per_s_per_accelerator AS projected_ci_low_minutes,
    f.official_minutes * f.official_samples_per_s_per_accelerator
        / f.window_min_samples_per_s_per_accelerator AS projected_ci_high_minutes,
    NULL AS checked_submissions, NULL AS checked_median_abs_error_pct,
    NULL AS checked_p90_abs_error_pct, f.official_log_path AS official_logs, f.log_path,
    t.round, f.official_accelerators AS projected_accelerators,
    f.official_nodes AS projected_nodes
FROM throughput_fractions AS f
JOIN store.runs AS r USING (run_id)
JOIN quality_targets AS t ON t.benchmark = f.benchmark AND t.round = 'v5.1'
WHERE f.tokens_per_sample IS NOT NULL AND f.official_fraction IS NOT NULL
ORDER BY benchmark, system_id, accelerators, precision, interconnect, run_id
