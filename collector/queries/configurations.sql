-- configurations: one row per configuration with its mean time to train and throughput, each
-- with a percentile-bootstrap interval over its runs (null for a single observation).
WITH ranks AS (
    -- nearest-rank percentiles of the sorted resamples: 25th and 975th of 1000 at level 0.95
    SELECT
        greatest(1, ceil(resamples * (1 - level) / 2))::INTEGER AS lo,
        ceil(resamples * (1 + level) / 2)::INTEGER AS hi
    FROM bootstrap_params
),
summary AS (
    SELECT
        config_id, any_value(pool_id) AS pool_id, any_value(source) AS source,
        any_value(round) AS round, any_value(division) AS division,
        any_value(submitter) AS submitter, any_value(system_id) AS system_id,
        any_value(system) AS system, any_value(benchmark) AS benchmark,
        any_value(accelerator) AS accelerator, any_value(accelerator_key) AS accelerator_key,
        any_value(chip) AS chip, any_value(accelerators) AS accelerators,
        max(nodes) AS nodes, any_value(framework) AS framework,
        any_value(precision) AS precision, any_value(interconnect) AS interconnect,
        any_value(scale) AS scale, any_value(batch_size) AS batch_size,
        count(minutes) AS runs, avg(minutes) AS minutes,
        count(throughput_samples_per_s) AS throughput_runs,
        avg(throughput_samples_per_s) AS throughput_samples_per_s,
        string_agg(DISTINCT qualifiers, ',') AS qualifiers,
        CASE WHEN any_value(source) = 'published' THEN string_agg(evidence_id, ',') END
            AS published_row_ids
    FROM observations
    GROUP BY config_id
),
intervals AS (
    SELECT config_id, measure, sorted[ranks.lo] AS lo, sorted[ranks.hi] AS hi
    FROM (
        SELECT group_id AS config_id, measure, list_sort(list(mean)) AS sorted
        FROM resampled_means
        WHERE measure IN ('minutes', 'throughput')
        GROUP BY group_id, measure
    ), ranks
)
SELECT
    s.config_id, s.pool_id, s.source, s.round, s.division, s.submitter, s.system_id, s.system,
    s.benchmark, s.accelerator, s.accelerator_key, s.chip, s.accelerators, s.nodes,
    s.framework, s.precision, s.interconnect, s.scale, s.batch_size,
    s.runs, s.minutes, m.lo AS minutes_ci_low, m.hi AS minutes_ci_high,
    s.throughput_runs, s.throughput_samples_per_s,
    t.lo AS throughput_ci_low_samples_per_s, t.hi AS throughput_ci_high_samples_per_s,
    s.qualifiers, s.published_row_ids
FROM summary AS s
LEFT JOIN intervals AS m ON m.config_id = s.config_id AND m.measure = 'minutes'
LEFT JOIN intervals AS t ON t.config_id = s.config_id AND t.measure = 'throughput'
ORDER BY s.source, s.round, s.benchmark, s.system_id, s.accelerators, s.precision,
    s.interconnect, s.batch_size
