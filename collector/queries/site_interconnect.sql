-- site_interconnect: how much the GPU-to-GPU link matters, from controlled comparisons only.
-- Local: the same server and code with NVLink peer-to-peer on and off (full_size_scaling's
-- no-p2p runs against the run of the same count with it on), as the time the same work takes
-- with it off over with it on (the inverse of the throughput ratio, its interval inverted).
-- Official: pairs of configurations of one submitter, round, division, die, accelerator count
-- and node count that differ only in the interconnect class, one of them PCIe: the PCIe
-- configuration's MLPerf score over the linked one's, with the interval of the round's scoring
-- rule over resamples of both configurations' runs where both have three converged runs or more.
WITH local_pairs AS (
    SELECT
        'local full-size' AS evidence, f.benchmark, 'local' AS round, f.submitter,
        coalesce((SELECT m.words FROM accelerator_models AS m
            WHERE m.key = f.accelerator_model), f.accelerator_model) AS accelerator_model,
        f.accelerators, 1 AS nodes, f.precision,
        'NVLink' AS link, 'peer-to-peer off' AS without_link,
        f.linked_run_id AS run_id_with, f.run_id AS run_id_without,
        NULL::VARCHAR AS system_id_with, NULL::VARCHAR AS system_id_without,
        NULL::BIGINT AS runs_with, NULL::BIGINT AS runs_without,
        1 / f.of_linked_ratio AS slowdown,
        1 / f.of_linked_ci_high_ratio AS slowdown_ci_low,
        1 / f.of_linked_ci_low_ratio AS slowdown_ci_high,
        'compute throughput on synthetic data, five timed windows per run' AS measure
    FROM full_size_scaling AS f
    WHERE f.interconnect = 'no-p2p' AND f.of_linked_ratio IS NOT NULL
),
official_pairs AS (
    SELECT
        'official' AS evidence, a.benchmark, a.round, a.submitter, a.accelerator_model,
        a.accelerators, a.nodes, a.precision, l.words AS link, 'PCIe' AS without_link,
        NULL::VARCHAR AS run_id_with, NULL::VARCHAR AS run_id_without,
        a.system_id AS system_id_with, b.system_id AS system_id_without,
        a.runs_converged AS runs_with, b.runs_converged AS runs_without,
        b.score_minutes / a.score_minutes AS slowdown,
        CASE WHEN a.runs_converged >= 3 AND b.runs_converged >= 3
            THEN bootstrap_score_ratio(y.minutes, y.dropped_low, y.dropped_high,
                x.minutes, x.dropped_low, x.dropped_high) END AS ci
    FROM site_answer_scores AS a
    JOIN site_answer_scores AS b
        ON b.round = a.round AND b.benchmark = a.benchmark AND b.submitter = a.submitter
        AND b.division = a.division AND b.accelerators = a.accelerators
        AND b.nodes = a.nodes
        AND coalesce(b.chip, b.accelerator_key, b.accelerator)
            = coalesce(a.chip, a.accelerator_key, a.accelerator)
        AND b.interconnect = 'pcie' AND a.interconnect NOT IN ('pcie')
    LEFT JOIN link_names AS l ON l.interconnect = a.interconnect
    LEFT JOIN samples AS x ON x.config_id = a.config_id
    LEFT JOIN samples AS y ON y.config_id = b.config_id
)
SELECT * FROM local_pairs
UNION ALL
SELECT
    evidence, benchmark, round, submitter, accelerator_model, accelerators, nodes, precision,
    link, without_link, run_id_with, run_id_without, system_id_with, system_id_without,
    runs_with, runs_without, slowdown, ci.low, ci.high,
    'MLPerf score (olympic mean x RCP factor)'
FROM official_pairs
ORDER BY evidence DESC, benchmark, round_key(round) DESC, submitter, accelerators,
    system_id_with, system_id_without, run_id_without
