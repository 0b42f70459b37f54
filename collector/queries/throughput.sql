-- throughput: mean training throughput of each configuration that logged it, with its
-- bootstrap interval and the throughput per accelerator.
SELECT
    source, round, division, system_id, system, benchmark, accelerator, accelerators, nodes,
    framework, precision, interconnect, scale, batch_size, throughput_runs AS runs,
    throughput_samples_per_s, throughput_ci_low_samples_per_s,
    throughput_ci_high_samples_per_s,
    throughput_samples_per_s / nullif(accelerators, 0) AS samples_per_s_per_accelerator,
    published_row_ids, qualifiers
FROM configurations
WHERE throughput_samples_per_s IS NOT NULL
ORDER BY source, round, benchmark, system_id, accelerators, precision, config_id
