-- precision_gain: mixed precision (fp16, bf16) and tf32 against fp32 on the same system (for
-- local runs, the same machine: collector names one configuration per precision),
-- benchmark, accelerator model and count, framework, interconnect and proxy scale, from time
-- to train (kind time) and throughput (kind throughput); gains stated by studies against FP32
-- are added as kind 'published'.
WITH configs AS NOT MATERIALIZED (
    SELECT
        -- collector names a local configuration <host>_<n>x<accel>_<precision>_<interconnect>:
        -- without its precision token, the name is the machine
        *, hash(source, round, division,
                regexp_replace(system_id, '_(fp32|tf32|bf16|fp16)(_|$)', '\2'),
                benchmark, accelerator, accelerators, framework, interconnect, scale)
            AS hardware_id
    FROM configurations
),
measured AS NOT MATERIALIZED (
    SELECT *, 'time' AS kind, 'minutes' AS measure, minutes AS value, runs AS n
    FROM configs WHERE minutes IS NOT NULL
    UNION ALL
    SELECT *, 'throughput', 'throughput', throughput_samples_per_s, throughput_runs
    FROM configs WHERE throughput_samples_per_s IS NOT NULL
),
pairs AS (
    SELECT
        m.*, b.config_id AS baseline_config_id, b.batch_size AS baseline_batch_size,
        b.n AS baseline_runs, b.value AS baseline_value,
        CASE m.kind WHEN 'time' THEN b.value / m.value ELSE m.value / b.value END AS gain
    FROM measured AS m
    JOIN measured AS b
        ON b.hardware_id = m.hardware_id AND b.kind = m.kind AND b.precision = 'fp32'
    WHERE m.precision IN ('fp16', 'bf16', 'tf32')
),
boot AS (
    -- time: fp32 time / time; throughput: throughput / fp32 throughput (over the distinct
    -- pairs, which come in whole batches: the pairs themselves come filtered, in part batches)
    SELECT
        p.config_id, p.baseline_config_id, p.kind,
        -- times: the round's scoring rule over both sides' runs; throughputs: plain means
        bootstrap_score_ratio(
            CASE p.kind WHEN 'time' THEN y.minutes ELSE x.throughput_samples_per_s END,
            CASE p.kind WHEN 'time' THEN y.dropped_low ELSE 0 END,
            CASE p.kind WHEN 'time' THEN y.dropped_high ELSE 0 END,
            CASE p.kind WHEN 'time' THEN x.minutes ELSE y.throughput_samples_per_s END,
            CASE p.kind WHEN 'time' THEN x.dropped_low ELSE 0 END,
            CASE p.kind WHEN 'time' THEN x.dropped_high ELSE 0 END
        ) AS ci
    FROM (SELECT DISTINCT config_id, baseline_config_id, kind FROM pairs) AS p
    LEFT JOIN samples AS x ON x.config_id = p.config_id
    LEFT JOIN samples AS y ON y.config_id = p.baseline_config_id
),
computed AS (
    SELECT p.*, boot.ci
    FROM pairs AS p
    LEFT JOIN boot
        ON boot.config_id = p.config_id AND boot.baseline_config_id = p.baseline_config_id
        AND boot.kind = p.kind
),
stated AS (
    -- a study's gain over FP32: percent faster, percent less time, or a ratio
    SELECT
        *,
        CASE
            WHEN metric = 'improvement_pct' AND notes ILIKE '%time ratio x 100%'
                THEN value / 100
            WHEN metric = 'improvement_pct' THEN 1 + value / 100
            WHEN metric = 'time_reduction_pct' THEN 1 / (1 - value / 100)
            ELSE value
        END AS stated_gain
    FROM store.published
    WHERE baseline ILIKE '%FP32%'
        AND metric IN ('improvement_pct', 'time_reduction_pct', 'speedup', 'relative_performance')
)
SELECT
    p.kind, p.source, p.round, p.division, p.system_id, p.system, p.benchmark, p.accelerator,
    p.accelerators, p.framework, p.interconnect, p.scale, p.precision,
    'fp32' AS baseline_precision, p.batch_size, p.baseline_batch_size, p.n AS runs,
    p.baseline_runs,
    CASE p.kind WHEN 'time' THEN p.value END AS minutes,
    CASE p.kind WHEN 'time' THEN p.baseline_value END AS baseline_minutes,
    CASE p.kind WHEN 'throughput' THEN p.value END AS throughput_samples_per_s,
    CASE p.kind WHEN 'throughput' THEN p.baseline_value END
        AS baseline_throughput_samples_per_s,
    p.gain, p.ci.low AS gain_ci_low, p.ci.high AS gain_ci_high,
    p.ci.low <= 1 AND p.ci.high >= 1 AS within_noise,
    p.published_row_ids, p.qualifiers
FROM computed AS p
UNION ALL
SELECT
    'published', 'published', study, NULL,
    'published/' || study || '/' || coalesce(system, accelerator, 'unnamed'),
    coalesce(system, accelerator, 'unnamed'), benchmark, accelerator, accelerators, framework,
    interconnect, NULL, precision, 'fp32', batch_size, NULL, NULL, NULL, NULL, NULL, NULL,
    NULL, stated_gain, NULL, NULL, NULL, row_id, qualifiers
FROM stated
ORDER BY kind DESC, source, round, benchmark, system_id, accelerators, precision, accelerator,
    framework, interconnect, scale, batch_size, baseline_batch_size, published_row_ids
