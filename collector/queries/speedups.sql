-- speedups: time to train of each configuration against the baselines of baselines.yml
-- (the 1-accelerator fp32 configuration of its family, the 1-accelerator configuration of its
-- own precision, a named system, or the fastest configuration of a named accelerator model at
-- the same accelerator count). Every row names its baseline.
WITH configs AS (
    SELECT
        *, hash(source, round, division, submitter, accelerator, framework, interconnect,
                benchmark, scale) AS family_id
    FROM configurations
    WHERE minutes IS NOT NULL
),
family_bases AS (
    -- per family, count and precision the two configurations that can be a baseline (most
    -- runs, then the lowest system id, batch size and configuration id: scaling's rule): a
    -- configuration never is its own baseline, so the second one stands in for the first
    SELECT
        family_id, accelerators, precision,
        min_by(config_id, (-runs, system_id IS NULL, coalesce(system_id, ''),
                           batch_size IS NOT NULL, coalesce(batch_size, ''), config_id), 2)
            AS bases
    FROM configs
    GROUP BY family_id, accelerators, precision
),
system_bases AS MATERIALIZED (
    -- the configurations of the named systems, found before they meet the other side
    SELECT b.baseline, b.kind, b.across_sources, base.*
    FROM baselines AS b
    JOIN configs AS base ON base.system_id = b.system_id
    WHERE b.kind = 'system'
),
family_matches AS (
    -- family baselines: the same family with the stated count and precision
    SELECT
        b.baseline, b.kind AS baseline_kind, c.config_id,
        CASE WHEN f.bases[1] <> c.config_id THEN f.bases[1] ELSE f.bases[2] END
            AS baseline_config_id
    FROM baselines AS b
    JOIN configs AS c ON b.kind = 'family'
    JOIN family_bases AS f
        ON f.family_id = c.family_id AND f.accelerators = b.accelerators
        AND f.precision IS NOT DISTINCT FROM
            CASE b.precision WHEN 'same' THEN c.precision ELSE b.precision END
),
system_matches AS (
    -- system baselines: the named system on the same benchmark and precision; of several,
    -- the one with most runs, then the lowest id
    SELECT base.baseline, base.kind AS baseline_kind, c.config_id,
        base.config_id AS baseline_config_id
    FROM system_bases AS base
    JOIN configs AS c
        ON c.benchmark = base.benchmark AND c.precision IS NOT DISTINCT FROM base.precision
        AND c.definition IS NOT DISTINCT FROM base.definition
    WHERE base.config_id <> c.config_id
        AND (base.across_sources OR (base.source = c.source AND base.round = c.round
             AND base.division IS NOT DISTINCT FROM c.division))
    QUALIFY row_number() OVER (
        PARTITION BY base.baseline, c.config_id ORDER BY base.runs DESC, base.config_id) = 1
),
model_matches AS (
    -- model baselines: the fastest configuration of the named accelerator model at the row's
    -- accelerator count, benchmark, source and division (and round, unless across_rounds);
    -- of equal times, the one with most runs, then the lowest id
    SELECT
        b.baseline, b.kind AS baseline_kind, c.config_id, base.config_id AS baseline_config_id
    FROM baselines AS b
    JOIN configs AS base
        ON b.kind = 'model' AND list_contains(b.accelerator_keys, base.accelerator_key)
    JOIN configs AS c
        ON c.benchmark = base.benchmark AND c.accelerators = base.accelerators
        AND c.definition IS NOT DISTINCT FROM base.definition
        AND c.source = base.source AND c.division IS NOT DISTINCT FROM base.division
        AND (b.across_rounds OR c.round = base.round)
    WHERE NOT list_contains(b.accelerator_keys, coalesce(c.accelerator_key, ''))
    QUALIFY row_number() OVER (
        PARTITION BY b.baseline, c.config_id
        ORDER BY base.minutes, base.runs DESC, base.config_id) = 1
),
candidates AS (
    SELECT * FROM family_matches WHERE baseline_config_id IS NOT NULL
    UNION ALL
    SELECT * FROM system_matches
    UNION ALL
    SELECT * FROM model_matches
),
boot AS (
    -- baseline time / time over the runs of both configurations, once per pair of
    -- configurations (two baselines often name the same configuration)
    SELECT p.config_id, p.baseline_config_id,
        bootstrap_score_ratio(y.minutes, y.dropped_low, y.dropped_high, x.minutes, x.dropped_low,
        x.dropped_high) AS ci
    FROM (SELECT DISTINCT config_id, baseline_config_id FROM candidates) AS p
    LEFT JOIN samples AS x ON x.config_id = p.config_id
    LEFT JOIN samples AS y ON y.config_id = p.baseline_config_id
)
SELECT
    p.baseline, p.baseline_kind, c.source, c.round, c.division, c.system_id, c.system,
    c.benchmark, c.accelerator, c.accelerators, c.framework, c.precision, c.interconnect,
    c.scale, c.batch_size, c.runs, c.minutes, base.source AS baseline_source,
    base.system_id AS baseline_system_id, base.system AS baseline_system,
    base.accelerator AS baseline_accelerator, base.accelerators AS baseline_accelerators,
    base.precision AS baseline_precision, base.runs AS baseline_runs,
    base.minutes AS baseline_minutes, base.minutes / c.minutes AS speedup,
    boot.ci.low AS speedup_ci_low, boot.ci.high AS speedup_ci_high,
    boot.ci.low <= 1 AND boot.ci.high >= 1 AS within_noise,
    (base.source = c.source AND base.round = c.round
     AND base.division IS NOT DISTINCT FROM c.division) AS comparable, c.qualifiers,
    p.config_id, p.baseline_config_id
FROM candidates AS p
JOIN configs AS c ON c.config_id = p.config_id
JOIN configs AS base ON base.config_id = p.baseline_config_id
LEFT JOIN boot
    ON boot.config_id = p.config_id AND boot.baseline_config_id = p.baseline_config_id
ORDER BY p.baseline, c.source, c.round, c.benchmark, c.system_id, c.accelerators, c.precision,
    c.config_id
