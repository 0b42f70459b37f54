-- site_smallest: for each benchmark in its newest official round and each deadline
-- (parameters.yml), the smallest system whose MLPerf score meets the deadline: its
-- accelerator count, the configurations at that count that meet it, every vendor with a
-- configuration that meets it at any count, the fastest, and the configurations whose raw
-- olympic mean meets the deadline but whose score (x RCP factor) does not.
WITH newest AS (
    SELECT benchmark, max_by(round, round_key(round)) AS round
    FROM site_answer_scores
    GROUP BY benchmark
    -- a benchmark a later round renamed is asked for by its new name
    HAVING NOT max_by(renamed_later, round_key(round))
),
pool AS (
    -- a CPU-only system (no accelerators) is its own vendor's: the submitter's CPUs
    SELECT a.* REPLACE (coalesce(a.vendor, CASE WHEN a.accelerators = 0
            THEN 'CPU only (' || a.submitter || ')' END) AS vendor),
        a.division || ', ' || coalesce(a.availability, 'availability not stated')
            AS division_availability,
        d.deadline_hours,
        a.score_minutes <= d.deadline_hours * 60 AS meets,
        a.raw_score_minutes <= d.deadline_hours * 60 AS raw_meets
    FROM site_answer_scores AS a
    JOIN newest USING (benchmark, round)
    CROSS JOIN deadlines AS d
),
smallest AS (
    SELECT benchmark, deadline_hours, min(accelerators) AS accelerators
    FROM pool WHERE meets GROUP BY ALL
)
SELECT
    p.benchmark, p.round, p.deadline_hours,
    count(*) AS configurations,
    count(*) FILTER (WHERE p.meets) AS configurations_meeting,
    any_value(s.accelerators) AS smallest_accelerators,
    string_agg(p.hardware || ' (' || p.submitter || ')', '; '
        ORDER BY p.score_minutes, p.system_id)
        FILTER (WHERE p.meets AND p.accelerators = s.accelerators) AS smallest_hardware,
    min(p.score_minutes) FILTER (WHERE p.meets AND p.accelerators = s.accelerators)
        AS smallest_score_minutes,
    arg_min(p.raw_score_minutes, p.score_minutes)
        FILTER (WHERE p.meets AND p.accelerators = s.accelerators) AS smallest_raw_minutes,
    arg_min(p.rcp_scaling_factor, p.score_minutes)
        FILTER (WHERE p.meets AND p.accelerators = s.accelerators) AS smallest_rcp_factor,
    arg_min(p.division_availability, p.score_minutes)
        FILTER (WHERE p.meets AND p.accelerators = s.accelerators)
        AS smallest_division_availability,
    any_value(p.quality_metric || ' ' || p.quality_target) AS quality_target,
    string_agg(DISTINCT p.vendor, ', ' ORDER BY p.vendor) FILTER (WHERE p.meets)
        AS vendors_meeting,
    string_agg(DISTINCT p.vendor, ', ' ORDER BY p.vendor) AS vendors_in_round,
    arg_min(p.hardware, p.score_minutes) AS fastest_hardware,
    min(p.score_minutes) AS fastest_score_minutes,
    arg_min(p.division_availability, p.score_minutes) AS fastest_division_availability,
    count(*) FILTER (WHERE p.raw_meets AND NOT p.meets) AS raw_only,
    string_agg(p.hardware || ': score ' || round(p.score_minutes, 1) || ' min, raw '
        || round(p.raw_score_minutes, 1) || ' min x RCP factor '
        || round(p.rcp_scaling_factor, 3), '; ' ORDER BY p.accelerators, p.system_id)
        FILTER (WHERE p.raw_meets AND NOT p.meets) AS raw_only_hardware
FROM pool AS p
LEFT JOIN smallest AS s USING (benchmark, deadline_hours)
GROUP BY p.benchmark, p.round, p.deadline_hours
ORDER BY p.benchmark, p.deadline_hours
