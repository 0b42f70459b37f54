-- site_comparisons: the measured comparisons the Compare page charts, one value with its 95%
-- interval per row, labelled in words: scaling efficiency, mixed-precision gain, the cost of
-- running without NVLink (percent slower: (gain - 1) x 100) and speedups over a baseline
-- system that baselines.yml names. Left out: rows that state a bound or one end of a range
-- (a study's "over 80%"), pairs that differ in more than what they compare (their
-- confounders column says what; a published row's names what the study compared instead) and
-- proxy-scale runs, which compare nothing. Each chart's rows come largest first, as it ranks them.
WITH measured AS (
    SELECT
        'scaling' AS topic, source, scale, round, benchmark, qualifiers, NULL AS confounders,
        precision,
        efficiency_pct AS value, efficiency_ci_low_pct AS low, efficiency_ci_high_pct AS high,
        system AS what, accelerators, NULL AS pool, NULL AS link, kind,
        CASE WHEN baseline_accelerators <> 1 THEN 'vs ' || baseline_accelerators END AS against,
        accelerator, submitter AS who, framework,
        -- a study that compared how GPUs exchange gradients names it in the row's notes
        (SELECT max(regexp_extract(p.notes, 'communication method: (\w+)', 1))
         FROM store.published AS p
         WHERE p.row_id = trim(split_part(published_row_ids, ',', 1))) AS method
    FROM scaling
    UNION ALL
    SELECT
        'precision_gain', source, scale, round, benchmark, qualifiers, NULL, NULL, gain,
        gain_ci_low, gain_ci_high, system, accelerators, NULL, NULL, kind, NULL, accelerator,
        split_part(system_id, '/', 2), framework, NULL
    FROM precision_gain
    UNION ALL
    -- one submitter's pair of systems (withheld pairs have no gain): the NVLink side's system,
    -- the precision and how the runs without NVLink ran
    SELECT
        'interconnect_delta', source, scale, round, benchmark, qualifiers, confounders,
        NULL, (gain - 1) * 100, (gain_ci_low - 1) * 100, (gain_ci_high - 1) * 100, systems,
        accelerators, precision,
        CASE baseline_interconnect WHEN 'pcie' THEN 'over PCIe'
            WHEN 'no-p2p' THEN 'NVLink peer-to-peer disabled (traffic through host memory)' END,
        kind, NULL, NULL, NULL, framework, NULL
    FROM interconnect_delta
    UNION ALL
    -- two hosts may name their systems alike: the system id less its round says whose; the
    -- baseline by its submitter, system and accelerators ('vs DellEMC C4140, 4 x NVIDIA V100')
    SELECT
        'speedups', source, scale, round, benchmark, qualifiers, NULL, precision, speedup,
        speedup_ci_low, speedup_ci_high,
        coalesce(regexp_replace(system_id, '^[^/]*/', ''), system),
        accelerators, NULL, NULL, NULL,
        'vs ' || concat_ws(', ', concat_ws(' ', split_part(baseline_system_id, '/', 2),
            baseline_system), baseline_accelerators || ' x ' || coalesce(bw.model,
            baseline_accelerator)),
        speedups.accelerator, split_part(system_id, '/', 2), framework, NULL
    FROM speedups
    LEFT JOIN accelerator_words AS bw ON bw.accelerator = speedups.baseline_accelerator
    WHERE baseline_kind = 'system'
),
labelled AS (
SELECT
    topic,
    evidence_kind(evidence_of(source, scale), scale) AS kind,
    evidence_rank(evidence_of(source, scale)) AS evidence_rank,
    benchmark,
    -- who ran it and on what, in words (the submitter, N x the accelerator model), where the
    -- accelerator table names the model; else the system's name and count
    -- the benchmark in words: its definition's model (v4.x's gnn and v5.x's rgat both
    -- 'R-GAT'; ssd from v2.0 'RetinaNet ResNeXt50'), a published study's workload by name
    concat_ws(' · ', benchmark_words(benchmark, m.round),
        CASE WHEN w.model IS NOT NULL AND accelerators IS NOT NULL
            THEN concat_ws(', ', nullif(coalesce('study ' || sw.number, who), ''),
                accelerators || ' x ' || w.model)
            ELSE nullif(concat_ws(' · ', nullif(what, ''), accelerators), '') END,
        nullif(pool, ''), link,
        CASE WHEN kind IN ('strong', 'time') THEN 'time to train'
            WHEN kind IN ('weak', 'throughput') THEN 'throughput' END,
        against,
        -- the round (a study's rows: the framework, precision and communication method,
        -- which studies vary)
        CASE WHEN source = 'published' THEN nullif(concat_ws(', ', nullif(framework, ''),
            precision, 'via ' || nullif(method, '')), '') ELSE m.round END) AS label,
    what,
    -- a published study by its number, as every page names it ('study 001')
    value, low, high, coalesce('study ' || st.number, round, '') AS detail
FROM measured AS m
LEFT JOIN accelerator_words AS w USING (accelerator)
LEFT JOIN (SELECT study, number FROM store.studies) AS st ON st.study = m.round
LEFT JOIN (SELECT study, number FROM store.studies) AS sw ON sw.study = m.who
WHERE value IS NOT NULL AND coalesce(benchmark, '') <> ''
    AND evidence_of(source, scale) <> 'proxy'
    AND NOT regexp_matches(coalesce(qualifiers, ''), 'bound|range min|range max')
    AND NOT (coalesce(confounders, '') <> '' AND source <> 'published')
),
-- one submitter's several systems of one accelerator count (hosts that differ in their CPUs
-- or storage) read alike: such rows also name their system as submitted
named AS (
    SELECT * REPLACE (CASE WHEN count(*) OVER (PARTITION BY topic, evidence_rank, label) > 1
        AND coalesce(what, '') <> '' THEN label || ' · ' || what ELSE label END AS label)
    FROM labelled
)
SELECT
    topic, kind, evidence_rank, benchmark, label, value, low, high, detail,
    -- its place in its chart (one per topic and kind of evidence): largest value first
    row_number() OVER (
        PARTITION BY topic, evidence_rank ORDER BY value DESC, label, detail, low, high
    ) AS chart_rank
FROM named
ORDER BY topic, evidence_rank, chart_rank
