-- deadline_fit: for each benchmark and deadline (parameters.yml: 8, 4 and 2 hours), the
-- configurations whose mean time to train fits, fewest accelerators first.
SELECT
    c.benchmark, d.deadline_hours,
    row_number() OVER (
        PARTITION BY c.source, c.round, c.benchmark, d.deadline_hours
        ORDER BY c.accelerators NULLS LAST, c.minutes, c.system_id, c.config_id) AS rank,
    c.source, c.round, c.division, c.system_id, c.system, c.accelerator, c.accelerators,
    c.nodes, c.framework, c.precision, c.interconnect, c.scale, c.batch_size, c.runs,
    c.minutes, c.minutes_ci_low, c.minutes_ci_high,
    c.minutes_ci_high <= d.deadline_hours * 60 AS fits_at_ci_high,
    c.published_row_ids, c.qualifiers
FROM configurations AS c
JOIN deadlines AS d ON c.minutes <= d.deadline_hours * 60
ORDER BY c.benchmark, d.deadline_hours DESC, c.source, c.round, rank
