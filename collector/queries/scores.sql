-- scores: MLPerf time-to-train score of each system x benchmark configuration, by the rules
-- of its round (rules/*.yml), as MLCommons' result summarizer computes it: every run of the
-- configuration counts; a run that did not reach the target (failed, aborted or incomplete)
-- counts as infinitely slow; more of those than the rules allow leaves no score; else the
-- olympic average drops `dropped_each_end` runs at each end, times the RCP factor. Where the
-- round's checker fails a log with a line it cannot parse, or an init phase longer than it
-- allows, such a run does not converge.
WITH unparsable AS (
    SELECT DISTINCT log_sha256 FROM store.ingest_issues WHERE code = 'bad-line'
),
runs_in AS NOT MATERIALIZED (
    SELECT
        source, round, submitter, division, system_id, system, benchmark, run, status,
        run_start_unix_s, accelerator, nodes, scale, rcp_scaling_factor, time_to_train_s, init_s,
        coalesce(precision, '') AS precision_key,
        coalesce(interconnect, '') AS interconnect_key,
        coalesce(accelerators, -1) AS accelerators_key,
        u.log_sha256 IS NOT NULL AS has_unparsable_line
    FROM store.runs
    LEFT JOIN unparsable AS u USING (log_sha256)
    WHERE source IN ('official', 'local')
        -- a throughput-scale run trains to no target: it has no time to train to score
        AND scale IS DISTINCT FROM 'throughput'
),
rules AS (
    -- the rule of each source, round and benchmark present: the exact rule, else the
    -- source's rule for every round and benchmark; none where the round has no such benchmark
    SELECT
        k.source, k.round, k.benchmark,
        coalesce(exact.runs_required, anyr.runs_required) AS runs_required,
        coalesce(exact.runs_scored, anyr.runs_scored) AS runs_scored,
        coalesce(exact.selection, anyr.selection) AS selection,
        coalesce(exact.dropped_each_end, anyr.dropped_each_end) AS dropped_each_end,
        coalesce(exact.failed_allowed, anyr.failed_allowed) AS failed_allowed,
        coalesce(exact.rcp_scaling, anyr.rcp_scaling) AS rcp_scaling,
        coalesce(exact.unparsable_log_fails, anyr.unparsable_log_fails) AS unparsable_log_fails,
        coalesce(exact.init_limit_closed_minutes, anyr.init_limit_closed_minutes)
            AS init_limit_closed_minutes,
        coalesce(exact.init_limit_open_minutes, anyr.init_limit_open_minutes)
            AS init_limit_open_minutes
    FROM (SELECT DISTINCT source, round, benchmark FROM runs_in) AS k
    LEFT JOIN score_rules AS exact
        ON exact.source = k.source AND exact.round = k.round AND exact.benchmark = k.benchmark
    LEFT JOIN score_rules AS anyr
        ON anyr.source = k.source AND anyr.round = '*' AND anyr.benchmark = '*'
),
judged AS (
    -- converged: reached the target, and no unparsable line where the round fails such logs;
    -- a run that did not converge counts as infinitely slow
    SELECT *, CASE WHEN converged THEN time_to_train_s ELSE 'inf'::DOUBLE END AS t_s
    FROM (
        SELECT
            r.*, rules.runs_required, rules.runs_scored, rules.selection,
            rules.dropped_each_end, rules.failed_allowed, rules.rcp_scaling,
            r.status = 'success' AND NOT (
                coalesce(rules.unparsable_log_fails, false) AND r.has_unparsable_line
            ) AND NOT coalesce(r.init_s > 60 * CASE r.division
                WHEN 'open' THEN rules.init_limit_open_minutes
                ELSE rules.init_limit_closed_minutes END, false) AS converged
        FROM runs_in AS r
        JOIN rules
            ON rules.source IS NOT DISTINCT FROM r.source
            AND rules.round IS NOT DISTINCT FROM r.round
            AND rules.benchmark IS NOT DISTINCT FROM r.benchmark
    )
),
grouped AS (
    -- every run of a group, and its converged runs in start order where the rule scores the
    -- first converged ones
    SELECT
        r.source, r.round, r.submitter, r.system_id, r.benchmark, r.precision_key,
        r.interconnect_key, r.accelerators_key,
        -- the division most of its runs log: one shipped system logs two (v0.7 SIAT's ResNet-50,
        -- four runs closed and one open), and its score must not follow the rows' order
        mode(r.division) AS division, any_value(r.system) AS system,
        any_value(r.accelerator) AS accelerator, any_value(r.nodes) AS nodes,
        any_value(r.scale) AS scale, any_value(r.runs_required) AS runs_required,
        any_value(r.runs_scored) AS runs_scored, any_value(r.selection) AS selection,
        any_value(r.dropped_each_end) AS dropped_each_end,
        any_value(r.failed_allowed) AS failed_allowed,
        CASE WHEN any_value(r.rcp_scaling) THEN coalesce(max(r.rcp_scaling_factor), 1.0)
            ELSE 1.0 END AS rcp_scaling_factor,
        count(DISTINCT r.rcp_scaling_factor) AS rcp_factors,
        count(*) AS runs_total, count(*) FILTER (WHERE r.converged) AS runs_converged,
        list(r.t_s) AS times,
        list(r.t_s ORDER BY r.run_start_unix_s, r.run) FILTER (
            WHERE r.selection = 'first_converged_by_start' AND r.converged)
            AS converged_by_start
    FROM judged AS r
    GROUP BY r.source, r.round, r.submitter, r.system_id, r.benchmark, r.precision_key,
        r.interconnect_key, r.accelerators_key
),
scored AS (
    -- the scored runs' times, fastest first (non-converged last, as infinitely slow), and the
    -- ones averaged: all but `dropped_each_end` at each end
    SELECT
        *, len(kept) - 2 * dropped_each_end AS runs_in_mean,
        list_slice(kept, dropped_each_end + 1, len(kept) - dropped_each_end) AS middle
    FROM (
        SELECT
            *,
            list_sort(CASE selection
                WHEN 'all' THEN times
                WHEN 'first_converged_by_start' THEN converged_by_start[1:runs_scored]
            END) AS kept
        FROM grouped
    )
),
final AS (
    SELECT
        source, round, submitter, division, system_id, system, benchmark,
        benchmark_definition(benchmark, round) AS definition,
        nullif(precision_key, '') AS precision, nullif(interconnect_key, '') AS interconnect,
        accelerator, nullif(accelerators_key, -1) AS accelerators, nodes, scale, runs_total,
        runs_converged,
        CASE WHEN reason IS NULL THEN runs_in_mean ELSE 0 END AS runs_used,
        CASE WHEN reason IS NULL THEN list_avg(middle) / 60 END AS raw_score_minutes,
        rcp_scaling_factor,
        CASE WHEN reason IS NULL THEN list_avg(middle) / 60 * rcp_scaling_factor END
            AS score_minutes,
        reason AS unscorable_reason,
        CASE WHEN reason IS NULL THEN scored END AS scored_minutes,
        CASE WHEN reason IS NULL THEN dropped_each_end END AS dropped_low,
        CASE WHEN reason IS NULL THEN dropped_each_end - (len(kept) - len(scored)) END
            AS dropped_high,
        -- the round's rule applied to resamples of the same runs (never from fewer than 3)
        CASE WHEN reason IS NULL THEN bootstrap_score(
            scored, dropped_each_end, dropped_each_end - (len(kept) - len(scored))) END AS ci
    FROM (
        SELECT
            *,
            CASE
                WHEN runs_required IS NULL
                    THEN format('no scoring rule for {} in {}', benchmark, round)
                WHEN runs_total < runs_required
                    THEN format('{} {} present, the rules require {}', runs_total,
                                CASE runs_total WHEN 1 THEN 'run' ELSE 'runs' END, runs_required)
                WHEN runs_scored IS NOT NULL AND runs_converged < runs_scored
                    THEN format('{} runs converged, the rules score the first {}',
                                runs_converged, runs_scored)
                WHEN selection = 'all' AND runs_total - runs_converged > failed_allowed
                    THEN format('{} of {} runs did not converge, the rules allow {}',
                                runs_total - runs_converged, runs_total, failed_allowed)
                WHEN runs_in_mean < 1
                    THEN format('{} runs: too few to drop {} at each end', len(kept),
                                dropped_each_end)
                WHEN rcp_factors > 1
                    THEN format('{} different RCP factors among its runs', rcp_factors)
            END AS reason,
            -- the converged runs the score averages or drops, in minutes times the RCP factor
            -- (a run that did not converge is one of the slow end's dropped ones)
            list_transform(list_filter(kept, lambda t: NOT isinf(t)), lambda t: t / 60 * CASE
                WHEN rcp_factors > 1 THEN NULL ELSE rcp_scaling_factor END) AS scored
        FROM scored
    )
)
SELECT
    * EXCLUDE (ci), ci.low AS score_ci_low_minutes, ci.high AS score_ci_high_minutes
FROM final
ORDER BY source, round, submitter, system, benchmark, precision, interconnect, accelerators
