-- projection_anchors: the official results a local projection may be anchored on: every
-- closed-division official score of an accelerator model that has shipped local runs of the same
-- workload (the same benchmark model, definitions.yml, as the local suite's round defines it: a
-- local SSD is v0.5's SSD-ResNet34, which the official ssd of v2.0 on is not), with that model's
-- local throughput per accelerator (one accelerator, bf16, the precision official submissions
-- train in; the mean over its shipped runs). projection_anchor_check checks the anchored method
-- on them, projection_anchored projects the local runs from them.
WITH local AS (
    -- a local run trains the workload of its suite's round (v0.5 or v5.1)
    SELECT
        f.benchmark, f.accelerator_model, r.round AS local_round,
        avg(f.samples_per_s_per_accelerator) AS rate, count(*) AS runs
    FROM throughput_fractions AS f
    JOIN store.runs AS r USING (run_id)
    WHERE f.accelerators = 1 AND f.precision = 'bf16' AND f.samples_per_s_per_accelerator > 0
    GROUP BY ALL
),
models AS (
    SELECT DISTINCT system_id, benchmark, accelerator_model
    FROM store.runs
    WHERE source = 'official' AND accelerator_model IS NOT NULL
)
SELECT s.round, s.benchmark, s.definition, s.system_id, s.system, s.accelerators,
    s.nodes, s.score_minutes, m.accelerator_model,
    l.rate AS local_samples_per_s_per_accelerator, l.runs AS local_runs
FROM scores AS s
JOIN models AS m USING (system_id, benchmark)
JOIN local AS l USING (benchmark, accelerator_model)
JOIN benchmark_definitions AS od
    ON od.definition = s.definition AND od.benchmark = s.benchmark
JOIN benchmark_definitions AS ld
    ON ld.definition = benchmark_definition(s.benchmark, l.local_round)
    AND ld.benchmark = s.benchmark
WHERE s.source = 'official' AND s.division = 'closed' AND s.score_minutes IS NOT NULL
    AND od.model = ld.model
ORDER BY s.benchmark, round_key(s.round), s.system_id
