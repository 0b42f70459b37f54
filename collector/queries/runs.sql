-- runs: every training run, with its time to train in minutes.
SELECT
    source, round, submitter, division, system_id, system, benchmark, run, status,
    time_to_train_s / 60 AS minutes,
    accelerator, accelerators, nodes, precision, interconnect, scale,
    quality_target, quality_best, epochs, throughput_samples_per_s,
    run_id, log_path, log_sha256
FROM store.runs
ORDER BY source, round, submitter, system, benchmark, precision, interconnect, run
