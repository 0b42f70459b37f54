-- site_model_ratios: accelerator models against each other at an equal count on one server, in
-- the newest official round of each benchmark. Per benchmark and count, the fastest
-- configuration (mean time to train over its converged runs) of each model; every other
-- model's fastest set against the fastest model's, as a ratio of mean times with its
-- bootstrap interval over the runs of both (bootstrap_ratio, as speedups does). Rounds order
-- by their numbers (v10.0 after v9.1). Beside each ratio, what it rests on: the configurations
-- of each model at the count, the logs of each configuration missing from the stored copy
-- and the configurations of the benchmark and round none of whose logs is stored (log_gaps).
WITH newest AS (
    SELECT benchmark, max_by(round, round_key(round)) AS round
    FROM configurations
    WHERE source = 'official' AND minutes IS NOT NULL
    GROUP BY benchmark
),
named AS (
    SELECT c.*, n.model, n.vendor
    FROM configurations AS c
    JOIN newest USING (benchmark, round)
    JOIN accelerator_words AS n ON n.accelerator = c.accelerator
    WHERE c.source = 'official' AND c.nodes = 1 AND c.minutes IS NOT NULL AND n.model IS NOT NULL
),
best AS (
    -- the fastest configuration of each model at each count
    SELECT
        *, count(*) OVER (PARTITION BY benchmark, accelerators, model) AS configurations
    FROM named
    QUALIFY row_number() OVER (
        PARTITION BY benchmark, accelerators, model ORDER BY minutes, config_id) = 1
),
ranked AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY benchmark, accelerators ORDER BY minutes, config_id)
            AS place,
        count(*) OVER (PARTITION BY benchmark, accelerators) AS models_compared
    FROM best
),
pairs AS (
    SELECT o.config_id AS other_config_id, f.*, o.model AS other_model,
        o.vendor AS other_vendor, o.submitter AS other_submitter,
        o.system_id AS other_system_id, o.system AS other_system, o.runs AS other_runs,
        o.minutes AS other_minutes, o.configurations AS other_configurations
    FROM ranked AS f
    JOIN ranked AS o
        ON o.benchmark = f.benchmark AND o.accelerators = f.accelerators AND o.place > 1
    WHERE f.place = 1
),
gaps AS (
    SELECT round, benchmark, system_id, sum(logs_missing) AS logs_missing
    FROM log_gaps
    WHERE NOT configuration_absent
    GROUP BY ALL
),
absent AS (
    -- absent configurations that may be on one server with the same count (or not described)
    SELECT
        g.round, g.benchmark, r.accelerators, count(*) AS absent_configurations,
        sum(g.logs_missing) AS absent_logs
    FROM log_gaps AS g
    JOIN (SELECT DISTINCT round, benchmark, accelerators FROM ranked) AS r
        ON r.round = g.round AND r.benchmark = g.benchmark
        AND coalesce(g.nodes = 1 AND g.accelerators = r.accelerators, true)
    WHERE g.configuration_absent
    GROUP BY ALL
)
SELECT
    p.benchmark, p.round, p.accelerators, p.models_compared, p.model, p.vendor, p.submitter,
    p.system_id, p.system, p.runs, p.minutes, p.other_model, p.other_vendor,
    p.other_submitter, p.other_system_id, p.other_system, p.other_runs, p.other_minutes,
    p.other_minutes / p.minutes AS speedup, p.ci.low AS speedup_ci_low,
    p.ci.high AS speedup_ci_high, p.ci.low <= 1 AND p.ci.high >= 1 AS within_noise,
    p.configurations, p.other_configurations, coalesce(g.logs_missing, 0) AS logs_missing,
    coalesce(o.logs_missing, 0) AS other_logs_missing,
    coalesce(a.absent_configurations, 0) AS absent_configurations,
    coalesce(a.absent_logs, 0) AS absent_logs
FROM (
    SELECT p.*, bootstrap_score_ratio(y.minutes, y.dropped_low, y.dropped_high, x.minutes, x.dropped_low,
        x.dropped_high) AS ci
    FROM pairs AS p
    LEFT JOIN samples AS x ON x.config_id = p.config_id
    LEFT JOIN samples AS y ON y.config_id = p.other_config_id
) AS p
LEFT JOIN gaps AS g
    ON g.round = p.round AND g.benchmark = p.benchmark AND g.system_id = p.system_id
LEFT JOIN gaps AS o
    ON o.round = p.round AND o.benchmark = p.benchmark AND o.system_id = p.other_system_id
LEFT JOIN absent AS a
    ON a.round = p.round AND a.benchmark = p.benchmark AND a.accelerators = p.accelerators
ORDER BY round_key(p.round) DESC,
    p.models_compared DESC, p.benchmark, p.accelerators, speedup
