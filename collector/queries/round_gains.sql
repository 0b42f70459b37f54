-- round_gains: the same benchmark definition (definitions.yml: benchmark, data set and quality
-- target; never the name alone) on the same class of system, round by round. A class is an
-- accelerator model (accelerators.yml key, else the accelerator name) and count; in each round
-- the class's fastest official configuration stands for it (most runs, then the lowest id, of
-- equal times), and each round is compared with the previous round that has the class.
WITH configs AS (
    SELECT *, coalesce(accelerator_key, accelerator) AS accelerator_model
    FROM configurations
    WHERE source = 'official' AND minutes IS NOT NULL AND accelerators > 0
        AND coalesce(accelerator_key, accelerator) IS NOT NULL
        AND definition IS NOT NULL
),
best AS (
    SELECT *
    FROM configs
    QUALIFY row_number() OVER (
        PARTITION BY division, definition, accelerator_model, accelerators, round
        ORDER BY minutes, runs DESC, config_id) = 1
),
paired AS (
    SELECT
        *, lag(config_id) OVER (
            PARTITION BY division, definition, accelerator_model, accelerators
            ORDER BY round_key(round)
        ) AS earlier_config_id
    FROM best
),
boot AS (
    -- earlier time / later time over the runs of both configurations
    SELECT p.config_id, bootstrap_score_ratio(y.minutes, y.dropped_low, y.dropped_high, x.minutes, x.dropped_low,
        x.dropped_high) AS ci
    FROM paired AS p
    LEFT JOIN samples AS x ON x.config_id = p.config_id
    LEFT JOIN samples AS y ON y.config_id = p.earlier_config_id
    WHERE p.earlier_config_id IS NOT NULL
)
SELECT
    p.division, p.benchmark, p.definition, e.benchmark AS earlier_benchmark, p.accelerator_model, p.accelerators, e.round AS earlier_round,
    p.round, e.submitter AS earlier_submitter, p.submitter, e.system_id AS earlier_system_id,
    p.system_id, e.nodes AS earlier_nodes, p.nodes, e.runs AS earlier_runs, p.runs,
    e.minutes AS earlier_minutes, p.minutes, e.minutes / p.minutes AS speedup,
    boot.ci.low AS speedup_ci_low, boot.ci.high AS speedup_ci_high,
    boot.ci.low <= 1 AND boot.ci.high >= 1 AS within_noise,
    p.earlier_config_id, p.config_id
FROM paired AS p
JOIN configs AS e ON e.config_id = p.earlier_config_id
LEFT JOIN boot ON boot.config_id = p.config_id
ORDER BY p.division, p.definition, p.accelerator_model, p.accelerators, round_key(p.round)
