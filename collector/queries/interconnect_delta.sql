-- interconnect_delta: NVLink or NVSwitch against PCIe or no peer-to-peer, like for like: two
-- configurations of one submitter (for local runs, one host), source, round and division, with
-- the same GPU die, accelerator count, node count, precision, framework, benchmark and proxy
-- scale. The gain is the ratio of their official scores (configurations: olympic mean x RCP
-- factor), its interval the round's rule over resamples of both sides' runs. Pairs that fail
-- the rule keep a row with withheld_reason and no gain, so that pages can say how many were
-- left out and why. Gains a study states against PCIe are added as kind 'published'.
WITH members AS (
    SELECT *
    FROM configurations
    WHERE chip IS NOT NULL AND accelerators > 1 AND runs > 0
        AND interconnect IN ('nvlink', 'nvswitch', 'nvlink-bridge', 'pcie', 'no-p2p')
        AND source IN ('official', 'local')
),
pairs AS (
    SELECT
        f.*, s.config_id AS baseline_config_id, s.interconnect AS baseline_interconnect,
        s.submitter AS baseline_submitter, s.system AS baseline_system,
        s.accelerator AS baseline_accelerator, s.nodes AS baseline_nodes,
        s.runs AS baseline_runs, s.minutes AS baseline_minutes,
        CASE
            WHEN f.submitter <> s.submitter
                THEN 'different submitters: the systems differ in more than the link'
            WHEN f.nodes IS DISTINCT FROM s.nodes THEN 'different node counts'
            WHEN f.minutes IS NULL OR s.minutes IS NULL
                THEN 'a side has no score: ' || coalesce(f.unscorable_reason, s.unscorable_reason)
        END AS withheld_reason
    FROM members AS f
    JOIN members AS s
        ON s.source = f.source AND s.round = f.round
        AND s.division IS NOT DISTINCT FROM f.division AND s.benchmark = f.benchmark
        AND s.chip = f.chip AND s.accelerators = f.accelerators
        AND s.framework IS NOT DISTINCT FROM f.framework
        AND s.precision IS NOT DISTINCT FROM f.precision
        AND s.scale IS NOT DISTINCT FROM f.scale
    WHERE f.interconnect IN ('nvlink', 'nvswitch', 'nvlink-bridge')
        AND s.interconnect IN ('pcie', 'no-p2p')
),
boot AS (
    SELECT
        p.config_id, p.baseline_config_id,
        bootstrap_score_ratio(y.minutes, y.dropped_low, y.dropped_high, x.minutes,
            x.dropped_low, x.dropped_high) AS ci
    FROM pairs AS p
    LEFT JOIN samples AS x ON x.config_id = p.config_id
    LEFT JOIN samples AS y ON y.config_id = p.baseline_config_id
    WHERE p.withheld_reason IS NULL
),
stated AS (
    SELECT
        *,
        CASE metric WHEN 'improvement_pct' THEN 1 + value / 100 ELSE value END AS stated_gain
    FROM store.published
    WHERE baseline ILIKE '%PCIe%' AND baseline NOT ILIKE '%FP32%' AND baseline NOT ILIKE '1 GPU%'
        AND metric IN ('improvement_pct', 'speedup') AND notes NOT ILIKE '%not end-to-end%'
)
SELECT
    'measured' AS kind, p.source, p.round, p.division, p.benchmark, p.chip, p.accelerators,
    p.framework, p.precision, p.scale, p.interconnect, p.baseline_interconnect,
    p.submitter, p.baseline_submitter, p.system AS systems, p.baseline_system AS baseline_systems,
    p.accelerator AS accelerator_models, p.baseline_accelerator AS baseline_accelerator_models,
    p.runs, p.baseline_runs, p.minutes, p.baseline_minutes,
    CASE WHEN p.withheld_reason IS NULL THEN p.baseline_minutes / p.minutes END AS gain,
    b.ci.low AS gain_ci_low, b.ci.high AS gain_ci_high,
    b.ci.low <= 1 AND b.ci.high >= 1 AS within_noise,
    CASE WHEN p.withheld_reason IS NULL THEN nullif(concat_ws('; ',
        CASE WHEN p.accelerator <> p.baseline_accelerator THEN 'accelerator models differ' END,
        -- local runs name a system per interconnect mode: one host with peer-to-peer on and
        -- off differs in the link alone
        CASE WHEN p.source <> 'local' AND p.system <> p.baseline_system
             THEN 'different systems' END), '') END AS confounders,
    p.withheld_reason, NULL AS published_row_id, NULL AS qualifiers,
    p.config_id, p.baseline_config_id
FROM pairs AS p
LEFT JOIN boot AS b
    ON b.config_id = p.config_id AND b.baseline_config_id = p.baseline_config_id
UNION ALL
SELECT
    'published', 'published', study, NULL, benchmark, NULL, accelerators, framework,
    precision, NULL, interconnect, 'pcie', study, study, coalesce(system, accelerator), NULL,
    accelerator, NULL, NULL, NULL, NULL, NULL, stated_gain, NULL, NULL, NULL, baseline, NULL,
    row_id, qualifiers, NULL, NULL
FROM stated
ORDER BY kind, source, round, benchmark, chip, accelerators, precision, interconnect,
    withheld_reason NULLS FIRST, systems, baseline_systems
