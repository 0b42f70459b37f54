-- configurations: one row per configuration with its time to train on the official metric (the
-- score of its round's rules: olympic mean of its runs x RCP factor; null where the runs cannot
-- be scored, with the reason; a published number as given) and its mean throughput, each with a
-- percentile-bootstrap interval over the same runs (bootstrap_score: the round's rule over
-- resamples, never from fewer than 3 runs; bootstrap_mean for throughput).
WITH summary AS (
    SELECT
        config_id, any_value(pool_id) AS pool_id, any_value(source) AS source,
        any_value(round) AS round, any_value(division) AS division,
        any_value(submitter) AS submitter, any_value(system_id) AS system_id,
        any_value(system) AS system, any_value(benchmark) AS benchmark,
        any_value(definition) AS definition,
        any_value(accelerator) AS accelerator, any_value(accelerator_key) AS accelerator_key,
        any_value(chip) AS chip, any_value(accelerators) AS accelerators,
        max(nodes) AS nodes, any_value(framework) AS framework,
        any_value(precision) AS precision, any_value(interconnect) AS interconnect,
        any_value(scale) AS scale, any_value(batch_size) AS batch_size,
        count(minutes) AS runs, count(throughput_samples_per_s) AS throughput_runs,
        string_agg(evidence_id, ',') FILTER (WHERE source = 'published') AS published_row_ids
    FROM observations
    GROUP BY config_id
),
qualified AS (
    -- apart: few observations carry qualifiers, and a DISTINCT aggregate beside the others
    -- makes DuckDB store every row it groups
    SELECT config_id, string_agg(DISTINCT qualifiers, ',') AS qualifiers
    FROM observations
    WHERE qualifiers IS NOT NULL
    GROUP BY config_id
)
SELECT
    s.config_id, s.pool_id, s.source, s.round, s.division, s.submitter, s.system_id, s.system,
    s.benchmark, s.definition, s.accelerator, s.accelerator_key, s.chip, s.accelerators, s.nodes,
    s.framework, s.precision, s.interconnect, s.scale, s.batch_size,
    s.runs, ci.minutes_score AS minutes, ci.minutes.low AS minutes_ci_low,
    ci.minutes.high AS minutes_ci_high, s.throughput_runs,
    ci.throughput_mean AS throughput_samples_per_s,
    ci.throughput.low AS throughput_ci_low_samples_per_s,
    ci.throughput.high AS throughput_ci_high_samples_per_s,
    q.qualifiers, s.published_row_ids,
    CASE WHEN s.source <> 'published' AND ci.minutes_score IS NULL AND s.runs > 0
        THEN coalesce(sc.unscorable_reason, 'no score') END AS unscorable_reason
FROM summary AS s
LEFT JOIN qualified AS q USING (config_id)
JOIN (
    SELECT
        -- means over the ordered lists: the same sum order on any number of threads
        config_id,
        list_avg(list_slice(minutes, dropped_low + 1, len(minutes) - dropped_high))
            AS minutes_score,
        bootstrap_score(minutes, dropped_low, dropped_high) AS minutes,
        list_avg(throughput_samples_per_s) AS throughput_mean,
        bootstrap_mean(throughput_samples_per_s) AS throughput
    FROM samples
) AS ci USING (config_id)
LEFT JOIN scores AS sc
    ON s.source <> 'published' AND sc.source = s.source AND sc.round = s.round
    AND sc.system_id = s.system_id AND sc.benchmark = s.benchmark AND sc.division = s.division
    AND sc.precision IS NOT DISTINCT FROM s.precision
    AND sc.interconnect IS NOT DISTINCT FROM s.interconnect
    AND sc.accelerators IS NOT DISTINCT FROM s.accelerators
ORDER BY s.source, s.round, s.benchmark, s.system_id, s.accelerators, s.precision,
    s.interconnect, s.batch_size, s.config_id
