-- site_round_gains: what the same class of system, on the same benchmark definition
-- (definitions.yml; never the name alone), (the same count of the same accelerator
-- model on one server) gained from one round to the next it appears in, per benchmark: the
-- fastest configuration of the class in each round (site_scores), and the earlier score over
-- the later one, with the range from the runs (fastest earlier / slowest later to slowest
-- earlier / fastest later). Proxy-scale runs are left out.
WITH best AS (
    SELECT
        *, accelerators || ' x ' || accelerator_model || ', one server' AS class,
        round_key(round)
            AS round_order
    FROM site_scores
    WHERE one_server AND vendor IS NOT NULL AND accelerators > 0
        AND score_minutes IS NOT NULL AND evidence <> 'proxy' AND definition IS NOT NULL
    QUALIFY row_number() OVER (
        PARTITION BY evidence, definition, accelerators, accelerator_model, round
        ORDER BY score_minutes, system_id) = 1
),
paired AS (
    SELECT
        *,
        lag(round) OVER w AS old_round, lag(benchmark) OVER w AS old_benchmark, lag(system_id) OVER w AS old_system_id,
        lag(submitter) OVER w AS old_submitter, lag(system) OVER w AS old_system,
        lag(hardware) OVER w AS old_hardware, lag(score_minutes) OVER w AS old_minutes,
        lag(fastest_minutes) OVER w AS old_fastest_minutes,
        lag(slowest_minutes) OVER w AS old_slowest_minutes
    FROM best
    WINDOW w AS (PARTITION BY evidence, definition, class ORDER BY round_order)
)
SELECT
    evidence, benchmark, definition, class, old_round, old_benchmark, old_system_id, old_submitter, old_system,
    old_hardware, old_minutes, round AS new_round, system_id AS new_system_id,
    submitter AS new_submitter, system AS new_system, hardware AS new_hardware,
    score_minutes AS new_minutes, old_minutes / score_minutes AS speedup,
    old_fastest_minutes / slowest_minutes AS speedup_low,
    old_slowest_minutes / fastest_minutes AS speedup_high,
    -- within the benchmark's allowed run-to-run variance either way: neither round is faster
    -- (the tied macro; the runs' range is no interval, so the variance alone decides)
    tied(old_minutes / score_minutes, variance_pct, NULL, NULL) AS tied
FROM paired
WHERE old_round IS NOT NULL
ORDER BY evidence DESC, benchmark, class, round_order
