-- runs: every training run, with its time to train in minutes and, where a published repository
-- holds its log (an official result tree of store.sources), the address of that file in the
-- repository at the commit read, each part of its path encoded ("NART+" as "NART%2B").
SELECT
    r.source, r.round, r.submitter, r.division, r.system_id, r.system, r.benchmark, r.run,
    r.status, r.time_to_train_s / 60 AS minutes,
    r.accelerator, r.accelerators, r.nodes, r.precision, r.interconnect, r.scale,
    r.quality_target, r.quality_best, r.epochs, r.throughput_samples_per_s,
    r.run_id, r.log_path, r.log_sha256,
    t.repository || '/blob/' || t.commit || '/' || array_to_string(list_transform(
        string_split(substr(r.log_path, length(t.tree) + 2), '/'), lambda p: url_encode(p)), '/')
        AS log_url
FROM store.runs AS r
LEFT JOIN store.sources AS t ON starts_with(r.log_path, t.tree || '/')
ORDER BY r.source, r.round, r.submitter, r.system, r.benchmark, r.precision, r.interconnect, r.run
