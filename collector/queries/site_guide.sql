-- site_guide: the configurations that may answer a deadline on the Guide: official scores and
-- the user's own full-size runs (site_scores), and times projected from measured full-size
-- throughput (projection), each with its hardware in words. Proxy-scale runs never answer.
-- A benchmark renamed between rounds (v4.x's gnn is v5.x's rgat, v2.0-v4.1's ssd is v5.x's
-- retinanet: one definition each) is listed once, under its definition's newest name.
WITH projected AS (
    SELECT p.*, n.model, n.vendor
    FROM projection AS p
    LEFT JOIN accelerator_words AS n ON n.accelerator = p.accelerator
),
named AS (
    SELECT definition, arg_max(benchmark, round_key(first_round)) AS benchmark
    FROM benchmark_definitions
    GROUP BY definition
),
answers AS (
    SELECT
        g.benchmark, g.evidence, g.round, g.hardware, g.vendor, g.accelerator_model,
        g.accelerators, g.nodes, g.one_server, g.precision, g.score_minutes, g.fastest_minutes,
        g.slowest_minutes, g.runs_used, g.submitter, g.system_id, a.raw_score_minutes,
        a.rcp_scaling_factor
    FROM site_scores AS g
    -- an official score with its raw olympic mean and RCP factor, so a deadline shows both
    LEFT JOIN site_answer_scores AS a
        ON g.evidence = 'official' AND a.round = g.round AND a.system_id = g.system_id
        AND a.benchmark = g.benchmark
    WHERE g.evidence IN ('official', 'local') AND g.score_minutes IS NOT NULL
    UNION ALL
    SELECT
        p.benchmark, 'projected' AS evidence, p.round,
        p.projected_accelerators || ' x ' || coalesce(p.model, p.accelerator, 'accelerator')
            || coalesce(', ' || p.projected_nodes || CASE WHEN p.projected_nodes = 1 THEN ' node'
                ELSE ' nodes' END, '')
            || CASE WHEN p.projected_accelerators = p.accelerators
                THEN coalesce(', ' || l.words, '')
                ELSE ' (an official layout; measured on ' || p.accelerators || ')' END AS hardware,
        p.vendor, coalesce(p.model, p.accelerator) AS accelerator_model,
        p.projected_accelerators AS accelerators, p.projected_nodes AS nodes,
        p.projected_nodes = 1 AS one_server, p.precision, p.projected_minutes AS score_minutes,
        p.projected_ci_low_minutes AS fastest_minutes,
        p.projected_ci_high_minutes AS slowest_minutes, 1 AS runs_used, p.submitter, p.system_id,
        NULL AS raw_score_minutes, NULL AS rcp_scaling_factor
    FROM projected AS p
    LEFT JOIN link_names AS l ON l.interconnect = p.interconnect
)
SELECT coalesce(n.benchmark, x.benchmark) AS benchmark, x.* EXCLUDE (benchmark)
FROM answers AS x
LEFT JOIN named AS n ON n.definition = benchmark_definition(x.benchmark, x.round)
-- newest round first, then by time (official results, then your own runs, then projections)
ORDER BY evidence_rank(evidence),
    round_key(round) DESC,
    score_minutes, benchmark, system_id
