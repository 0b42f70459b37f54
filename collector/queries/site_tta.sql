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
),
-- each system in words as its legend names it: its hardware and submitter ('512 x NVIDIA
-- GB300, 128 nodes, NVLink (NVSwitch) (NVIDIA)'), and the name as submitted where two systems
-- of one chart would read alike or the words are missing
shown AS (
    SELECT n.*, h.hardware || ' (' || split_part(n.system_id, '/', 2) || ')' AS words
    FROM newest AS n
    LEFT JOIN site_systems AS h ON h.system_id = n.system_id
    WHERE n.newest
),
alike AS (
    SELECT benchmark, kind, words
    FROM (SELECT DISTINCT benchmark, kind, words, system_id FROM shown)
    GROUP BY ALL HAVING count(*) > 1
)
SELECT benchmark, kind, round, system_id,
    CASE WHEN s.words IS NULL THEN s.system
        WHEN a.words IS NOT NULL THEN s.words || ' · ' || s.system ELSE s.words END AS system,
    run, run_id, minutes, quality
FROM shown AS s
LEFT JOIN alike AS a USING (benchmark, kind, words)
QUALIFY dense_rank() OVER (PARTITION BY benchmark, kind, system_id ORDER BY run) <= 5
ORDER BY benchmark, kind_rank, system_id, run, seq
