-- samples: the runs behind each configuration's means, as lists in evidence_id order, for the
-- ratio tables to resample (bootstrap_ratio). Internal: it feeds the intervals, it is not shown.
SELECT
    config_id,
    list(minutes ORDER BY evidence_id) FILTER (WHERE minutes IS NOT NULL) AS minutes,
    list(throughput_samples_per_s ORDER BY evidence_id)
        FILTER (WHERE throughput_samples_per_s IS NOT NULL) AS throughput_samples_per_s
FROM observations
GROUP BY config_id
