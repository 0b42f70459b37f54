-- power: measured accelerator power and energy of each run that sampled it, over the run's
-- timed window (run_start to run_stop). Samples that carry the wall clock are placed by it;
-- older telemetry files have only seconds since sampling began, and are aligned at their
-- last sample with run_stop (sampling ends when the run's processes have exited).
WITH sampled AS (
    SELECT
        t.run_id, t.device, t.time_s, t.unix_s, t.gpu_power_w, t.gpu_util_pct,
        t.gpu_sm_clock_mhz, t.gpu_temp_c, r.run_start_unix_s, r.run_stop_unix_s,
        r.time_to_train_s,
        max(t.time_s) OVER (PARTITION BY t.run_id) AS end_s,
        bool_and(t.unix_s IS NOT NULL) OVER (PARTITION BY t.run_id) AS clocked
    FROM store.telemetry AS t
    JOIN store.runs AS r USING (run_id)
    WHERE t.gpu_power_w IS NOT NULL AND r.time_to_train_s > 0
),
timed AS (
    SELECT *
    FROM sampled
    WHERE CASE WHEN clocked THEN unix_s BETWEEN run_start_unix_s AND run_stop_unix_s
               ELSE time_s BETWEEN end_s - time_to_train_s AND end_s END
),
devices AS (
    SELECT
        -- means over ordered lists: the same bits whatever order the threads add in
        run_id, device, any_value(clocked) AS clocked, count(*) AS samples,
        list_avg(list(gpu_power_w ORDER BY time_s)) AS power_w,
        list_avg(list(gpu_util_pct ORDER BY time_s)) AS util_pct,
        max(gpu_temp_c) AS temp_max_c, list(gpu_sm_clock_mhz) AS clocks
    FROM timed
    GROUP BY run_id, device
),
per_run AS (
    SELECT
        run_id, count(*) AS devices_sampled, min(samples) AS samples_per_device,
        list_sum(list(power_w ORDER BY device)) AS power_w,
        list_avg(list(util_pct ORDER BY device)) AS gpu_util_pct,
        min(list_median(clocks)) AS sm_clock_median_min_mhz, max(temp_max_c) AS gpu_temp_max_c,
        -- clocked is a property of the run's file
        CASE WHEN any_value(clocked) THEN 'wall clock' ELSE 'end of sampling' END AS aligned_by
    FROM devices
    GROUP BY run_id
)
SELECT
    r.source, r.round, r.system_id, r.system, r.benchmark, r.run, r.status, r.accelerator,
    r.accelerators, r.precision, r.interconnect, r.scale, r.time_to_train_s / 60 AS minutes,
    p.devices_sampled, p.samples_per_device, p.power_w,
    p.power_w / p.devices_sampled AS power_per_accelerator_w,
    p.power_w * r.time_to_train_s / 3.6e6 AS energy_kwh, p.gpu_util_pct,
    p.sm_clock_median_min_mhz, p.gpu_temp_max_c, p.aligned_by, r.run_id
FROM per_run AS p
JOIN store.runs AS r USING (run_id)
ORDER BY r.source, r.round, r.system_id, r.benchmark, r.run, r.run_id
