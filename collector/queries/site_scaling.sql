-- site_scaling: the scaling curves of the benchmark pages. A series is one source's configurations
-- of one benchmark, round, submitter, accelerator, precision and interconnect (a line never
-- joins fp32 to bf16, or NVLink to peer-to-peer off) at more than one accelerator count, each
-- point a scored configuration (site_scores) with the range of its converged runs. Proxy-scale
-- runs are left out.
WITH scored AS (
    SELECT
        *,
        concat_ws(' ', submitter, accelerator, '(' || round || ')', nullif(precision, ''),
            nullif(interconnect, '')) AS series
    FROM site_scores
    WHERE evidence <> 'proxy' AND score_minutes IS NOT NULL AND accelerators > 0
)
SELECT
    benchmark, kind, series, accelerators, score_minutes, fastest_minutes, slowest_minutes
FROM scored
QUALIFY count(DISTINCT accelerators) OVER (PARTITION BY benchmark, kind, series) > 1
ORDER BY benchmark, evidence_rank(evidence), series, accelerators,
    score_minutes
