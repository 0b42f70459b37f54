-- speedups: time to train of each configuration against the baselines of baselines.yml
-- (the 1-accelerator fp32 configuration of its family, the 1-accelerator configuration of its
-- own precision, or a named system). Every row names its baseline.
WITH params AS (
    SELECT
        resamples, resamples // 2 AS shift,
        greatest(1, ceil(resamples * (1 - level) / 2))::INTEGER AS lo,
        ceil(resamples * (1 + level) / 2)::INTEGER AS hi
    FROM bootstrap_params
),
configs AS (
    SELECT
        *, hash(source, round, division, submitter, accelerator, framework, interconnect,
                benchmark, scale) AS family_id
    FROM configurations
    WHERE minutes IS NOT NULL
),
candidates AS (
    SELECT
        b.baseline, b.kind AS baseline_kind, c.config_id, base.config_id AS baseline_config_id,
        (base.source = c.source AND base.round = c.round
         AND base.division IS NOT DISTINCT FROM c.division) AS comparable
    FROM baselines AS b
    JOIN configs AS c ON true
    JOIN configs AS base
        ON base.config_id <> c.config_id AND (
            (b.kind = 'family' AND base.family_id = c.family_id
             AND base.accelerators = b.accelerators
             AND base.precision IS NOT DISTINCT FROM
                 CASE b.precision WHEN 'same' THEN c.precision ELSE b.precision END)
            OR (b.kind = 'system' AND base.system_id = b.system_id
                AND base.benchmark = c.benchmark
                AND base.precision IS NOT DISTINCT FROM c.precision
                AND (b.across_sources OR (base.source = c.source AND base.round = c.round
                     AND base.division IS NOT DISTINCT FROM c.division))))
    -- one baseline configuration per row: the one with most runs, then the lowest id
    QUALIFY row_number() OVER (
        PARTITION BY b.baseline, c.config_id ORDER BY base.runs DESC, base.config_id) = 1
),
boot AS (
    SELECT p.baseline, p.config_id, list_sort(list(y.mean / x.mean)) AS sorted
    FROM candidates AS p
    CROSS JOIN params
    JOIN resampled_means AS x ON x.group_id = p.config_id AND x.measure = 'minutes'
    JOIN resampled_means AS y
        ON y.group_id = p.baseline_config_id AND y.measure = 'minutes'
        AND y.resample = (x.resample + params.shift) % params.resamples
    GROUP BY ALL
)
SELECT
    p.baseline, p.baseline_kind, c.source, c.round, c.division, c.system_id, c.system,
    c.benchmark, c.accelerator, c.accelerators, c.framework, c.precision, c.interconnect,
    c.scale, c.batch_size, c.runs, c.minutes, base.source AS baseline_source,
    base.system_id AS baseline_system_id, base.accelerators AS baseline_accelerators,
    base.precision AS baseline_precision, base.runs AS baseline_runs,
    base.minutes AS baseline_minutes, base.minutes / c.minutes AS speedup,
    boot.sorted[params.lo] AS speedup_ci_low, boot.sorted[params.hi] AS speedup_ci_high,
    boot.sorted[params.lo] <= 1 AND boot.sorted[params.hi] >= 1 AS within_noise,
    p.comparable, c.qualifiers
FROM candidates AS p
CROSS JOIN params
JOIN configs AS c ON c.config_id = p.config_id
JOIN configs AS base ON base.config_id = p.baseline_config_id
LEFT JOIN boot ON boot.baseline = p.baseline AND boot.config_id = p.config_id
ORDER BY p.baseline, c.source, c.round, c.benchmark, c.system_id, c.accelerators, c.precision
