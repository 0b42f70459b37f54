-- time_to_accuracy: quality reached against minutes since run start, per evaluation, for
-- time-to-accuracy curves. Whether an evaluation reached the target follows the direction in
-- which the benchmark's quality improves (quality.yml).
SELECT
    r.source, r.round, r.division, r.system_id, r.system, r.benchmark, r.accelerator,
    r.accelerators, r.precision, r.interconnect, r.scale, r.run_id, r.run, r.status,
    -- minutes to 1e-7 (6 microseconds; the logs time events to the millisecond, v0.5's to the
    -- microsecond): the division's seventeen digits were a sixth of the table's download
    e.seq, round(e.elapsed_s / 60, 7) AS minutes, e.epoch AS epochs, e.quality, r.quality_target,
    CASE coalesce(q.better, 'higher')
        WHEN 'higher' THEN e.quality >= r.quality_target
        WHEN 'lower' THEN e.quality <= r.quality_target
    END AS reached_target
FROM store.evals AS e
JOIN store.runs AS r USING (run_id)
LEFT JOIN quality_direction AS q ON q.benchmark = r.benchmark
WHERE e.elapsed_s >= 0  -- an evaluation logged before run_start is a clock error of its log
ORDER BY r.source, r.round, r.system_id, r.benchmark, r.run, e.seq
