-- site_model_ratios: accelerator models against each other at an equal count on one server, in
-- the newest official round of each benchmark, like for like (comparisons.yml): closed
-- division, available systems, and a model's results from its vendor or from two submitters at
-- least. Per benchmark and count, the fastest configuration of each model by its official score
-- (configurations: olympic mean x RCP factor); every other model's fastest set against the
-- fastest model's, as a ratio of scores with the round's rule bootstrapped over the runs of both
-- (bootstrap_score_ratio), and tied where the ratio is within the benchmark's allowed
-- run-to-run variance (definitions.yml) or its interval holds 1. Beside each ratio, the results
-- left out and why, and what it rests on: the configurations of each model at the count, the
-- logs of each configuration missing from the stored copy and the configurations of the
-- benchmark and round none of whose logs is stored (log_gaps).
WITH named AS (
    SELECT * FROM model_results
),
best AS (
    -- the fastest configuration of each model at each count
    SELECT
        n.*,
        count(*) OVER (PARTITION BY benchmark, accelerators, model) AS configurations
    FROM named AS n
    WHERE n.excluded IS NULL
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
candidate_pairs AS (
    SELECT o.config_id AS other_config_id, f.*, o.model AS other_model,
        o.vendor AS other_vendor, o.submitter AS other_submitter,
        o.system_id AS other_system_id, o.system AS other_system, o.runs AS other_runs,
        o.minutes AS other_minutes, o.configurations AS other_configurations,
        -- like for like: both models' results corroborated, or both from one submitter
        CASE WHEN NOT (f.corroborated AND o.corroborated) AND f.submitter <> o.submitter
            THEN 'with the results of one third-party submitter only ('
                || CASE WHEN f.corroborated THEN o.model ELSE f.model END || ')'
        END AS withheld
    FROM ranked AS f
    JOIN ranked AS o
        ON o.benchmark = f.benchmark AND o.accelerators = f.accelerators AND o.place > 1
    WHERE f.place = 1
),
pairs AS (
    SELECT * EXCLUDE (withheld) FROM candidate_pairs WHERE withheld IS NULL
),
left_out AS (
    -- results left out: configurations of another division or not available, and pairs
    -- whose models' results do not stand for them
    SELECT
        benchmark, accelerators, sum(n)::BIGINT AS left_out_configurations,
        string_agg(n || ' ' || reason, '; ' ORDER BY reason) AS left_out_reasons
    FROM (
        SELECT benchmark, accelerators, excluded AS reason, count(*) AS n
        FROM named WHERE excluded IS NOT NULL GROUP BY ALL
        UNION ALL
        SELECT benchmark, accelerators, withheld, count(*)
        FROM candidate_pairs WHERE withheld IS NOT NULL GROUP BY ALL
    )
    GROUP BY ALL
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
    d.variance_pct,
    tied(p.other_minutes / p.minutes, d.variance_pct, p.ci.low, p.ci.high) AS tied,
    coalesce(lo.left_out_configurations, 0) AS left_out_configurations, lo.left_out_reasons,
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
LEFT JOIN benchmark_definitions AS d
    ON d.definition = p.definition AND d.benchmark = p.benchmark
LEFT JOIN left_out AS lo ON lo.benchmark = p.benchmark AND lo.accelerators = p.accelerators
ORDER BY round_key(p.round) DESC,
    p.models_compared DESC, p.benchmark, p.accelerators, speedup
