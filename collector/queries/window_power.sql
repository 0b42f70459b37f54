-- window_power: the boards' power and SM clock during the timed windows of each local
-- throughput run (from the first window's epoch_start to the last window's epoch_stop: where
-- its samples per second were measured, warm-up and compilation left out), beside the
-- boards' power limit that the run's system description records. Each GPU's median over its
-- samples in the windows; power per accelerator is the mean of the GPUs' medians, the clock
-- the lowest GPU's median. Telemetry without wall-clock times cannot be placed in the
-- windows: those runs have no row.
WITH windows AS (
    SELECT
        e.run_id,
        min(e.time_unix_s) FILTER (WHERE e.key = 'epoch_start') AS start_unix_s,
        max(e.time_unix_s) FILTER (WHERE e.key = 'epoch_stop') AS stop_unix_s
    FROM store.events AS e
    JOIN store.runs AS r USING (run_id)
    WHERE r.source = 'local' AND r.scale = 'throughput'
        AND e.key IN ('epoch_start', 'epoch_stop')
    GROUP BY e.run_id
),
devices AS (
    SELECT
        t.run_id, t.device, count(*) AS samples,
        median(t.gpu_power_w) AS power_w, median(t.gpu_sm_clock_mhz) AS sm_clock_mhz
    FROM store.telemetry AS t
    JOIN windows AS w USING (run_id)
    WHERE t.gpu_power_w IS NOT NULL AND t.unix_s BETWEEN w.start_unix_s AND w.stop_unix_s
    GROUP BY t.run_id, t.device
),
limits AS (
    SELECT
        system_id,
        list_min(try_cast(json_extract(description_json, '$.collector.power_limit_w')
            AS DOUBLE[])) AS power_limit_w
    FROM store.systems
    WHERE source = 'local'
),
per_run AS (
    SELECT
        run_id, count(*) AS devices_sampled, min(samples) AS samples_per_device,
        -- a mean over an ordered list: the same bits whatever order the threads add in
        list_avg(list(power_w ORDER BY device)) AS power_per_accelerator_w,
        min(sm_clock_mhz) AS sm_clock_median_min_mhz
    FROM devices
    GROUP BY run_id
)
SELECT
    p.run_id, r.system_id, r.benchmark, r.accelerators, r.precision, p.devices_sampled,
    p.samples_per_device, p.power_per_accelerator_w, l.power_limit_w,
    p.power_per_accelerator_w / l.power_limit_w AS power_of_limit_ratio,
    p.sm_clock_median_min_mhz
FROM per_run AS p
JOIN store.runs AS r USING (run_id)
LEFT JOIN limits AS l USING (system_id)
ORDER BY r.system_id, r.benchmark, p.run_id
