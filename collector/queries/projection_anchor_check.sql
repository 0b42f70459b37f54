-- projection_anchor_check: the anchored projection checked out of sample. A local projection
-- of accelerator B is anchored on the official result of an accelerator A measured here too:
-- B's time = A's official score x A's local throughput per accelerator / B's, so that the
-- local implementation's own efficiency cancels. Checked on every pair of official results of
-- two accelerator models that both have shipped local runs of the same workload: the same
-- benchmark definition, round and accelerator count, the closed division; the target's own
-- time is never used, only compared with. Local throughputs: one accelerator, bf16 (the
-- precision official submissions train in), each model's mean over its shipped runs; the
-- workload must be the same model as the official benchmark (definitions.yml: a local SSD
-- is SSD-ResNet34, which the official ssd of v2.0 on is not).
WITH official AS (
    SELECT *, local_samples_per_s_per_accelerator AS rate FROM projection_anchors
)
SELECT
    t.benchmark, t.definition, t.round, t.accelerators, t.accelerator_model AS target_model,
    t.system_id AS target_system_id, a.accelerator_model AS anchor_model,
    a.system_id AS anchor_system_id, a.score_minutes AS anchor_minutes,
    a.rate AS anchor_local_samples_per_s_per_accelerator,
    t.rate AS target_local_samples_per_s_per_accelerator, a.local_runs AS anchor_local_runs,
    t.local_runs AS target_local_runs,
    a.score_minutes * a.rate / t.rate AS projected_minutes, t.score_minutes AS real_minutes,
    (a.score_minutes * a.rate / t.rate / t.score_minutes - 1) * 100 AS error_pct
FROM official AS t
JOIN official AS a
    ON a.definition = t.definition AND a.benchmark = t.benchmark AND a.round = t.round
    AND a.accelerators = t.accelerators AND a.accelerator_model <> t.accelerator_model
ORDER BY benchmark, round, accelerators, target_model, target_system_id, anchor_system_id
