-- scores: MLPerf time-to-train score of each system x benchmark configuration.
-- Drops the fastest and the slowest scored run and averages the rest; a run that did not
-- converge counts as infinitely slow, so a score with one inside the average is unscorable.
WITH runs_in AS (
    SELECT
        r.*,
        coalesce(r.precision, '') AS precision_key,
        coalesce(r.interconnect, '') AS interconnect_key,
        coalesce(r.accelerators, -1) AS accelerators_key,
        CASE WHEN r.status = 'success' THEN r.time_to_train_s ELSE 'inf'::DOUBLE END AS t_s
    FROM store.runs AS r
    WHERE r.status <> 'aborted' AND r.source IN ('official', 'local')
),
ruled AS (
    SELECT
        runs_in.*,
        coalesce(exact.runs_required, anyb.runs_required, anyr.runs_required) AS runs_required,
        coalesce(exact.runs_scored, anyb.runs_scored, anyr.runs_scored) AS runs_scored,
        coalesce(exact.selection, anyb.selection, anyr.selection, 'all') AS selection
    FROM runs_in
    LEFT JOIN score_rules AS exact
        ON exact.source = runs_in.source AND exact.round = runs_in.round
        AND exact.benchmark = runs_in.benchmark
    LEFT JOIN score_rules AS anyb
        ON anyb.source = runs_in.source AND anyb.round = runs_in.round AND anyb.benchmark = '*'
    LEFT JOIN score_rules AS anyr
        ON anyr.source = runs_in.source AND anyr.round = '*' AND anyr.benchmark = '*'
),
grouped AS (
    SELECT
        *,
        count(*) OVER g AS runs_total,
        count(*) FILTER (WHERE status = 'success') OVER g AS runs_converged,
        -- order in which runs are eligible: all runs, or converged runs by start time
        CASE WHEN selection = 'first_converged_by_start' AND status = 'success'
             THEN row_number() OVER (
                 PARTITION BY source, round, submitter, system_id, benchmark, precision_key,
                     interconnect_key, accelerators_key, status
                 ORDER BY run_start_unix_s, run)
        END AS converged_order
    FROM ruled
    WINDOW g AS (PARTITION BY source, round, submitter, system_id, benchmark, precision_key,
                 interconnect_key, accelerators_key)
),
scored AS (
    SELECT *
    FROM grouped
    WHERE selection = 'all'
       OR (selection = 'first_converged_by_start' AND converged_order <= runs_scored)
),
ranked AS (
    SELECT
        *,
        row_number() OVER w AS rank_in_group,
        count(*) OVER (PARTITION BY source, round, submitter, system_id, benchmark,
                       precision_key, interconnect_key, accelerators_key) AS runs_in_score
    FROM scored
    WINDOW w AS (PARTITION BY source, round, submitter, system_id, benchmark, precision_key,
                 interconnect_key, accelerators_key ORDER BY t_s, run)
),
summary AS (
    SELECT
        source, round, submitter, any_value(division) AS division, system_id,
        any_value(system) AS system, benchmark,
        nullif(precision_key, '') AS precision, nullif(interconnect_key, '') AS interconnect,
        any_value(accelerator) AS accelerator, nullif(accelerators_key, -1) AS accelerators,
        any_value(nodes) AS nodes, any_value(scale) AS scale,
        any_value(runs_total) AS runs_total, any_value(runs_converged) AS runs_converged,
        any_value(runs_required) AS runs_required, any_value(runs_scored) AS runs_scored,
        any_value(runs_in_score) AS runs_in_score,
        avg(t_s) FILTER (WHERE rank_in_group > 1 AND rank_in_group < runs_in_score) AS mean_s,
        min(t_s) AS fastest_s,
        max(t_s) FILTER (WHERE rank_in_group < runs_in_score) AS kept_slowest_s
    FROM ranked
    GROUP BY source, round, submitter, system_id, benchmark, precision_key, interconnect_key,
        accelerators_key
)
SELECT
    source, round, submitter, division, system_id, system, benchmark, precision, interconnect,
    accelerator, accelerators, nodes, scale, runs_total, runs_converged,
    CASE WHEN reason IS NULL THEN runs_in_score - 2 ELSE 0 END AS runs_used,
    CASE WHEN reason IS NULL THEN mean_s / 60 END AS score_minutes,
    reason AS unscorable_reason
FROM (
    SELECT
        *,
        CASE
            WHEN runs_total < runs_required
                THEN format('{} runs present, the rules require {}', runs_total, runs_required)
            WHEN runs_scored IS NOT NULL AND runs_converged < runs_scored
                THEN format('{} runs converged, the rules score the first {}',
                            runs_converged, runs_scored)
            WHEN runs_in_score < 3
                THEN format('{} runs: too few to drop the fastest and the slowest', runs_in_score)
            WHEN isinf(kept_slowest_s)
                THEN format('{} of {} runs did not converge', runs_total - runs_converged,
                            runs_total)
        END AS reason
    FROM summary
)
ORDER BY source, round, submitter, system, benchmark, precision, interconnect, accelerators
