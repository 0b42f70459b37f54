-- configurations: one row per configuration with its mean time to train and throughput, each
-- with a percentile-bootstrap interval over its runs (bootstrap_mean over the runs in
-- ascending order of value, the lists of samples; null for a single observation).
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
    s.runs, ci.minutes_mean AS minutes, ci.minutes.low AS minutes_ci_low,
    ci.minutes.high AS minutes_ci_high, s.throughput_runs,
    ci.throughput_mean AS throughput_samples_per_s,
    ci.throughput.low AS throughput_ci_low_samples_per_s,
    ci.throughput.high AS throughput_ci_high_samples_per_s,
    q.qualifiers, s.published_row_ids
FROM summary AS s
LEFT JOIN qualified AS q USING (config_id)
JOIN (
    SELECT
        -- means over the ordered lists: the same sum order on any number of threads
        config_id, list_avg(minutes) AS minutes_mean, bootstrap_mean(minutes) AS minutes,
        list_avg(throughput_samples_per_s) AS throughput_mean,
        bootstrap_mean(throughput_samples_per_s) AS throughput
    FROM samples
) AS ci USING (config_id)
ORDER BY s.source, s.round, s.benchmark, s.system_id, s.accelerators, s.precision,
    s.interconnect, s.batch_size, s.config_id
