-- observations: every converged time to train and every logged throughput, from the runs
-- (official, local) and from the published studies, each tagged with its configuration.
-- A published number is one configuration by itself: two numbers of a study are two settings,
-- never two runs of one.
WITH models AS (
    -- each distinct accelerator name mapped to its model in the canonical accelerator table:
    -- the model ingest mapped the run to, else the first whose pattern the name matches
    SELECT names.name, names.model, m.key AS accelerator_key, m.chip
    FROM (
        SELECT DISTINCT accelerator AS name, accelerator_model AS model
        FROM store.runs WHERE accelerator IS NOT NULL
        UNION SELECT DISTINCT accelerator, NULL FROM store.published WHERE accelerator IS NOT NULL
    ) AS names
    JOIN accelerator_models AS m
        ON m.key = names.model
        OR (names.model IS NULL AND regexp_matches(names.name, m.match, 'i'))
    QUALIFY row_number() OVER (PARTITION BY names.name, names.model ORDER BY m.rank) = 1
),
batches AS (
    -- the global batch a run logged (local runs log it; v0.5 official logs do not)
    SELECT run_id, any_value(trim(value_text, '"')) AS batch_size
    FROM store.events
    WHERE key = 'global_batch_size'
    GROUP BY run_id
),
from_runs AS (
    SELECT
        source, round, division, submitter, system_id, system, benchmark, accelerator,
        accelerator_model, accelerators, nodes, framework, precision, interconnect, scale,
        b.batch_size,
        -- a throughput-scale run trains to no target: its wall time is not a time to train
        CASE WHEN scale IS DISTINCT FROM 'throughput' THEN time_to_train_s / 60 END AS minutes,
        throughput_samples_per_s, r.run_id AS evidence_id, NULL::VARCHAR AS qualifiers
    FROM store.runs AS r
    LEFT JOIN batches AS b ON b.run_id = r.run_id AND r.source = 'local'
    WHERE status = 'success'
),
points AS (
    -- published point values: bounds and range ends are not measurements
    SELECT * FROM store.published
    WHERE qualifiers IS NULL OR NOT regexp_matches(qualifiers, 'bound|range')
),
per_epoch AS (
    -- minutes per epoch x epochs, paired when one row of each describes the same setting
    SELECT
        m.*, m.value * e.value AS minutes, m.row_id || '+' || e.row_id AS evidence_id,
        CASE WHEN m.qualifiers IS NOT DISTINCT FROM e.qualifiers THEN m.qualifiers
             ELSE concat_ws(',', m.qualifiers, e.qualifiers) END AS both_qualifiers
    FROM points AS m
    JOIN points AS e
        ON e.metric = 'epochs' AND e.study = m.study AND e.citation = m.citation
        AND e.system IS NOT DISTINCT FROM m.system
        AND e.accelerator IS NOT DISTINCT FROM m.accelerator
        AND e.accelerators IS NOT DISTINCT FROM m.accelerators
        AND e.precision IS NOT DISTINCT FROM m.precision
        AND e.framework IS NOT DISTINCT FROM m.framework
        AND e.benchmark IS NOT DISTINCT FROM m.benchmark
        AND e.batch_size IS NOT DISTINCT FROM m.batch_size
    WHERE m.metric = 'minutes_per_epoch'
    QUALIFY count(*) OVER (PARTITION BY m.row_id) = 1
        AND count(*) OVER (PARTITION BY e.row_id) = 1
),
published AS (
    SELECT
        *, CASE metric WHEN 'time_to_train_seconds' THEN value / 60 ELSE value END AS minutes,
        NULL::DOUBLE AS throughput, row_id AS evidence_id, qualifiers AS both_qualifiers
    FROM points WHERE metric IN ('time_to_train_minutes', 'time_to_train_seconds')
    UNION ALL BY NAME
    SELECT *, NULL::DOUBLE AS throughput FROM per_epoch
    UNION ALL BY NAME
    SELECT
        *, NULL::DOUBLE AS minutes, value AS throughput, row_id AS evidence_id,
        qualifiers AS both_qualifiers
    FROM points WHERE metric = 'throughput_samples_per_s'
),
from_published AS (
    SELECT
        'published' AS source, study AS round, NULL::VARCHAR AS division, study AS submitter,
        'published/' || study || '/' || coalesce(system, accelerator, 'unnamed') AS system_id,
        coalesce(system, accelerator, 'unnamed') AS system, benchmark, accelerator,
        NULL::VARCHAR AS accelerator_model, accelerators, nodes, framework, precision, interconnect, NULL::VARCHAR AS scale,
        batch_size, minutes, throughput AS throughput_samples_per_s, evidence_id,
        both_qualifiers AS qualifiers
    FROM published
    WHERE benchmark IS NOT NULL
),
unioned AS (
    SELECT * FROM from_runs
    UNION ALL
    SELECT * FROM from_published
)
SELECT
    hash(u.source, u.round, u.division, u.system_id, u.benchmark, u.accelerator,
         u.accelerators, u.framework, u.precision, u.interconnect, u.scale,
         u.batch_size, CASE WHEN u.source = 'published' THEN u.evidence_id END) AS config_id,
    hash(u.source, u.round, u.division, u.benchmark, models.chip, u.accelerators,
         u.framework, u.precision, u.interconnect, u.scale) AS pool_id,
    u.source, u.round, u.division, u.submitter, u.system_id, u.system, u.benchmark,
    benchmark_definition(u.benchmark, u.round) AS definition,
    u.accelerator, models.accelerator_key, models.chip, u.accelerators, u.nodes, u.framework,
    u.precision, u.interconnect, u.scale, u.batch_size, u.minutes, u.throughput_samples_per_s,
    u.evidence_id, u.qualifiers
FROM unioned AS u
LEFT JOIN models
    ON models.name = u.accelerator AND models.model IS NOT DISTINCT FROM u.accelerator_model
