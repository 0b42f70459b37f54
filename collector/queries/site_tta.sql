-- site_tta: the time-to-accuracy curves of the benchmark pages: every logged evaluation (quality
-- against minutes since run start) of the first five runs (by index) of each system, in the
-- newest round of each benchmark and kind of evidence (every round's would make the pages
-- megabytes long). Proxy-scale runs are left out.
WITH points AS (
    SELECT
        benchmark,
        evidence_kind(evidence_of(source, scale), scale) AS kind,
        evidence_rank(evidence_of(source, scale)) AS kind_rank,
        round, system_id, system, run, run_id, seq, minutes, quality
    FROM time_to_accuracy
    WHERE quality IS NOT NULL AND evidence_of(source, scale) <> 'proxy'
),
newest AS (
    SELECT
        *,
        round = max_by(round, round_key(round)) OVER (PARTITION BY benchmark, kind) AS newest
    FROM points
)
SELECT benchmark, kind, round, system_id, system, run, run_id, minutes, quality
FROM newest
WHERE newest
QUALIFY dense_rank() OVER (PARTITION BY benchmark, kind, system_id ORDER BY run) <= 5
ORDER BY benchmark, kind_rank, system_id, run, seq
