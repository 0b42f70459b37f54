-- log_gaps: the official result logs the published repositories hold and the stored copies
-- lack (runs/official/missing.csv, registered as missing_logs), one row per configuration
-- folder (<tree>/[v0.5.0/]<submitter>/[<submission>/]results/<system>/<benchmark>): how many
-- of its logs are missing and how many are stored. A folder none of whose logs is stored is
-- a whole configuration absent from the store (configuration_absent); its nodes and
-- accelerators come from its system description where the store holds one.
WITH missing AS (
    SELECT
        'v' || regexp_extract(tree, 'training_results_v(.*)$', 1) AS round,
        string_split(tree || '/' || path, '/')[:-2] AS parts
    FROM missing_logs
),
folders AS (
    SELECT
        round, array_to_string(parts, '/') AS folder, parts[-1] AS benchmark,
        parts[-2] AS system,
        CASE WHEN parts[2] LIKE 'v0.5%' THEN parts[3] ELSE parts[2] END AS submitter,
        round || '/' || submitter || '/' || system AS system_id, count(*) AS logs_missing
    FROM missing
    GROUP BY ALL
),
stored AS (
    SELECT
        array_to_string(string_split(log_path, '/')[:-2], '/') AS folder,
        count(*) AS logs_stored
    FROM store.runs
    WHERE source = 'official'
    GROUP BY ALL
)
SELECT
    f.round, f.benchmark, f.submitter, f.system,
    f.system_id, f.folder, f.logs_missing,
    coalesce(s.logs_stored, 0) AS logs_stored, s.folder IS NULL AS configuration_absent,
    d.nodes, d.accelerators
FROM folders AS f
LEFT JOIN stored AS s USING (folder)
LEFT JOIN (SELECT DISTINCT system_id, nodes, accelerators FROM store.systems) AS d
    ON d.system_id = f.system_id
ORDER BY f.round, f.benchmark, f.folder
