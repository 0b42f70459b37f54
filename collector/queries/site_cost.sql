-- site_cost: cost and energy of one training run for every accelerator model in the newest
-- official round: per benchmark of that round and model, the configuration with the fewest
-- accelerator-hours (MLPerf score x accelerators), its accelerators' energy at the power
-- collector measured on the same model and benchmark at full size where it did, else at board
-- power (the accelerator table), and its rental cost at the example price per
-- accelerator-hour of the store's price table (the page lets a reader type their own).
WITH newest AS (
    SELECT max_by(round, round_key(round)) AS round FROM site_answer_scores
),
best AS (
    SELECT a.*, a.score_minutes * a.accelerators / 60 AS accelerator_hours,
        count(*) OVER (PARTITION BY a.benchmark, a.accelerator_model) AS configurations
    FROM site_answer_scores AS a
    JOIN newest USING (round)
    WHERE a.accelerator_model IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY a.benchmark, a.accelerator_model
        ORDER BY a.score_minutes * a.accelerators, a.score_minutes, a.system_id) = 1
),
measured AS (
    SELECT p.benchmark, w.model, count(*) AS measured_runs,
        avg(p.power_per_accelerator_w) AS measured_w
    FROM power AS p
    JOIN accelerator_words AS w ON w.accelerator = p.accelerator
    WHERE p.source = 'local' AND p.status = 'success' AND p.scale = 'throughput'
        AND p.power_per_accelerator_w IS NOT NULL
    GROUP BY ALL
)
SELECT
    b.round, b.benchmark, b.quality_metric || ' ' || b.quality_target AS quality_target,
    b.accelerator_model, b.vendor, b.hardware, b.submitter,
    b.system_id, b.division, b.available, b.accelerators, b.configurations, b.score_minutes,
    b.raw_score_minutes, b.rcp_scaling_factor, b.logs_url, b.accelerator_hours,
    m.tdp_w AS board_power_w, m.source AS board_power_source,
    e.measured_w AS measured_power_w, e.measured_runs,
    coalesce(e.measured_w, m.tdp_w) AS power_used_w,
    CASE WHEN e.measured_w IS NOT NULL THEN 'measured here'
        WHEN m.tdp_w IS NOT NULL THEN 'board power' END AS power_basis,
    b.accelerator_hours * coalesce(e.measured_w, m.tdp_w) / 1000 AS energy_kwh,
    p.usd_per_accelerator_hour AS example_usd_per_accelerator_hour,
    p.label AS price_label,
    b.accelerator_hours * p.usd_per_accelerator_hour AS example_cost_usd
FROM best AS b
LEFT JOIN accelerator_models AS m ON m.key = b.accelerator_key
LEFT JOIN prices AS p ON p.accelerator_key = b.accelerator_key
LEFT JOIN measured AS e ON e.benchmark = b.benchmark AND e.model = b.accelerator_model
ORDER BY b.benchmark, b.accelerator_hours, b.accelerator_model
