-- accelerator_words: each accelerator string the runs and system descriptions give, with its
-- model in the canonical accelerator table (collector/ingest/accelerators.yml): the model
-- ingest mapped it to (the most frequent, where rows of one string differ), else the first
-- model whose pattern it matches; the model in words and its vendor from that table.
WITH names AS (
    SELECT accelerator, accelerator_model, count(*) AS n
    FROM (
        SELECT accelerator, accelerator_model FROM store.runs
        UNION ALL SELECT accelerator, accelerator_model FROM store.systems
    )
    WHERE accelerator IS NOT NULL
    GROUP BY ALL
)
SELECT a.accelerator, m.words AS model, m.vendor, m.key AS accelerator_key
FROM names AS a
LEFT JOIN accelerator_models AS m
    ON m.key = a.accelerator_model
    OR (a.accelerator_model IS NULL AND regexp_matches(a.accelerator, m.match, 'i'))
QUALIFY row_number() OVER (
    PARTITION BY a.accelerator ORDER BY a.n DESC, m.rank NULLS LAST) = 1
ORDER BY a.accelerator
