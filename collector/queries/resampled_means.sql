-- resampled_means: the bootstrap distribution of each configuration's mean time to train and
-- mean throughput, and of each pool's mean time to train (interconnect_delta): `resamples`
-- resamples of its runs, drawn with replacement.
-- Draw d of resample b for a configuration of n runs takes run hash(seed, n, b, d) % n (runs in
-- evidence_id order): groups of equal size share index patterns, so the work is one weight per
-- (size, resample, run position) and a configuration's resampled mean is a weighted sum.
-- A ratio pairs resample b of its configuration with resample (b + resamples / 2) % resamples
-- of its baseline, so the two sides never use the same pattern.
WITH params AS (SELECT seed, resamples FROM bootstrap_params),
values_ AS (
    SELECT config_id AS group_id, 'minutes' AS measure, minutes AS v, evidence_id
    FROM observations WHERE minutes IS NOT NULL
    UNION ALL
    SELECT config_id, 'throughput', throughput_samples_per_s, evidence_id
    FROM observations WHERE throughput_samples_per_s IS NOT NULL
    UNION ALL
    SELECT pool_id, 'pool_minutes', minutes, evidence_id
    FROM observations WHERE minutes IS NOT NULL
),
positioned AS (
    SELECT
        group_id, measure, v,
        (row_number() OVER (g ORDER BY evidence_id) - 1)::INTEGER AS i, count(*) OVER g AS n
    FROM values_
    WINDOW g AS (PARTITION BY group_id, measure)
),
sizes AS (SELECT DISTINCT n FROM positioned WHERE n >= 2),
draws AS (
    SELECT s.n, r.b, (hash(p.seed, s.n, r.b, d.d) % s.n)::INTEGER AS i
    FROM sizes AS s
    CROSS JOIN params AS p
    CROSS JOIN range(p.resamples) AS r(b)
    CROSS JOIN LATERAL (SELECT unnest(range(s.n)) AS d) AS d
),
weights AS (
    SELECT n, b, i, count(*)::DOUBLE / any_value(n) AS weight FROM draws GROUP BY n, b, i
)
SELECT p.group_id, p.measure, w.b AS resample, sum(w.weight * p.v) AS mean
FROM positioned AS p
JOIN weights AS w ON w.n = p.n AND w.i = p.i
GROUP BY p.group_id, p.measure, w.b
