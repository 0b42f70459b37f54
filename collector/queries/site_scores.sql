-- site_scores: the scores as the site shows them. One row per scores row, with the fastest and
-- slowest converged run of the configuration, the hardware in words (hardware_words.yml), the
-- kind of evidence, whether it ran on one server, and its rank among the scored configurations
-- of its benchmark, round and kind of evidence on one server or on several and among all of
-- them (as the benchmark page's chart of the round ranks them); and for official
-- results, the logs of the configuration missing from the stored copy and the configurations
-- of its benchmark and round none of whose logs is stored (log_gaps).
WITH spread AS (
    SELECT
        source, round, system_id, benchmark, precision, interconnect, accelerators,
        min(minutes) AS fastest_minutes, max(minutes) AS slowest_minutes
    FROM runs
    WHERE status = 'success'
    GROUP BY ALL
),
named AS (
    SELECT
        s.*, n.model, n.vendor,
        -- preview and research systems are not for sale: labelled wherever they are shown
        CASE WHEN s.source <> 'official' THEN NULL
             WHEN lower(sy.availability) LIKE '%preview%' THEN 'preview'
             WHEN lower(sy.availability) LIKE '%research%' THEN 'research'
             ELSE 'available' END AS availability
    FROM scores AS s
    LEFT JOIN accelerator_words AS n ON n.accelerator = s.accelerator
    LEFT JOIN (
        SELECT system_id, source, string_agg(DISTINCT availability, ', ') AS availability
        FROM store.systems GROUP BY ALL
    ) AS sy ON sy.system_id = s.system_id AND sy.source = s.source
),
described AS (
    SELECT
        n.*,
        evidence_of(n.source, n.scale) AS evidence,
        coalesce(n.model, n.accelerator) AS accelerator_model,
        n.nodes = 1 AS one_server,
        CASE WHEN n.accelerators = 0 THEN 'CPU only'
             WHEN n.accelerators IS NULL THEN n.system || ' (hardware not described)'
             ELSE n.accelerators || ' x ' || coalesce(n.model, n.accelerator, 'accelerator')
        END
        || coalesce(', ' || n.nodes || CASE WHEN n.nodes = 1 THEN ' node' ELSE ' nodes' END, '')
        || coalesce(', ' || l.words, '') AS hardware,
        sp.fastest_minutes, sp.slowest_minutes, d.variance_pct
    FROM named AS n
    LEFT JOIN benchmark_definitions AS d
        ON d.definition = n.definition AND d.benchmark = n.benchmark
    LEFT JOIN link_names AS l ON l.interconnect = n.interconnect
    LEFT JOIN spread AS sp
        ON sp.source = n.source AND sp.round = n.round AND sp.system_id = n.system_id
        AND sp.benchmark = n.benchmark
        AND sp.precision IS NOT DISTINCT FROM n.precision
        AND sp.interconnect IS NOT DISTINCT FROM n.interconnect
        AND sp.accelerators IS NOT DISTINCT FROM n.accelerators
),
placed AS (
    -- tied with the fastest of its class: within the benchmark's allowed run-to-run variance
    -- of it, or an interval that overlaps the fastest one's
    SELECT
        *,
        CASE WHEN score_minutes IS NOT NULL THEN
            score_minutes <= (1 + coalesce(variance_pct, 0) / 100) * min(score_minutes) OVER c
            OR coalesce(score_ci_low_minutes
                <= arg_min(score_ci_high_minutes, score_minutes) OVER c, false)
        END AS tied_for_fastest
    FROM described
    WINDOW c AS (PARTITION BY evidence, benchmark, round, one_server)
),
gaps AS (
    SELECT 'official' AS source, round, benchmark, system_id, sum(logs_missing) AS logs_missing
    FROM log_gaps
    WHERE NOT configuration_absent
    GROUP BY ALL
),
absent AS (
    -- per class: a configuration whose node count is not described may be in either
    SELECT
        'official' AS source, round, benchmark,
        count(*) FILTER (WHERE coalesce(nodes = 1, true)) AS one_server_configurations,
        sum(logs_missing) FILTER (WHERE coalesce(nodes = 1, true)) AS one_server_logs,
        count(*) FILTER (WHERE coalesce(nodes > 1, true)) AS at_scale_configurations,
        sum(logs_missing) FILTER (WHERE coalesce(nodes > 1, true)) AS at_scale_logs,
        count(*) AS all_configurations, sum(logs_missing) AS all_logs
    FROM log_gaps
    WHERE configuration_absent
    GROUP BY ALL
)
SELECT
    evidence,
    evidence_kind(evidence, scale) AS kind,
    source, scale, round, submitter, division, system_id, system, benchmark, definition,
    accelerator, accelerator_model, vendor, accelerators, nodes, one_server, interconnect,
    precision, hardware, availability,
    concat_ws(' · ', hardware, submitter || ' ' || CASE WHEN source = 'local' THEN 'suite ' ELSE ''
        END || round) AS label,
    runs_total, runs_converged, runs_used, score_minutes, score_ci_low_minutes,
    score_ci_high_minutes, fastest_minutes, slowest_minutes, unscorable_reason, variance_pct,
    tied_for_fastest,
    CASE WHEN score_minutes IS NOT NULL THEN
        count(*) FILTER (WHERE tied_for_fastest) OVER (
            PARTITION BY evidence, benchmark, round, one_server)
    END AS tied_in_class,
    round = max_by(round, round_key(round)) FILTER (WHERE score_minutes IS NOT NULL)
        OVER (PARTITION BY evidence, benchmark) AS newest_round,
    CASE WHEN score_minutes IS NOT NULL THEN
        count(score_minutes) OVER (
            PARTITION BY evidence, benchmark, round, one_server)
    END AS configurations_in_class,
    CASE WHEN score_minutes IS NOT NULL THEN
        rank() OVER (
            PARTITION BY evidence, benchmark, round, one_server,
                score_minutes IS NULL
            ORDER BY score_minutes)
    END AS rank_in_class,
    CASE WHEN score_minutes IS NOT NULL THEN
        rank() OVER (
            PARTITION BY evidence, benchmark, round, score_minutes IS NULL
            ORDER BY score_minutes)
    END AS rank_in_round,
    coalesce(g.logs_missing, 0) AS logs_missing,
    coalesce(CASE WHEN one_server THEN a.one_server_configurations
        WHEN NOT one_server THEN a.at_scale_configurations ELSE a.all_configurations END, 0)
        AS absent_configurations,
    coalesce(CASE WHEN one_server THEN a.one_server_logs WHEN NOT one_server THEN a.at_scale_logs
        ELSE a.all_logs END, 0) AS absent_logs
FROM placed
LEFT JOIN gaps AS g USING (source, round, benchmark, system_id)
LEFT JOIN absent AS a USING (source, round, benchmark)
ORDER BY evidence_rank(evidence), benchmark,
    round_key(round) DESC,
    score_minutes NULLS LAST, system_id, precision, interconnect, accelerators
