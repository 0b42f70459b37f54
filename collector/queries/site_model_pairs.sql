-- site_model_pairs: any two accelerator models at an equal count on one server, in the newest
-- official round of each benchmark, like for like as model_results states it (closed division,
-- available systems, results corroborated or both from one submitter): per model the
-- configuration with the best MLPerf score at that count, and for every ordered pair (a, b) how
-- many times as fast a trains as b (b's score / a's score), with the interval of the round's
-- scoring rule over resamples of both configurations' runs (bootstrap_score_ratio, as every
-- ratio of scores); only where both configurations have three converged runs or more.
WITH newest AS (
    SELECT benchmark, max_by(round, round_key(round)) AS round
    FROM site_answer_scores
    WHERE available
    GROUP BY benchmark
    -- a benchmark a later round renamed is asked for by its new name
    HAVING NOT max_by(renamed_later, round_key(round))
),
best AS (
    SELECT a.*, m.corroborated,
        count(*) OVER (PARTITION BY a.benchmark, a.accelerators, a.accelerator_model)
            AS configurations
    FROM site_answer_scores AS a
    JOIN newest USING (benchmark, round)
    JOIN model_results AS m ON m.config_id = a.config_id AND m.excluded IS NULL
    WHERE a.available AND a.nodes = 1 AND a.accelerator_model IS NOT NULL
    QUALIFY row_number() OVER (
        PARTITION BY a.benchmark, a.accelerators, a.accelerator_model
        ORDER BY a.score_minutes, a.system_id) = 1
),
pairs AS (
    SELECT
        a.benchmark, a.round, a.quality_metric || ' ' || a.quality_target AS quality_target,
        a.accelerators, a.accelerator_model AS model_a, a.vendor AS vendor_a, a.hardware AS hardware_a,
        a.submitter AS submitter_a, a.system_id AS system_id_a,
        a.runs_converged AS runs_a, a.score_minutes AS score_a_minutes,
        a.raw_score_minutes AS raw_a_minutes, a.rcp_scaling_factor AS rcp_a,
        a.configurations AS configurations_a, a.logs_url AS logs_url_a,
        b.accelerator_model AS model_b, b.vendor AS vendor_b, b.hardware AS hardware_b,
        b.submitter AS submitter_b, b.system_id AS system_id_b,
        b.runs_converged AS runs_b, b.score_minutes AS score_b_minutes,
        b.raw_score_minutes AS raw_b_minutes, b.rcp_scaling_factor AS rcp_b,
        b.configurations AS configurations_b, b.logs_url AS logs_url_b,
        -- one resampling per unordered pair: (b, a) reads (a, b)'s interval inverted, so the
        -- order the models are picked in changes nothing but the direction
        CASE WHEN a.runs_converged >= 3 AND b.runs_converged >= 3
            AND a.accelerator_model < b.accelerator_model
            THEN bootstrap_score_ratio(y.minutes, y.dropped_low, y.dropped_high,
                x.minutes, x.dropped_low, x.dropped_high) END AS ci
    FROM best AS a
    JOIN best AS b
        ON b.benchmark = a.benchmark AND b.accelerators = a.accelerators
        AND b.accelerator_model <> a.accelerator_model
        -- like for like (model_results): both models' results corroborated, or one submitter's
        AND (a.corroborated AND b.corroborated OR a.submitter = b.submitter)
    LEFT JOIN samples AS x ON x.config_id = a.config_id
    LEFT JOIN samples AS y ON y.config_id = b.config_id
)
SELECT
    benchmark, round, quality_target, accelerators, model_a, vendor_a, hardware_a, submitter_a, system_id_a,
    runs_a, score_a_minutes, raw_a_minutes, rcp_a, configurations_a, logs_url_a, model_b, vendor_b,
    hardware_b, submitter_b, system_id_b, runs_b, score_b_minutes, raw_b_minutes, rcp_b,
    configurations_b, logs_url_b,
    score_b_minutes / score_a_minutes AS a_over_b_speed,
    ci_low, ci_high, variance_pct,
    -- tied as the model ratios on Home are (the tied macro)
    tied(score_b_minutes / score_a_minutes, variance_pct, ci_low, ci_high) AS tie
FROM (
    SELECT p.*, coalesce(p.ci.low, 1 / r.ci.high) AS ci_low,
        coalesce(p.ci.high, 1 / r.ci.low) AS ci_high, d.variance_pct
    FROM pairs AS p
    LEFT JOIN pairs AS r
        ON r.benchmark = p.benchmark AND r.accelerators = p.accelerators
        AND r.model_a = p.model_b AND r.model_b = p.model_a
    LEFT JOIN benchmark_definitions AS d
        ON d.definition = benchmark_definition(p.benchmark, p.round) AND d.benchmark = p.benchmark
)
ORDER BY benchmark, accelerators, model_a, model_b
