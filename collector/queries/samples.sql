-- samples: the runs behind each configuration's means, as lists in evidence_id order, for
-- configurations (bootstrap_mean) and the ratio tables (bootstrap_ratio) to resample.
-- Internal: it feeds the intervals, it is not shown.
WITH ordered AS (
    -- each configuration's observations in evidence_id order, one list sort per configuration
    SELECT
        config_id,
        list_sort(list((evidence_id, minutes, throughput_samples_per_s))) AS observations
    FROM observations
    GROUP BY config_id
)
SELECT
    config_id,
    nullif(list_filter(list_transform(observations, lambda o: o[2]), lambda v: v IS NOT NULL),
           []) AS minutes,
    nullif(list_filter(list_transform(observations, lambda o: o[3]), lambda v: v IS NOT NULL),
           []) AS throughput_samples_per_s
FROM ordered
