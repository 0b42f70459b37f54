-- projection_check: the projection checked on each official submission, leave-one-out. Its
-- time to train is projected from its own timings (start-up, steady seconds per epoch,
-- evaluations per epoch and seconds per evaluation, medians over its runs) and the epochs to
-- target of the OTHER submissions of the same benchmark and target nearest to it in global
-- batch, then compared with its real score (or the mean of its converged runs where it has no
-- score).
WITH subs AS (
    SELECT
        benchmark, quality_target, round, system_id, count(*) AS runs,
        median(global_batch) AS global_batch, avg(epochs_to_target) AS epochs,
        median(startup_s) AS startup_s, median(epoch_s) AS epoch_s,
        median(evals_per_epoch) AS evals_per_epoch, median(eval_s) AS eval_s,
        avg(time_to_train_s) / 60 AS mean_minutes
    FROM samples_to_target
    WHERE global_batch > 0
    GROUP BY benchmark, quality_target, round, system_id
),
nearest AS (
    -- every other submission of the benchmark and target at the least distance in global batch
    SELECT s.round, s.system_id, s.benchmark, s.quality_target, o.round AS ref_round,
        o.system_id AS ref_system_id
    FROM subs AS s
    JOIN subs AS o
        ON o.benchmark = s.benchmark AND o.quality_target = s.quality_target
        AND NOT (o.round = s.round AND o.system_id = s.system_id)
    QUALIFY abs(ln(o.global_batch / s.global_batch)) = min(abs(ln(o.global_batch / s.global_batch)))
        OVER (PARTITION BY s.round, s.system_id, s.benchmark, s.quality_target)
),
reference AS (
    -- the epochs to target of the nearest submissions' runs, pooled
    SELECT n.round, n.system_id, n.benchmark, n.quality_target,
        avg(t.epochs_to_target) AS ref_epochs,
        string_agg(DISTINCT n.ref_system_id, ' ' ORDER BY n.ref_system_id) AS ref_system_ids
    FROM nearest AS n
    JOIN samples_to_target AS t
        ON t.round = n.ref_round AND t.system_id = n.ref_system_id AND t.benchmark = n.benchmark
    GROUP BY ALL
),
scored AS (
    SELECT round, system_id, benchmark, avg(score_minutes) AS score_minutes
    FROM scores
    WHERE source = 'official' AND score_minutes IS NOT NULL
    GROUP BY ALL
),
checked AS (
    SELECT
        s.*, r.ref_epochs, r.ref_system_ids, coalesce(c.score_minutes, s.mean_minutes) AS real_minutes,
        (s.startup_s + r.ref_epochs * (s.epoch_s + s.evals_per_epoch * s.eval_s)) / 60
            AS projected_minutes,
        -- the same with the submission's own epochs: the error of the timing alone
        (s.startup_s + s.epochs * (s.epoch_s + s.evals_per_epoch * s.eval_s)) / 60
            AS own_epochs_minutes
    FROM subs AS s
    JOIN reference AS r USING (round, system_id, benchmark, quality_target)
    LEFT JOIN scored AS c USING (round, system_id, benchmark)
)
SELECT
    benchmark, quality_target, round, system_id, runs, global_batch, epochs, ref_system_ids,
    ref_epochs, startup_s, epoch_s, evals_per_epoch, eval_s, real_minutes, projected_minutes,
    (projected_minutes / real_minutes - 1) * 100 AS error_pct,
    (own_epochs_minutes / real_minutes - 1) * 100 AS timing_error_pct,
    (ref_epochs / epochs - 1) * 100 AS epochs_error_pct
FROM checked
ORDER BY benchmark, quality_target, global_batch, round, system_id
