-- site_nearest: "can N x MODEL train this benchmark in time?", answered from the nearest
-- evidence, each kind apart: official MLPerf scores of the same model at the same count; of
-- the same model at the nearest other count, scaled linearly to N; of a sibling model at the
-- same count, taken as it is (answers.yml); and times projected from full-size throughput
-- measured here for the model at N (site_guide). Official evidence comes from the newest round
-- that has it, closed division and available systems.
WITH models AS (
    SELECT DISTINCT accelerator_model AS model FROM site_answer_scores
    WHERE available AND accelerator_model IS NOT NULL
),
asked AS (
    SELECT b.benchmark, m.model, n.accelerators AS asked_accelerators
    FROM (SELECT DISTINCT benchmark FROM site_answer_scores WHERE NOT renamed_later) AS b
    CROSS JOIN models AS m CROSS JOIN asked_counts AS n
),
official AS (
    SELECT * FROM site_answer_scores WHERE available AND accelerator_model IS NOT NULL
),
same AS (
    SELECT q.*, 1 AS step_rank, 'same model and count' AS evidence_kind, o.*,
        o.score_minutes AS inferred_minutes,
        'the official score itself' AS step
    FROM asked AS q
    JOIN official AS o
        ON o.benchmark = q.benchmark AND o.accelerator_model = q.model
        AND o.accelerators = q.asked_accelerators
    QUALIFY row_number() OVER (PARTITION BY q.benchmark, q.model, q.asked_accelerators
        ORDER BY round_key(o.round) DESC, o.score_minutes, o.system_id) = 1
),
other AS (
    SELECT q.*, 2 AS step_rank, 'same model, other count' AS evidence_kind, o.*,
        o.score_minutes * o.accelerators / q.asked_accelerators AS inferred_minutes,
        'scaled linearly from ' || o.accelerators || ' to ' || q.asked_accelerators
            || ' accelerators (score x ' || o.accelerators || ' / ' || q.asked_accelerators
            || CASE WHEN o.accelerators > q.asked_accelerators
                THEN '); fewer accelerators scale better, so this tends to overstate the time'
                ELSE '); more accelerators scale worse, so this tends to understate the time'
            END AS step
    FROM asked AS q
    JOIN official AS o
        ON o.benchmark = q.benchmark AND o.accelerator_model = q.model
        AND o.accelerators <> q.asked_accelerators
    WHERE NOT EXISTS (SELECT 1 FROM official AS e WHERE e.benchmark = q.benchmark
        AND e.accelerator_model = q.model AND e.accelerators = q.asked_accelerators)
    QUALIFY row_number() OVER (PARTITION BY q.benchmark, q.model, q.asked_accelerators
        ORDER BY abs(ln(o.accelerators / q.asked_accelerators)), o.accelerators DESC,
            round_key(o.round) DESC, o.score_minutes, o.system_id) = 1
),
sibling AS (
    SELECT q.*, 3 AS step_rank, 'sibling model, same count' AS evidence_kind, o.*,
        o.score_minutes AS inferred_minutes,
        o.accelerator_model || ' taken as it is: ' || s.direction AS step
    FROM asked AS q
    JOIN model_siblings AS s ON s.model = q.model
    JOIN official AS o
        ON o.benchmark = q.benchmark AND o.accelerator_model = s.sibling
        AND o.accelerators = q.asked_accelerators
    QUALIFY row_number() OVER (PARTITION BY q.benchmark, q.model, q.asked_accelerators
        ORDER BY round_key(o.round) DESC, o.score_minutes, o.system_id) = 1
),
evidence AS (
    SELECT
        benchmark, model, asked_accelerators, step_rank, evidence_kind, round, division,
        available, submitter, system_id, hardware, accelerator_model AS evidence_model,
        accelerators AS evidence_accelerators, runs_converged AS runs, score_minutes,
        raw_score_minutes, rcp_scaling_factor, fastest_minutes, slowest_minutes,
        quality_target, quality_metric, logs_url, inferred_minutes, step
    FROM (SELECT * FROM same UNION ALL BY NAME SELECT * FROM other
        UNION ALL BY NAME SELECT * FROM sibling)
),
projected AS (
    SELECT
        q.benchmark, q.model, q.asked_accelerators, 4 AS step_rank,
        'projection from full-size throughput measured here' AS evidence_kind, g.round,
        'local' AS division, NULL::BOOLEAN AS available, g.submitter, g.system_id,
        g.hardware, g.accelerator_model AS evidence_model, g.accelerators AS evidence_accelerators,
        NULL::BIGINT AS runs, g.score_minutes, NULL::DOUBLE AS raw_score_minutes,
        NULL::DOUBLE AS rcp_scaling_factor, g.fastest_minutes, g.slowest_minutes,
        t.quality_target, t.quality_metric, NULL::VARCHAR AS logs_url, g.score_minutes AS inferred_minutes,
        'projected to the ' || g.round || ' quality target from measured throughput and the '
            || 'official runs'' samples to target (interval: the projection''s)' AS step
    FROM asked AS q
    JOIN site_guide AS g
        ON g.evidence = 'projected' AND g.benchmark = q.benchmark
        AND g.accelerator_model = q.model AND g.accelerators = q.asked_accelerators
    LEFT JOIN quality_targets AS t ON t.round = g.round AND t.benchmark = q.benchmark
    QUALIFY row_number() OVER (PARTITION BY q.benchmark, q.model, q.asked_accelerators
        ORDER BY g.hardware LIKE '%peer-to-peer disabled%', round_key(g.round) DESC,
            g.score_minutes, g.system_id) = 1
)
SELECT * FROM evidence
UNION ALL BY NAME
SELECT * FROM projected
ORDER BY benchmark, model, asked_accelerators, step_rank
