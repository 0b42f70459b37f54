-- projection_check: the projection checked on each official submission out of sample: none of
-- its own timings or epochs is used. Its time to train is projected from the timings (start-up,
-- steady seconds per epoch, evaluations per epoch and seconds per evaluation, medians over the
-- runs) of the OTHER submitters' submissions of the same round, benchmark, target, accelerator
-- model and count (the donors, pooled by median), and the epochs to target of the other
-- submissions of the same benchmark and target nearest to it in global batch; then compared
-- with its official score. A submission without a donor is not checked.
WITH subs AS (
    SELECT
        t.benchmark, t.quality_target, t.round, t.system_id, any_value(t.submitter) AS submitter,
        any_value(r.accelerator_model) AS accelerator_model,
        any_value(t.accelerators) AS accelerators, count(*) AS runs,
        median(t.global_batch) AS global_batch, avg(t.epochs_to_target) AS epochs,
        median(t.startup_s) AS startup_s, median(t.epoch_s) AS epoch_s,
        median(t.evals_per_epoch) AS evals_per_epoch, median(t.eval_s) AS eval_s
    FROM samples_to_target AS t
    JOIN store.runs AS r USING (run_id)
    WHERE t.global_batch > 0
    GROUP BY t.benchmark, t.quality_target, t.round, t.system_id
),
donors AS (
    -- the other submitters' submissions on the same accelerator model and count, same round
    SELECT
        s.round, s.system_id, s.benchmark, s.quality_target,
        list(d.system_id ORDER BY d.system_id) AS donor_system_ids,
        median(d.startup_s) AS startup_s, median(d.epoch_s) AS epoch_s,
        median(d.evals_per_epoch) AS evals_per_epoch, median(d.eval_s) AS eval_s
    FROM subs AS s
    JOIN subs AS d
        ON d.benchmark = s.benchmark AND d.quality_target = s.quality_target
        AND d.round = s.round AND d.accelerator_model = s.accelerator_model
        AND d.accelerators = s.accelerators AND d.submitter <> s.submitter
    GROUP BY ALL
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
        s.benchmark, s.quality_target, s.round, s.system_id, s.runs, s.global_batch, s.epochs,
        r.ref_system_ids, r.ref_epochs, d.donor_system_ids, d.startup_s, d.epoch_s,
        d.evals_per_epoch, d.eval_s, c.score_minutes AS real_minutes,
        (d.startup_s + r.ref_epochs * (d.epoch_s + d.evals_per_epoch * d.eval_s)) / 60
            AS projected_minutes,
        -- the same with the submission's own epochs: the error of the donors' timing alone
        (d.startup_s + s.epochs * (d.epoch_s + d.evals_per_epoch * d.eval_s)) / 60
            AS own_epochs_minutes
    FROM subs AS s
    JOIN reference AS r USING (round, system_id, benchmark, quality_target)
    JOIN donors AS d USING (round, system_id, benchmark, quality_target)
    JOIN scored AS c USING (round, system_id, benchmark)
)
SELECT
    benchmark, quality_target, round, system_id, runs, global_batch, epochs, ref_system_ids,
    ref_epochs, donor_system_ids, startup_s, epoch_s, evals_per_epoch, eval_s, real_minutes,
    projected_minutes,
    (projected_minutes / real_minutes - 1) * 100 AS error_pct,
    (own_epochs_minutes / real_minutes - 1) * 100 AS timing_error_pct,
    (ref_epochs / epochs - 1) * 100 AS epochs_error_pct
FROM checked
ORDER BY benchmark, quality_target, global_batch, round, system_id
