-- model_results: the official results an accelerator-model ratio may rest on, like for like
-- (comparisons.yml): every configuration on one server in the newest official round of its
-- benchmark with a score, its model and vendor in words, why it is left out (another
-- division, a system not available) and, for the rest, whether its model's results at that
-- count are corroborated (from the vendor's own submission, or from two submitters at least).
-- site_model_ratios and site_model_pairs both read it, so both publish under one rule.
WITH newest AS (
    SELECT benchmark, max_by(round, round_key(round)) AS round
    FROM configurations
    WHERE source = 'official' AND minutes IS NOT NULL
    GROUP BY benchmark
),
named AS (
    SELECT
        c.*, n.model, n.vendor, sy.availability,
        CASE
            WHEN NOT list_contains(r.divisions, CASE c.division WHEN 'close' THEN 'closed'
                                                 ELSE c.division END)
                THEN c.division || ' division'
            WHEN len(list_filter(r.not_available,
                     lambda p: contains(lower(coalesce(sy.availability, '')), p))) > 0
                THEN 'not available (' || lower(sy.availability) || ')'
        END AS excluded
    FROM configurations AS c
    JOIN newest USING (benchmark, round)
    JOIN accelerator_words AS n ON n.accelerator = c.accelerator
    CROSS JOIN model_ratio_rules AS r
    LEFT JOIN (
        SELECT system_id, source, string_agg(DISTINCT availability, ', ') AS availability
        FROM store.systems GROUP BY ALL
    ) AS sy ON sy.system_id = c.system_id AND sy.source = c.source
    WHERE c.source = 'official' AND c.nodes = 1 AND c.minutes IS NOT NULL AND n.model IS NOT NULL
),
corroborated AS (
    -- a model's results stand for it when its vendor submitted one or several submitters did
    SELECT
        benchmark, accelerators, model,
        bool_or(EXISTS (
            SELECT 1 FROM vendor_submitters AS v
            WHERE v.vendor = named.vendor AND contains(lower(named.submitter), v.pattern)))
            OR count(DISTINCT submitter) >= any_value(r.min_submitters) AS corroborated
    FROM named
    CROSS JOIN model_ratio_rules AS r
    WHERE excluded IS NULL
    GROUP BY ALL
)
SELECT n.*, k.corroborated
FROM named AS n
LEFT JOIN corroborated AS k USING (benchmark, accelerators, model)
ORDER BY benchmark, accelerators, model, minutes, config_id
