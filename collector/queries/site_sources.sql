-- site_sources: the runs the store holds, counted as the Sources page lists them: official
-- results by round, division and submitter; local runs by suite version, host and scale.
SELECT
    source, round, CASE WHEN source = 'official' THEN division END AS division, submitter,
    CASE WHEN source = 'local' THEN coalesce(scale, 'unknown') END AS scale, count(*) AS runs
FROM runs
GROUP BY ALL
ORDER BY source DESC, round, division, submitter, scale
