-- compliance: the latest verdict of `collector check` on each checked log, with the run it
-- judged (runs.run_id; null for a log checked but never ingested), failures first.
SELECT
    c.verdict, c.first_failure, c.ruleset, r.source, r.round, r.submitter, r.system_id,
    r.benchmark, r.run, c.log_path, c.run_id
FROM store.compliance AS c
LEFT JOIN store.runs AS r USING (run_id)
ORDER BY CASE c.verdict WHEN 'fail' THEN 0 ELSE 1 END, r.round, c.log_path
