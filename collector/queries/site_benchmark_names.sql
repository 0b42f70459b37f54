-- site_benchmark_names: every benchmark name with the round (or published study) that used
-- it, in words (the benchmark_words macro: the model of its definition in that round, a
-- published study's workload by the names definitions.yml gives them), for the pages that
-- list rows of several rounds and studies.
SELECT DISTINCT benchmark, round, benchmark_words(benchmark, round) AS words
FROM (
    SELECT benchmark, round FROM runs
    UNION ALL
    SELECT benchmark, study FROM store.published
)
WHERE coalesce(benchmark, '') <> ''
ORDER BY benchmark, round
