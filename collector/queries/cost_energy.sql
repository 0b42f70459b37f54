-- cost_energy: accelerator energy bound and rental cost of one training run of each
-- configuration, from its mean time to train, the accelerators' TDP (accelerators.yml) and the
-- accelerator-hour prices in the store (collector's examples, or a prices CSV ingested); beside the bound, the energy
-- measured where the configuration's runs sampled power (power).
WITH measured AS (
    SELECT
        o.config_id, count(*) AS measured_runs,
        list_avg(list(p.energy_kwh ORDER BY p.run_id)) AS energy_measured_kwh,
        list_avg(list(p.power_per_accelerator_w ORDER BY p.run_id))
            AS power_measured_per_accelerator_w
    FROM power AS p
    JOIN observations AS o ON o.evidence_id = p.run_id AND o.source = p.source
    WHERE p.status = 'success'
    GROUP BY o.config_id
)
SELECT
    c.source, c.round, c.division, c.system_id, c.system, c.benchmark, c.accelerator,
    c.accelerator_key, c.accelerators, c.precision, c.interconnect, c.scale, c.batch_size,
    c.runs, c.minutes, c.minutes_ci_low, c.minutes_ci_high,
    c.accelerators * c.minutes / 60 AS accelerator_hours,
    m.tdp_w, c.accelerators * m.tdp_w * c.minutes / 60 / 1000 AS energy_at_tdp_kwh,
    m.source AS tdp_source, e.measured_runs, e.power_measured_per_accelerator_w,
    e.energy_measured_kwh, p.usd_per_accelerator_hour, p.label AS price_label,
    c.accelerators * c.minutes / 60 * p.usd_per_accelerator_hour AS cost_usd,
    c.accelerators * c.minutes_ci_low / 60 * p.usd_per_accelerator_hour AS cost_ci_low_usd,
    c.accelerators * c.minutes_ci_high / 60 * p.usd_per_accelerator_hour AS cost_ci_high_usd
FROM configurations AS c
LEFT JOIN accelerator_models AS m ON m.key = c.accelerator_key
LEFT JOIN prices AS p ON p.accelerator_key = c.accelerator_key
LEFT JOIN measured AS e ON e.config_id = c.config_id
-- a configuration without a score keeps its measured energy, and no time, cost or bound
WHERE (c.minutes IS NOT NULL OR e.measured_runs IS NOT NULL) AND c.accelerators > 0
ORDER BY c.source, c.round, c.benchmark, c.system_id, c.accelerators, c.precision, c.config_id
