-- throughput_fractions: each local full-size run (scale throughput: compute throughput on
-- synthetic data, data loading not included) set against (a) the official per-accelerator
-- throughput of the same accelerator model on the same workload and (b) the dense matmul
-- ceiling measured on the run's machine (ceilings).
-- (a) An official run's rate is the samples it trained over its time to train: epochs
-- logged (runs.epochs) x the data set's samples per epoch (dataset_sizes) / (run_stop -
-- run_start) / accelerators. It counts evaluation and data loading, so it is the low side of
-- the rate the submission trained at; the rate it logged itself stands beside it. The
-- reference is the official configuration of the model at the fewest accelerators (the
-- nearest to one), the one with the highest mean rate among those. A benchmark's name means
-- the v0.5 workload only in the rounds `workloads` allows.
-- The language models (token_benchmarks) count their official samples from the logs instead:
-- the samples at run_stop (language_model_runs) over the time to train, in every round that
-- ran the benchmark; their rates are also given in tokens (x tokens per sample).
-- (b) Achieved TFLOP/s = the FLOPs of one step per accelerator (the collector_run event's
-- throughput block: torch's FLOP counter, or the model FLOPs a language model counts itself)
-- x steps per second (samples/s / global batch); MFU = that over the accelerator's dense bf16
-- peak (peak_tflops), where known. The ceiling fraction pairs a run only with a ceiling that
-- bounds its work: not for convolutional workloads in fp32 (datasets.yml), whose cuDNN kernels
-- the fp32 matmul ceiling does not bound.
WITH workloads(benchmark, last_round, differs) AS (
    -- the newest round whose official benchmark of the name is the v0.5 workload
    VALUES
        ('resnet', NULL, NULL),
        ('ssd', [1, 1], 'from v2.0 the official ssd is RetinaNet on OpenImages'),
        ('maskrcnn', NULL, NULL),
        ('gnmt', NULL, NULL),
        ('transformer', NULL, NULL),
        ('ncf', NULL, NULL),
        ('minigo', NULL, NULL),
        ('retinanet', NULL, NULL),
        ('rgat', NULL, NULL),
        ('dlrm_dcnv2', NULL, NULL)
),
local_runs AS (
    SELECT
        r.run_id, r.submitter, r.system_id, r.system, r.benchmark, r.accelerator_model,
        r.accelerators, r.precision, r.interconnect, r.run_start_unix_s,
        r.throughput_samples_per_s, r.log_path
    FROM store.runs AS r
    WHERE r.source = 'local' AND r.scale = 'throughput' AND r.throughput_samples_per_s > 0
),
measured AS (
    SELECT
        run_id,
        any_value(try_cast(trim(value_text, '"') AS DOUBLE))
            FILTER (WHERE key = 'global_batch_size') AS global_batch,
        any_value(try_cast(json_extract(value_text,
            '$.throughput.step_flops_per_accelerator') AS DOUBLE))
            FILTER (WHERE key = 'collector_run') AS step_flops,
        list(try_cast(json_extract(value_text, '$.throughput') AS DOUBLE) ORDER BY seq)
            FILTER (WHERE key = 'tracked_stats') AS window_samples_per_s
    FROM store.events
    WHERE key IN ('global_batch_size', 'collector_run', 'tracked_stats')
        AND run_id IN (SELECT run_id FROM local_runs)
    GROUP BY run_id
),
official_runs AS (
    SELECT
        r.round, r.system_id, r.system, r.benchmark, r.accelerator_model, r.accelerators,
        r.nodes, r.log_path,
        r.epochs * d.samples_per_epoch / r.time_to_train_s / r.accelerators AS rate,
        r.throughput_samples_per_s / r.accelerators AS logged_rate, r.time_to_train_s
    FROM store.runs AS r
    JOIN dataset_sizes AS d USING (benchmark)
    JOIN workloads AS w USING (benchmark)
    WHERE r.source = 'official' AND r.status = 'success' AND r.accelerators > 0
        AND r.time_to_train_s > 0 AND r.epochs > 0 AND d.samples_per_epoch > 0
        AND r.accelerator_model IN (SELECT accelerator_model FROM local_runs)
        AND (w.last_round IS NULL OR round_key(r.round) <= w.last_round)
    UNION ALL
    SELECT
        r.round, r.system_id, r.system, r.benchmark, r.accelerator_model, r.accelerators,
        r.nodes, r.log_path, l.samples_to_target / r.time_to_train_s / r.accelerators AS rate,
        r.throughput_samples_per_s / r.accelerators AS logged_rate, r.time_to_train_s
    FROM store.runs AS r
    JOIN language_model_runs AS l USING (log_path, log_sha256)
    WHERE r.source = 'official' AND r.status = 'success' AND r.accelerators > 0
        AND r.time_to_train_s > 0 AND l.samples_to_target > 0
        AND r.accelerator_model IN (SELECT accelerator_model FROM local_runs)
),
official AS (
    -- per configuration; the reference: fewest accelerators, then the highest mean rate
    SELECT
        benchmark, accelerator_model, round, system_id, system, accelerators,
        count(*) AS runs, avg(rate) AS rate, avg(logged_rate) AS logged_rate,
        avg(time_to_train_s) / 60 AS minutes, max(nodes) AS nodes,
        min(log_path) AS log_path,
        count(*) OVER (PARTITION BY benchmark, accelerator_model, accelerators)
            AS configurations
    FROM official_runs
    GROUP BY benchmark, accelerator_model, round, system_id, system, accelerators
    QUALIFY row_number() OVER (
        PARTITION BY benchmark, accelerator_model
        ORDER BY accelerators, avg(rate) DESC, system_id, round) = 1
)
SELECT
    l.run_id, l.submitter, l.system_id, l.system, l.benchmark, l.accelerator_model,
    l.accelerators, l.precision, l.interconnect, l.run_start_unix_s,
    CASE WHEN t.benchmark IS NULL
        THEN 'compute throughput on synthetic data (data loading not included)'
        ELSE 'compute throughput on synthetic tokens (data loading not included)'
    END AS evidence,
    len(m.window_samples_per_s) AS windows, m.window_samples_per_s,
    l.throughput_samples_per_s / l.accelerators AS samples_per_s_per_accelerator,
    list_min(m.window_samples_per_s) / l.accelerators AS window_min_samples_per_s_per_accelerator,
    list_max(m.window_samples_per_s) / l.accelerators AS window_max_samples_per_s_per_accelerator,
    m.global_batch,
    m.step_flops * l.throughput_samples_per_s / m.global_batch / 1e12
        AS achieved_tflops_per_accelerator,
    c.matmul_tflops AS matmul_ceiling_tflops,
    CASE WHEN cv.benchmark IS NULL OR l.precision <> 'fp32'
        THEN achieved_tflops_per_accelerator / c.matmul_tflops END AS ceiling_fraction,
    CASE
        WHEN cv.benchmark IS NOT NULL AND l.precision = 'fp32'
            THEN 'fp32 convolutions run on cuDNN algorithms that the fp32 matmul ceiling does '
                || 'not bound'
        WHEN c.matmul_tflops IS NULL THEN 'no matmul ceiling measured on this system'
    END AS ceiling_missing_reason,
    t.tokens_per_sample,
    l.throughput_samples_per_s / l.accelerators * t.tokens_per_sample
        AS tokens_per_s_per_accelerator,
    p.bf16_dense_tflops AS peak_bf16_tflops,
    achieved_tflops_per_accelerator / p.bf16_dense_tflops AS mfu,
    o.round AS official_round, o.system_id AS official_system_id,
    o.system AS official_system, o.accelerators AS official_accelerators,
    o.nodes AS official_nodes,
    o.runs AS official_runs, o.configurations AS official_configurations,
    o.rate AS official_samples_per_s_per_accelerator,
    o.logged_rate AS official_logged_samples_per_s_per_accelerator,
    o.rate * t.tokens_per_sample AS official_tokens_per_s_per_accelerator,
    sc.score_minutes AS official_minutes,
    o.log_path AS official_log_path,
    l.throughput_samples_per_s / l.accelerators / o.rate AS official_fraction,
    CASE
        WHEN o.rate IS NOT NULL THEN NULL
        WHEN d.benchmark IS NOT NULL AND d.samples_per_epoch IS NULL THEN
            'trains on self-play games: no data set, so no official samples per second'
        ELSE 'no official result of this workload on '
            || coalesce(l.accelerator_model, 'an accelerator of unknown model')
            || coalesce(' (' || w.differs || ')', '')
    END AS official_missing_reason,
    l.log_path
FROM local_runs AS l
LEFT JOIN measured AS m USING (run_id)
LEFT JOIN ceilings AS c ON c.system_id = l.system_id AND c.precision = l.precision
LEFT JOIN official AS o USING (benchmark, accelerator_model)
LEFT JOIN (
    -- the reference configuration's official score (olympic mean x RCP factor), not a mean
    SELECT system_id, benchmark, accelerators, min(score_minutes) AS score_minutes
    FROM scores
    WHERE source = 'official' AND score_minutes IS NOT NULL
    GROUP BY ALL
) AS sc
    ON sc.system_id = o.system_id AND sc.benchmark = o.benchmark
    AND sc.accelerators = o.accelerators
LEFT JOIN dataset_sizes AS d USING (benchmark)
LEFT JOIN workloads AS w USING (benchmark)
LEFT JOIN token_benchmarks AS t USING (benchmark)
LEFT JOIN convolutional_benchmarks AS cv USING (benchmark)
LEFT JOIN peak_tflops AS p ON p.accelerator_model = l.accelerator_model
ORDER BY l.benchmark, l.precision, l.accelerator_model, l.accelerators, l.run_id
