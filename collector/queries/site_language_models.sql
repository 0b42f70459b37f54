-- site_language_models: the local runs of the language models (compute throughput on synthetic
-- tokens, data loading not included) beside the official results of the same benchmark, as the
-- Full-size runs page and Home state them: each run's tokens per second per accelerator (the
-- median window, and the slowest and fastest), its MFU, the official reference of the same
-- accelerator model with the fraction of its throughput per accelerator, and the time
-- projected at that reference's accelerator count, and the boards' power and clock during the
-- timed windows (window_power). `home` marks the runs Home states: per benchmark and machine,
-- those on the most accelerators.
SELECT
    f.run_id, f.submitter, f.system, f.benchmark, f.accelerator_model,
    coalesce(w.model, f.accelerator_model) AS accelerator_words, f.accelerators, f.precision,
    f.evidence, f.global_batch, f.tokens_per_sample, f.tokens_per_s_per_accelerator,
    f.window_min_samples_per_s_per_accelerator * f.tokens_per_sample
        AS window_min_tokens_per_s_per_accelerator,
    f.window_max_samples_per_s_per_accelerator * f.tokens_per_sample
        AS window_max_tokens_per_s_per_accelerator,
    f.achieved_tflops_per_accelerator, f.mfu, f.official_round, f.official_system,
    f.official_accelerators, f.official_runs, f.official_tokens_per_s_per_accelerator,
    f.official_fraction, f.official_minutes, f.official_missing_reason,
    p.projected_accelerators, p.projected_minutes, p.projected_ci_low_minutes,
    p.projected_ci_high_minutes, pw.power_per_accelerator_w, pw.power_limit_w,
    pw.sm_clock_median_min_mhz,
    f.accelerators = max(f.accelerators) OVER (PARTITION BY f.benchmark, f.submitter) AS home
FROM throughput_fractions AS f
JOIN store.runs AS r USING (run_id)
LEFT JOIN accelerator_words AS w ON w.accelerator = r.accelerator
LEFT JOIN projection AS p USING (run_id)
LEFT JOIN window_power AS pw USING (run_id)
WHERE f.tokens_per_sample IS NOT NULL
ORDER BY f.benchmark, f.submitter, f.accelerators DESC, f.precision, f.run_id
