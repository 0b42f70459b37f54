-- site_answer_scores: every official scored configuration with what an answer rests on: the
-- MLPerf score (olympic mean of the converged runs x the round's RCP factor) beside the raw
-- olympic mean and the fastest and slowest run, division and availability, the accelerator
-- model and vendor in words, the die, and the configuration whose runs the intervals resample.
WITH conf AS (
    SELECT round, system_id, benchmark, config_id, chip, accelerator_key
    FROM configurations
    WHERE source = 'official'
    QUALIFY row_number() OVER (PARTITION BY round, system_id, benchmark ORDER BY config_id) = 1
),
logs AS (
    -- the folder of the configuration's result logs, in the published repository at its commit
    SELECT r.round, r.system_id, r.benchmark,
        any_value(t.repository) || '/tree/' || any_value(t.commit) || '/'
            || regexp_replace(min(r.log_path), '^[^/]+/(.*)/[^/]+$', '\1') AS logs_url
    FROM runs AS r
    JOIN store.sources AS t ON starts_with(r.log_path, t.tree || '/')
    WHERE r.source = 'official'
    GROUP BY ALL
)
SELECT
    s.benchmark, s.round, s.division, y.availability,
    -- like for like as comparisons.yml states it: its divisions, systems for sale
    list_contains(r.divisions, s.division) AND y.availability IS NOT NULL
        AND len(list_filter(r.not_available, lambda p: contains(lower(y.availability), p))) = 0
        AS available,
    s.submitter, s.system_id, s.system, g.hardware, g.vendor, g.accelerator_model,
    s.accelerator, c.accelerator_key, c.chip, s.accelerators, s.nodes, g.one_server,
    s.interconnect, s.precision, s.runs_converged, s.runs_used, s.raw_score_minutes,
    s.rcp_scaling_factor, s.score_minutes, g.fastest_minutes, g.slowest_minutes,
    s.score_minutes > g.slowest_minutes OR s.score_minutes < g.fastest_minutes
        AS score_outside_runs,
    q.quality_target, q.quality_metric, k.logs_url, c.config_id,
    -- a benchmark whose definition a later round holds under another name (v4.x's gnn is
    -- v5.x's rgat): the answers ask for it by that name
    EXISTS (SELECT 1 FROM benchmark_definitions AS d
        WHERE d.definition = benchmark_definition(s.benchmark, s.round)
            AND d.benchmark <> s.benchmark AND round_key(d.first_round) > round_key(s.round))
        AS renamed_later
FROM scores AS s
JOIN site_scores AS g
    ON g.source = s.source AND g.round = s.round AND g.system_id = s.system_id
    AND g.benchmark = s.benchmark
LEFT JOIN (SELECT system_id, min(availability) AS availability FROM store.systems GROUP BY system_id)
    AS y ON y.system_id = s.system_id
LEFT JOIN conf AS c
    ON c.round = s.round AND c.system_id = s.system_id AND c.benchmark = s.benchmark
LEFT JOIN logs AS k
    ON k.round = s.round AND k.system_id = s.system_id AND k.benchmark = s.benchmark
LEFT JOIN quality_targets AS q ON q.round = s.round AND q.benchmark = s.benchmark
CROSS JOIN model_ratio_rules AS r
WHERE s.source = 'official' AND s.score_minutes IS NOT NULL
ORDER BY s.benchmark, round_key(s.round) DESC, s.accelerators, s.score_minutes, s.system_id
