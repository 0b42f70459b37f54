-- interconnect_delta: NVLink or NVSwitch against PCIe or no peer-to-peer, for the same chip,
-- accelerator count, precision, framework, benchmark and proxy scale within one source, round
-- and division. Runs of all systems of a side are pooled; the rows name the systems and say
-- what else differs between the sides (confounders). Gains a study states against PCIe are
-- added as kind 'published'.
WITH members AS (
    -- the configurations that can be pooled
    SELECT *
    FROM configurations
    WHERE minutes IS NOT NULL AND chip IS NOT NULL AND accelerators > 1
        AND interconnect IN ('nvlink', 'nvswitch', 'nvlink-bridge', 'pcie', 'no-p2p')
),
pools AS (
    SELECT
        pool_id, any_value(source) AS source, any_value(round) AS round,
        any_value(division) AS division, any_value(benchmark) AS benchmark,
        any_value(chip) AS chip, any_value(accelerators) AS accelerators,
        any_value(framework) AS framework, any_value(precision) AS precision,
        any_value(scale) AS scale, any_value(interconnect) AS interconnect,
        string_agg(DISTINCT system, ', ' ORDER BY system) AS systems,
        -- a local run's submitter is the host it ran on (runs/local/<host>/)
        string_agg(DISTINCT submitter, ', ' ORDER BY submitter) AS submitters,
        string_agg(DISTINCT accelerator, ', ' ORDER BY accelerator) AS accelerator_models,
        min(nodes) AS nodes_min, max(nodes) AS nodes_max, sum(runs) AS runs,
        hash(any_value(source), any_value(round), any_value(division), any_value(benchmark),
             any_value(chip), any_value(accelerators), any_value(framework),
             any_value(precision), any_value(scale)) AS match_id
    FROM members
    GROUP BY pool_id
),
matches AS (
    SELECT f.pool_id, s.pool_id AS baseline_pool_id
    FROM pools AS f
    JOIN pools AS s ON s.match_id = f.match_id
    WHERE f.interconnect IN ('nvlink', 'nvswitch', 'nvlink-bridge')
        AND s.interconnect IN ('pcie', 'no-p2p')
),
pooled AS (
    -- the runs of each pool that meets one of the other side, sorted by value (as in samples;
    -- the other pools are never resampled), and their mean over the ordered list: the same
    -- sum order on any number of threads
    SELECT pool_id, samples, list_avg(samples) AS minutes
    FROM (
        SELECT m.pool_id, list_sort(flatten(list(s.minutes))) AS samples
        FROM members AS m
        JOIN samples AS s USING (config_id)
        WHERE m.pool_id IN (
            SELECT pool_id FROM matches UNION SELECT baseline_pool_id FROM matches)
        GROUP BY m.pool_id
    )
),
pairs AS (
    SELECT
        f.*, fp.minutes, s.pool_id AS baseline_pool_id,
        s.interconnect AS baseline_interconnect, s.systems AS baseline_systems,
        s.submitters AS baseline_submitters,
        s.accelerator_models AS baseline_accelerator_models,
        s.nodes_min AS baseline_nodes_min, s.nodes_max AS baseline_nodes_max,
        s.runs AS baseline_runs, sp.minutes AS baseline_minutes, sp.minutes / fp.minutes AS gain,
        bootstrap_ratio(sp.samples, fp.samples) AS ci
    FROM matches AS m
    JOIN pools AS f ON f.pool_id = m.pool_id
    JOIN pools AS s ON s.pool_id = m.baseline_pool_id
    JOIN pooled AS fp ON fp.pool_id = m.pool_id
    JOIN pooled AS sp ON sp.pool_id = m.baseline_pool_id
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
    p.framework, p.precision, p.scale, p.interconnect, p.baseline_interconnect, p.systems,
    p.baseline_systems, p.accelerator_models, p.baseline_accelerator_models, p.runs,
    p.baseline_runs, p.minutes, p.baseline_minutes, p.gain,
    p.ci.low AS gain_ci_low, p.ci.high AS gain_ci_high,
    p.ci.low <= 1 AND p.ci.high >= 1 AS within_noise,
    nullif(concat_ws('; ',
        CASE WHEN p.accelerator_models <> p.baseline_accelerator_models
             THEN 'accelerator models differ' END,
        CASE WHEN p.nodes_min <> p.baseline_nodes_min OR p.nodes_max <> p.baseline_nodes_max
             THEN format('nodes {}-{} vs {}-{}', p.nodes_min, p.nodes_max,
                         p.baseline_nodes_min, p.baseline_nodes_max) END,
        -- local runs name a system per interconnect mode: one host with peer-to-peer on and off
        -- differs in the link alone
        CASE WHEN p.source = 'local' AND p.submitters <> p.baseline_submitters
             THEN 'different hosts'
             WHEN p.source <> 'local' AND p.systems <> p.baseline_systems
             THEN 'different systems' END), '')
        AS confounders,
    NULL AS published_row_id, NULL AS qualifiers
FROM pairs AS p
UNION ALL
SELECT
    'published', 'published', study, NULL, benchmark, NULL, accelerators, framework,
    precision, NULL, interconnect, 'pcie', coalesce(system, accelerator), NULL, accelerator,
    NULL, NULL, NULL, NULL, NULL, stated_gain, NULL, NULL, NULL, baseline, row_id, qualifiers
FROM stated
ORDER BY kind, source, round, benchmark, chip, accelerators, precision, interconnect
