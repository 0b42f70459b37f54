-- scaling: speedup and parallel efficiency against the smallest accelerator count of a family
-- (same source, round, division, submitter, accelerator model, framework, precision,
-- interconnect, benchmark and proxy scale). Strong scaling from time to train; weak scaling
-- from throughput (runs that grow the batch with the accelerator count). Published speedups and
-- efficiencies stated by a study are added as kind 'published', and beside the computed row
-- they reproduce (published_speedup).
WITH configs AS (
    SELECT
        *, hash(source, round, division, submitter, accelerator, framework, precision,
                interconnect, benchmark, scale) AS family_id
    FROM configurations
    WHERE accelerators > 0
),
measured AS (
    SELECT *, 'strong' AS kind, 'minutes' AS measure, minutes AS value, runs AS n
    FROM configs WHERE minutes IS NOT NULL
    UNION ALL
    SELECT *, 'weak', 'throughput', throughput_samples_per_s, throughput_runs
    FROM configs WHERE throughput_samples_per_s IS NOT NULL
),
base AS (
    -- the family's smallest count; of several configurations, the one with most runs, then
    -- the lowest system id, batch size and configuration id (speedups' rule for its family
    -- baselines, so that the two tables pair the same configurations)
    SELECT m.*
    FROM (
        SELECT
            family_id, kind,
            min_by(config_id, (accelerators, -n, system_id IS NULL, coalesce(system_id, ''),
                               batch_size IS NOT NULL, coalesce(batch_size, ''), config_id))
                AS config_id
        FROM measured
        GROUP BY family_id, kind
    ) AS first
    JOIN measured AS m USING (config_id, kind)
),
pairs AS (
    SELECT
        m.*, b.config_id AS baseline_config_id, b.system_id AS baseline_system_id,
        b.accelerators AS baseline_accelerators, b.runs AS baseline_runs,
        b.throughput_runs AS baseline_throughput_runs, b.value AS baseline_value,
        CASE m.kind WHEN 'strong' THEN b.value / m.value ELSE m.value / b.value END AS speedup
    FROM measured AS m
    JOIN base AS b ON b.family_id = m.family_id AND b.kind = m.kind
    WHERE m.accelerators > b.accelerators
        -- weak scaling only where the batch grew with the accelerators (or is not recorded)
        AND (m.kind = 'strong' OR try_cast(m.batch_size AS DOUBLE) IS NULL
             OR try_cast(b.batch_size AS DOUBLE) IS NULL
             OR abs(try_cast(m.batch_size AS DOUBLE) / try_cast(b.batch_size AS DOUBLE)
                    - m.accelerators / b.accelerators) < 0.01 * m.accelerators / b.accelerators)
),
known AS (
    -- the time ratios speedups has already resampled: the same two configurations give the
    -- same interval (1-accelerator baselines of the row's own precision, chosen by one rule)
    SELECT DISTINCT
        config_id, baseline_config_id,
        {'low': speedup_ci_low, 'high': speedup_ci_high} AS ci
    FROM speedups
),
todo AS (
    -- the pairs left to resample (distinct, so that the interval function gets whole batches)
    SELECT DISTINCT p.config_id, p.baseline_config_id, p.kind
    FROM pairs AS p
    WHERE p.kind = 'weak' OR NOT EXISTS (
        SELECT 1 FROM known AS k
        WHERE k.config_id = p.config_id AND k.baseline_config_id = p.baseline_config_id)
),
boot AS (
    -- strong: baseline time / time; weak: throughput / baseline throughput (one call for
    -- both kinds)
    SELECT
        p.config_id, p.kind,
        -- times: the round's scoring rule over both sides' runs; throughputs: plain means
        bootstrap_score_ratio(
            CASE p.kind WHEN 'strong' THEN y.minutes ELSE x.throughput_samples_per_s END,
            CASE p.kind WHEN 'strong' THEN y.dropped_low ELSE 0 END,
            CASE p.kind WHEN 'strong' THEN y.dropped_high ELSE 0 END,
            CASE p.kind WHEN 'strong' THEN x.minutes ELSE y.throughput_samples_per_s END,
            CASE p.kind WHEN 'strong' THEN x.dropped_low ELSE 0 END,
            CASE p.kind WHEN 'strong' THEN x.dropped_high ELSE 0 END
        ) AS ci
    FROM todo AS p
    LEFT JOIN samples AS x ON x.config_id = p.config_id
    LEFT JOIN samples AS y ON y.config_id = p.baseline_config_id
    UNION ALL
    SELECT p.config_id, p.kind, k.ci
    FROM pairs AS p
    JOIN known AS k
        ON k.config_id = p.config_id AND k.baseline_config_id = p.baseline_config_id
    WHERE p.kind = 'strong'
),
computed AS (
    SELECT p.*, boot.ci
    FROM pairs AS p
    LEFT JOIN boot ON boot.config_id = p.config_id AND boot.kind = p.kind
),
stated AS (
    -- speedups and efficiencies a study states against 1 accelerator of the same system
    SELECT
        row_id, study, system, accelerator, accelerators, precision, benchmark, framework,
        interconnect, batch_size, metric, value, qualifiers, baseline
    FROM store.published
    WHERE metric IN ('speedup', 'scaling_efficiency_pct') AND baseline ILIKE '1 GPU%'
        AND accelerators IS NOT NULL
),
matched AS (
    -- read from pairs (the interval is not needed here), so that computed is read once and
    -- DuckDB need not store its rows
    SELECT c.config_id, c.kind, s.row_id, s.value
    FROM pairs AS c
    JOIN stated AS s
        ON c.source = 'published' AND s.study = c.round AND s.metric = 'speedup'
        AND c.kind = 'strong' AND c.baseline_accelerators = 1
        AND s.accelerators = c.accelerators AND s.benchmark = c.benchmark
        AND s.accelerator IS NOT DISTINCT FROM c.accelerator
        AND s.precision IS NOT DISTINCT FROM c.precision
        AND s.system IS NOT DISTINCT FROM c.system
    QUALIFY count(*) OVER (PARTITION BY c.config_id, c.kind) = 1
)
SELECT
    c.kind, c.source, c.round, c.division, c.submitter, c.benchmark, c.accelerator,
    c.framework, c.precision, c.interconnect, c.scale, c.system_id, c.system,
    c.accelerators, c.nodes, c.batch_size,
    CASE c.kind WHEN 'strong' THEN c.runs ELSE c.throughput_runs END AS runs,
    CASE c.kind WHEN 'strong' THEN c.value END AS minutes,
    CASE c.kind WHEN 'weak' THEN c.value END AS throughput_samples_per_s,
    c.baseline_system_id, c.baseline_accelerators,
    CASE c.kind WHEN 'strong' THEN c.baseline_runs ELSE c.baseline_throughput_runs END
        AS baseline_runs,
    CASE c.kind WHEN 'strong' THEN c.baseline_value END AS baseline_minutes,
    CASE c.kind WHEN 'weak' THEN c.baseline_value END AS baseline_throughput_samples_per_s,
    c.speedup, c.ci.low AS speedup_ci_low, c.ci.high AS speedup_ci_high,
    -- above 100% of linear only where the interval of the runs lies above it
    CASE WHEN NOT c.superlinear THEN 100 * c.speedup * c.baseline_accelerators / c.accelerators
        END AS efficiency_pct,
    CASE WHEN NOT c.superlinear THEN 100 * c.ci.low * c.baseline_accelerators / c.accelerators
        END AS efficiency_ci_low_pct,
    CASE WHEN NOT c.superlinear THEN 100 * c.ci.high * c.baseline_accelerators / c.accelerators
        END AS efficiency_ci_high_pct,
    c.ci.low <= 1 AND c.ci.high >= 1 AS within_noise,
    matched.value AS published_speedup,
    100 * (c.speedup - matched.value) / matched.value AS published_diff_pct,
    coalesce(matched.row_id, c.published_row_ids) AS published_row_ids, c.qualifiers,
    CASE WHEN c.superlinear
        THEN 'efficiency above 100% of linear without runs whose interval lies above it'
    END AS withheld_reason
FROM (
    SELECT
        *,
        source <> 'published' AND speedup * baseline_accelerators / accelerators > 1 + 1e-9
            AND NOT coalesce(ci.low * baseline_accelerators / accelerators > 1, false)
            AS superlinear
    FROM computed
) AS c
LEFT JOIN matched ON matched.config_id = c.config_id AND matched.kind = c.kind
UNION ALL
SELECT
    'published', 'published', s.study, NULL, s.study, s.benchmark, s.accelerator, s.framework,
    s.precision, s.interconnect, NULL, 'published/' || s.study || '/'
        || coalesce(s.system, s.accelerator, 'unnamed'), coalesce(s.system, s.accelerator,
        'unnamed'), s.accelerators, NULL, s.batch_size, NULL, NULL, NULL, NULL, 1, NULL, NULL,
    NULL,
    CASE s.metric WHEN 'speedup' THEN s.value ELSE s.value * s.accelerators / 100 END,
    NULL, NULL,
    CASE s.metric WHEN 'speedup' THEN 100 * s.value / s.accelerators ELSE s.value END,
    NULL, NULL, NULL, CASE s.metric WHEN 'speedup' THEN s.value END, NULL, s.row_id,
    s.qualifiers, NULL
FROM stated AS s
WHERE s.row_id NOT IN (SELECT row_id FROM matched)
ORDER BY kind DESC, source, round, benchmark, accelerator, precision, interconnect,
    accelerators, system_id, batch_size, published_row_ids
