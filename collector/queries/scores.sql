-- scores: MLPerf time-to-train score of each system x benchmark configuration.
-- Drops the fastest and the slowest scored run and averages the rest; a run that did not
-- converge counts as infinitely slow, so a score with one inside the average is unscorable.
WITH runs_in AS NOT MATERIALIZED (
    SELECT
        source, round, submitter, division, system_id, system, benchmark, run, status,
        run_start_unix_s, accelerator, nodes, scale,
        coalesce(precision, '') AS precision_key,
        coalesce(interconnect, '') AS interconnect_key,
        coalesce(accelerators, -1) AS accelerators_key,
        CASE WHEN status = 'success' THEN time_to_train_s ELSE 'inf'::DOUBLE END AS t_s
    FROM store.runs
    WHERE status <> 'aborted' AND source IN ('official', 'local')
),
rules AS (
    -- the rule of each source, round and benchmark present: field by field, the exact rule,
    -- else the round's rule for every benchmark, else the source's rule for every round
    SELECT
        k.source, k.round, k.benchmark,
        coalesce(exact.runs_required, anyb.runs_required, anyr.runs_required) AS runs_required,
        coalesce(exact.runs_scored, anyb.runs_scored, anyr.runs_scored) AS runs_scored,
        coalesce(exact.selection, anyb.selection, anyr.selection, 'all') AS selection
    FROM (SELECT DISTINCT source, round, benchmark FROM runs_in) AS k
    LEFT JOIN score_rules AS exact
        ON exact.source = k.source AND exact.round = k.round AND exact.benchmark = k.benchmark
    LEFT JOIN score_rules AS anyb
        ON anyb.source = k.source AND anyb.round = k.round AND anyb.benchmark = '*'
    LEFT JOIN score_rules AS anyr
        ON anyr.source = k.source AND anyr.round = '*' AND anyr.benchmark = '*'
),
grouped AS (
    -- every run of a group, and its converged runs in start order where the rule scores the
    -- first converged ones
    SELECT
        r.source, r.round, r.submitter, r.system_id, r.benchmark, r.precision_key,
        r.interconnect_key, r.accelerators_key,
        any_value(r.division) AS division, any_value(r.system) AS system,
        any_value(r.accelerator) AS accelerator, any_value(r.nodes) AS nodes,
        any_value(r.scale) AS scale, any_value(rules.runs_required) AS runs_required,
        any_value(rules.runs_scored) AS runs_scored, any_value(rules.selection) AS selection,
        count(*) AS runs_total, count(*) FILTER (WHERE r.status = 'success') AS runs_converged,
        list(r.t_s) AS times,
        list(r.t_s ORDER BY r.run_start_unix_s, r.run) FILTER (
            WHERE rules.selection = 'first_converged_by_start' AND r.status = 'success')
            AS converged_by_start
    FROM runs_in AS r
    JOIN rules
        ON rules.source IS NOT DISTINCT FROM r.source AND rules.round IS NOT DISTINCT FROM r.round
        AND rules.benchmark IS NOT DISTINCT FROM r.benchmark
    GROUP BY r.source, r.round, r.submitter, r.system_id, r.benchmark, r.precision_key,
        r.interconnect_key, r.accelerators_key
),
scored AS (
    -- the scored runs' times, fastest first: all runs, or the first converged ones by start
    SELECT
        *,
        list_sort(CASE selection
            WHEN 'all' THEN times
            WHEN 'first_converged_by_start' THEN converged_by_start[1:runs_scored]
        END, 'ASC', 'NULLS LAST') AS kept
    FROM grouped
),
summary AS (
    SELECT
        *, len(kept) AS runs_in_score, list_avg(kept[2:-2]) AS mean_s,
        list_max(kept[:-2]) AS kept_slowest_s
    FROM scored
    WHERE len(kept) > 0
)
SELECT
    source, round, submitter, division, system_id, system, benchmark,
    nullif(precision_key, '') AS precision, nullif(interconnect_key, '') AS interconnect,
    accelerator, nullif(accelerators_key, -1) AS accelerators, nodes, scale, runs_total,
    runs_converged,
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
