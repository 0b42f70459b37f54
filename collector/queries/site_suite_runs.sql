-- site_suite_runs: the local runs of the rest of MLPerf v5.1 (RetinaNet, R-GAT, DLRM-DCNv2,
-- Flux.1: compute throughput on synthetic data, data loading not included) beside the official
-- results of the same benchmark, as the Full-size runs page states them: each run's samples per
-- second per accelerator (the median window, and the slowest and fastest), its achieved TFLOP/s,
-- and the official reference of the same accelerator model with the fraction of its throughput
-- per accelerator (throughput_fractions).
SELECT
    f.run_id, f.submitter, f.system, f.benchmark, f.accelerator_model,
    coalesce(w.model, f.accelerator_model) AS accelerator_words, f.accelerators, f.precision,
    f.evidence, f.global_batch, f.samples_per_s_per_accelerator,
    f.window_min_samples_per_s_per_accelerator, f.window_max_samples_per_s_per_accelerator,
    f.achieved_tflops_per_accelerator, f.official_round, f.official_system,
    f.official_accelerators, f.official_runs, f.official_samples_per_s_per_accelerator,
    f.official_logged_samples_per_s_per_accelerator, f.official_fraction, f.official_minutes,
    f.official_missing_reason
FROM throughput_fractions AS f
JOIN store.runs AS r USING (run_id)
LEFT JOIN accelerator_words AS w ON w.accelerator = r.accelerator
WHERE f.benchmark IN ('retinanet', 'rgat', 'dlrm_dcnv2', 'flux1')
ORDER BY f.benchmark, f.submitter, f.accelerators DESC, f.precision, f.run_id
