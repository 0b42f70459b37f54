-- manifest: every stored log and system description with its origin and sha256.
WITH files AS (
    SELECT 'log' AS kind, source, round, log_path AS path, log_sha256 AS sha256
    FROM store.runs
    UNION ALL
    SELECT DISTINCT 'system description', source, round, description_path, description_sha256
    FROM store.systems
    WHERE description_path IS NOT NULL
)
SELECT
    files.kind, files.source, files.round, files.path, files.sha256,
    sources.repository, sources.commit
FROM files
LEFT JOIN sources ON split_part(files.path, '/', 1) = sources.tree
ORDER BY files.path
