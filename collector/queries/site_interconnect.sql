-- site_interconnect: how much the GPU-to-GPU link matters, from controlled comparisons only.
-- Local: the same server and code with NVLink peer-to-peer on and off (full_size_scaling's
-- no-p2p runs against the run of the same count with it on), as the time the same work takes
-- with it off over with it on (the inverse of the throughput ratio, its interval inverted).
-- Official: the like-for-like pairs interconnect_delta publishes (one submitter, round, division,
-- die, accelerator count, node count, framework and precision) whose other side is PCIe and
-- that differ in nothing else it can see (no confounders: the same system and accelerator
-- model): the PCIe configuration's MLPerf score over the linked one's, with that table's
-- interval. A pair of two servers, or of SXM against PCIe boards, is no controlled answer.
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
        'official' AS evidence, d.benchmark, d.round, d.submitter, a.accelerator_model,
        d.accelerators, a.nodes, d.precision, l.words AS link, 'PCIe' AS without_link,
        NULL::VARCHAR AS run_id_with, NULL::VARCHAR AS run_id_without,
        a.system_id AS system_id_with, b.system_id AS system_id_without,
        a.runs_converged AS runs_with, b.runs_converged AS runs_without,
        d.gain AS slowdown, d.gain_ci_low AS slowdown_ci_low, d.gain_ci_high AS slowdown_ci_high
    FROM interconnect_delta AS d
    JOIN site_answer_scores AS a ON a.config_id = d.config_id
    JOIN site_answer_scores AS b ON b.config_id = d.baseline_config_id
    LEFT JOIN link_names AS l ON l.interconnect = d.interconnect
    WHERE d.kind = 'measured' AND d.source = 'official' AND d.baseline_interconnect = 'pcie'
        AND d.gain IS NOT NULL AND coalesce(d.confounders, '') = ''
)
SELECT * FROM local_pairs
UNION ALL
SELECT
    evidence, benchmark, round, submitter, accelerator_model, accelerators, nodes, precision,
    link, without_link, run_id_with, run_id_without, system_id_with, system_id_without,
    runs_with, runs_without, slowdown, slowdown_ci_low, slowdown_ci_high,
    'MLPerf score (olympic mean x RCP factor)'
FROM official_pairs
ORDER BY evidence DESC, benchmark, round_key(round) DESC, submitter, accelerators,
    system_id_with, system_id_without, run_id_without
