-- site_precision: mixed-precision gains measured here at full size: per local campaign,
-- benchmark, accelerator model and count, the compute throughput at a lower precision over
-- the throughput of the same runs' setting at a higher one (fp32 -> tf32 -> bf16/fp16 -> fp8),
-- with the bootstrap interval of the ratio where both sides have three runs or more.
WITH ladder (precision, step) AS (
    VALUES ('fp32', 1), ('tf32', 2), ('fp16', 3), ('bf16', 3), ('fp8', 4)
),
measured AS (
    SELECT c.*, l.step
    FROM configurations AS c
    JOIN ladder AS l USING (precision)
    WHERE c.source = 'local' AND c.scale = 'throughput'
        AND c.throughput_samples_per_s IS NOT NULL
)
SELECT
    a.submitter, a.benchmark, coalesce(w.model, a.accelerator) AS accelerator_model,
    a.accelerators, a.interconnect, b.precision AS baseline_precision, a.precision,
    b.throughput_runs AS baseline_runs, a.throughput_runs AS runs,
    b.throughput_samples_per_s AS baseline_samples_per_s,
    a.throughput_samples_per_s AS samples_per_s,
    a.throughput_samples_per_s / b.throughput_samples_per_s AS gain,
    CASE WHEN a.throughput_runs >= 3 AND b.throughput_runs >= 3
        THEN bootstrap_ratio(x.throughput_samples_per_s, y.throughput_samples_per_s).low END
        AS gain_ci_low,
    CASE WHEN a.throughput_runs >= 3 AND b.throughput_runs >= 3
        THEN bootstrap_ratio(x.throughput_samples_per_s, y.throughput_samples_per_s).high END
        AS gain_ci_high,
    a.system_id, b.system_id AS baseline_system_id
FROM measured AS a
JOIN measured AS b
    ON b.submitter = a.submitter AND b.benchmark = a.benchmark
    AND b.accelerator = a.accelerator AND b.accelerators = a.accelerators
    AND b.interconnect IS NOT DISTINCT FROM a.interconnect AND b.step < a.step
LEFT JOIN accelerator_words AS w ON w.accelerator = a.accelerator
LEFT JOIN samples AS x ON x.config_id = a.config_id
LEFT JOIN samples AS y ON y.config_id = b.config_id
ORDER BY a.benchmark, accelerator_model, a.accelerators, a.submitter, b.precision, a.precision
