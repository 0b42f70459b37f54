-- site_interconnect_summary: the interconnect answer in one row per kind of evidence of
-- site_interconnect: how many controlled comparisons, how many are ties (the interval holds
-- 1), and the least, median and largest slowdown without the link, with the workload of the
-- largest.
SELECT
    evidence,
    count(*) AS comparisons,
    count(*) FILTER (WHERE slowdown_ci_low IS NOT NULL) AS with_interval,
    count(*) FILTER (WHERE slowdown_ci_low <= 1 AND slowdown_ci_high >= 1) AS ties,
    count(*) FILTER (WHERE slowdown_ci_low > 1) AS slower_without,
    min(slowdown) AS least_slowdown,
    median(slowdown) AS median_slowdown,
    max(slowdown) AS largest_slowdown,
    arg_max(benchmark, slowdown) AS largest_benchmark,
    arg_max(round, slowdown) AS largest_round,
    arg_max(accelerators || ' x ' || accelerator_model, slowdown) AS largest_hardware
FROM site_interconnect
GROUP BY evidence
ORDER BY evidence DESC
