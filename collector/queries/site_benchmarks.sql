-- site_benchmarks: the benchmarks index: per benchmark and kind of evidence (proxy-scale runs
-- left out), how many configurations have a score and the fastest of them (site_scores).
SELECT
    kind, benchmark, count(*) AS configurations,
    min(score_minutes) AS score_minutes,
    arg_min(hardware, score_minutes) AS hardware,
    arg_min(submitter, score_minutes) AS submitter,
    arg_min(CASE WHEN source = 'local' THEN 'suite ' ELSE '' END || round, score_minutes) AS round,
    arg_min(system_id, score_minutes) AS system_id
FROM site_scores
WHERE evidence <> 'proxy' AND score_minutes IS NOT NULL
GROUP BY evidence, kind, benchmark
ORDER BY evidence_rank(evidence), benchmark
