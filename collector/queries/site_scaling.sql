-- site_scaling: the scaling curves of the benchmark pages. A series is one source's configurations
-- of one benchmark, round, submitter, accelerator, precision and interconnect (a line never
-- joins fp32 to bf16, or NVLink to peer-to-peer off) at more than one accelerator count, each
-- point a scored configuration (site_scores) with the range of its converged runs. Proxy-scale
-- runs are left out.
-- A series is named in words: the submitter, the accelerator by its model key in the
-- accelerator table (which tells an A100 of 40 GB from one of 80 GB), the precision, the link
-- and the round ('Dell, A100-SXM-80GB, bf16, NVLink (v3.0)'); the name as submitted where the
-- table has no key.
WITH scored AS (
    SELECT
        s.*,
        concat_ws(', ', s.submitter, coalesce(w.accelerator_key, s.accelerator),
            nullif(s.precision, ''), coalesce(l.words, nullif(s.interconnect, '')))
            || ' (' || s.round || ')' AS series
    FROM site_scores AS s
    LEFT JOIN accelerator_words AS w ON w.accelerator = s.accelerator
    LEFT JOIN link_names AS l ON l.interconnect = s.interconnect
    WHERE s.evidence <> 'proxy' AND s.score_minutes IS NOT NULL AND s.accelerators > 0
)
SELECT
    benchmark, kind, series, accelerators, score_minutes, fastest_minutes, slowest_minutes
FROM scored
QUALIFY count(DISTINCT accelerators) OVER (PARTITION BY benchmark, kind, series) > 1
ORDER BY benchmark, evidence_rank(evidence), series, accelerators,
    score_minutes
