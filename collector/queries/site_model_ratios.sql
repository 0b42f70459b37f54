-- site_model_ratios: accelerator models against each other at an equal count on one server, in
-- the newest official round of each benchmark. Per benchmark and count, the fastest
-- configuration (mean time to train over its converged runs) of each model; every other
-- model's fastest set against the fastest model's, as a ratio of mean times with its
-- bootstrap interval over the runs of both (bootstrap_ratio, as speedups does). Rounds order
-- by their numbers (v10.0 after v9.1).
WITH newest AS (
    SELECT benchmark, max_by(round, list_transform(string_split(ltrim(round, 'v'), '.'), lambda x: TRY_CAST(x AS INTEGER))) AS round
    FROM configurations
    WHERE source = 'official' AND minutes IS NOT NULL
    GROUP BY benchmark
),
named AS (
    SELECT c.*, n.model, n.vendor
    FROM configurations AS c
    JOIN newest USING (benchmark, round)
    JOIN accelerator_names AS n ON contains(lower(coalesce(c.accelerator, '')), lower(n.pattern))
    WHERE c.source = 'official' AND c.nodes = 1 AND c.minutes IS NOT NULL
    QUALIFY row_number() OVER (
        PARTITION BY c.config_id ORDER BY length(n.pattern) DESC, n.model) = 1
),
best AS (
    -- the fastest configuration of each model at each count
    SELECT * FROM named
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
        o.minutes AS other_minutes
    FROM ranked AS f
    JOIN ranked AS o
        ON o.benchmark = f.benchmark AND o.accelerators = f.accelerators AND o.place > 1
    WHERE f.place = 1
)
SELECT
    p.benchmark, p.round, p.accelerators, p.models_compared, p.model, p.vendor, p.submitter,
    p.system_id, p.system, p.runs, p.minutes, p.other_model, p.other_vendor,
    p.other_submitter, p.other_system_id, p.other_system, p.other_runs, p.other_minutes,
    p.other_minutes / p.minutes AS speedup, p.ci.low AS speedup_ci_low,
    p.ci.high AS speedup_ci_high, p.ci.low <= 1 AND p.ci.high >= 1 AS within_noise
FROM (
    SELECT p.*, bootstrap_ratio(y.minutes, x.minutes) AS ci
    FROM pairs AS p
    LEFT JOIN samples AS x ON x.config_id = p.config_id
    LEFT JOIN samples AS y ON y.config_id = p.other_config_id
) AS p
ORDER BY list_transform(string_split(ltrim(p.round, 'v'), '.'),
        lambda x: TRY_CAST(x AS INTEGER)) DESC,
    p.models_compared DESC, p.benchmark, p.accelerators, speedup
