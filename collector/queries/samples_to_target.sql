-- samples_to_target: every converged official run of a projectable benchmark, with the epochs
-- and samples it trained to reach its quality target and the timings its log gives: start-up
-- (initialisation and warm-up: the time before the first evaluation that steady training does
-- not account for), steady seconds per epoch (median over the blocks of training
-- between two evaluations, the first block left out as warm-up) and seconds per evaluation.
WITH official AS (
    SELECT
        r.run_id, r.round, r.submitter, r.system_id, r.system, r.benchmark, r.accelerators,
        r.log_format, r.log_path, r.run_start_unix_s, r.time_to_train_s,
        coalesce(r.quality_target, t.quality_target) AS quality_target, d.samples_per_epoch
    FROM store.runs AS r
    JOIN dataset_sizes AS d ON d.benchmark = r.benchmark AND d.projectable
    LEFT JOIN quality_targets AS t ON t.round = r.round AND t.benchmark = r.benchmark
    WHERE r.source = 'official' AND r.status = 'success'
),
marks AS (
    -- the few events that time a run, numbered per key in log order
    SELECT
        e.run_id, e.key, e.time_unix_s, e.value_text,
        row_number() OVER (PARTITION BY e.run_id, e.key ORDER BY e.seq) AS k
    FROM store.events AS e
    WHERE e.key IN ('train_epoch', 'epoch_start', 'eval_start', 'eval_stop',
                    'input_batch_size', 'global_batch_size')
        AND e.run_id IN (SELECT run_id FROM official)
),
paired AS (
    -- each evaluation with its start and stop (the k-th eval_start and eval_stop of the log)
    SELECT v.run_id, v.seq, v.epoch, s.time_unix_s AS start_s, p.time_unix_s AS stop_s
    FROM store.evals AS v
    JOIN marks AS s ON s.run_id = v.run_id AND s.key = 'eval_start' AND s.k = v.seq + 1
    JOIN marks AS p ON p.run_id = v.run_id AND p.key = 'eval_stop' AND p.k = v.seq + 1
    WHERE v.run_id IN (SELECT run_id FROM official)
),
beside AS (
    -- runs that start an epoch while evaluating: their evaluations run beside training
    SELECT DISTINCT e.run_id
    FROM paired AS e
    JOIN marks AS m
        ON m.run_id = e.run_id AND m.key IN ('train_epoch', 'epoch_start')
        AND m.time_unix_s > e.start_s AND m.time_unix_s < e.stop_s
),
timed AS (
    -- blocks of training between two evaluations: from the end of one (its start where
    -- evaluations run beside training) to the start of the next
    SELECT
        e.*, b.run_id IS NOT NULL AS overlapped,
        e.epoch - lag(e.epoch) OVER w AS block_epochs,
        e.start_s - CASE WHEN b.run_id IS NULL THEN lag(e.stop_s) OVER w
                         ELSE lag(e.start_s) OVER w END AS block_s
    FROM paired AS e
    LEFT JOIN beside AS b USING (run_id)
    WINDOW w AS (PARTITION BY e.run_id ORDER BY e.seq)
),
per_run AS (
    -- an evaluation beside training costs no training time
    SELECT
        run_id, count(*) AS evals,
        median(CASE WHEN overlapped THEN 0 ELSE stop_s - start_s END) AS eval_s,
        arg_max(start_s, seq) AS last_start_s, arg_max(epoch, seq) AS last_epoch,
        arg_min(start_s, seq) AS first_start_s, arg_min(epoch, seq) AS first_epoch,
        median(block_s / block_epochs) FILTER (WHERE block_epochs > 0) AS epoch_s
    FROM timed
    GROUP BY run_id
),
epochs AS (
    -- epoch starts logged before the evaluation that reached the target (some logs write
    -- them all at the end)
    SELECT
        m.run_id, count(*) FILTER (WHERE m.time_unix_s < p.first_start_s) AS started_first,
        count(*) FILTER (WHERE m.time_unix_s < p.last_start_s) AS started
    FROM marks AS m
    JOIN per_run AS p USING (run_id)
    WHERE m.key IN ('train_epoch', 'epoch_start')
    GROUP BY m.run_id
),
batches AS (
    -- the global batch: logged as such, or one accelerator's batch times the accelerators
    SELECT
        m.run_id,
        any_value(CASE
            WHEN m.key = 'global_batch_size' THEN try_cast(m.value_text AS DOUBLE)
            WHEN a.benchmark IS NOT NULL THEN try_cast(m.value_text AS DOUBLE) * o.accelerators
            ELSE try_cast(m.value_text AS DOUBLE)
        END ORDER BY m.key = 'global_batch_size' DESC, m.k) AS global_batch
    FROM marks AS m
    JOIN official AS o USING (run_id)
    LEFT JOIN per_accelerator_batch AS a
        ON a.round = o.round AND a.submitter = lower(o.submitter) AND a.benchmark = o.benchmark
    WHERE m.key IN ('input_batch_size', 'global_batch_size')
    GROUP BY m.run_id
),
counted AS (
    SELECT
        o.*, b.global_batch, p.evals, p.eval_s, p.epoch_s,
        -- epochs trained before the evaluation that reached the target: the epoch starts
        -- logged before it; v0.5 logs number epochs from 0 and some mark few starts, so
        -- there the evaluation's epoch + 1 where that is more
        CASE WHEN o.log_format = 'mlperf-v0.5'
            THEN greatest(coalesce(e.started, 0), p.last_epoch + 1)
            ELSE coalesce(e.started, p.last_epoch) END AS epochs_to_target,
        -- start-up: run_start to the first evaluation less the epochs before it at the steady
        -- pace (initialisation and warm-up); the epochs before it counted as those to target
        p.first_start_s - o.run_start_unix_s - p.epoch_s * CASE
            WHEN o.log_format = 'mlperf-v0.5'
                THEN greatest(coalesce(e.started_first, 0), p.first_epoch + 1)
            ELSE coalesce(nullif(e.started_first, 0), p.first_epoch) END AS startup_s
    FROM official AS o
    JOIN per_run AS p USING (run_id)
    LEFT JOIN epochs AS e USING (run_id)
    LEFT JOIN batches AS b USING (run_id)
)
SELECT
    run_id, round, submitter, system_id, system, benchmark, quality_target, accelerators,
    global_batch, epochs_to_target, samples_per_epoch,
    epochs_to_target * samples_per_epoch AS samples_to_target,
    greatest(startup_s, 0) AS startup_s,
    epoch_s, samples_per_epoch / epoch_s AS throughput_samples_per_s, evals,
    evals / epochs_to_target AS evals_per_epoch, eval_s, time_to_train_s, log_path
FROM counted
WHERE epochs_to_target > 0 AND epoch_s > 0
ORDER BY benchmark, quality_target, global_batch, system_id, log_path
