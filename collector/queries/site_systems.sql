-- site_systems: every system with a description or with runs, named in words
-- (hardware_words.yml), with the proxy scales and interconnect modes its runs used (a
-- description states neither: a local NVLink server may run with peer-to-peer off), and where
-- its description is a file of a published repository, that file's address.
WITH ran AS (
    SELECT
        system_id, any_value(source) AS source, any_value(round) AS round,
        any_value(submitter) AS submitter, any_value(system) AS system,
        any_value(division) AS division, any_value(accelerator) AS accelerator,
        max(accelerators) AS accelerators, max(nodes) AS nodes,
        string_agg(DISTINCT scale, ', ' ORDER BY scale) AS scale,
        string_agg(DISTINCT interconnect, ', ' ORDER BY interconnect) AS run_interconnect,
        count(*) AS runs
    FROM runs
    GROUP BY system_id
),
joined AS (
    SELECT
        coalesce(s.system_id, r.system_id) AS system_id,
        coalesce(s.source, r.source) AS source, coalesce(s.round, r.round) AS round,
        coalesce(s.submitter, r.submitter) AS submitter, coalesce(s.system, r.system) AS system,
        coalesce(s.division, r.division) AS division,
        coalesce(s.accelerator, r.accelerator) AS accelerator,
        coalesce(s.accelerators, r.accelerators) AS accelerators,
        coalesce(s.nodes, r.nodes) AS nodes, s.interconnect, r.run_interconnect, r.scale,
        coalesce(r.runs, 0) AS runs, s.system_id IS NOT NULL AS described, s.description_path
    FROM systems AS s
    FULL JOIN ran AS r ON r.system_id = s.system_id
),
named AS (
    SELECT j.*, n.model, n.vendor
    FROM joined AS j
    LEFT JOIN accelerator_words AS n ON n.accelerator = j.accelerator
)
SELECT
    n.system_id, n.source, n.round, n.submitter, n.system, n.division, n.accelerator,
    coalesce(n.model, n.accelerator) AS accelerator_model, n.vendor, n.accelerators, n.nodes,
    n.interconnect, n.run_interconnect, n.scale, n.runs, n.described,
    evidence_kind(evidence_of(n.source, n.scale), n.scale) AS kind,
    CASE WHEN n.accelerators = 0 THEN 'CPU only'
         WHEN n.accelerators IS NULL THEN n.system || ' (hardware not described)'
         ELSE n.accelerators || ' x ' || coalesce(n.model, n.accelerator, 'accelerator')
    END
    || coalesce(', ' || n.nodes || CASE WHEN n.nodes = 1 THEN ' node' ELSE ' nodes' END, '')
    || coalesce(', ' || l.words, '') AS hardware,
    -- the description in its published repository at the commit read (as site_logs' logs)
    t.repository || '/blob/' || t.commit || '/' || array_to_string(list_transform(
        string_split(substr(n.description_path, length(t.tree) + 2), '/'),
        lambda p: url_encode(p)), '/') AS description_url
FROM named AS n
LEFT JOIN link_names AS l ON l.interconnect = n.interconnect
LEFT JOIN store.sources AS t ON starts_with(n.description_path, t.tree || '/')
ORDER BY evidence_rank(evidence_of(n.source, n.scale)), kind, n.round, n.submitter, n.system, n.system_id
