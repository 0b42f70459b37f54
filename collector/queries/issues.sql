-- issues: every problem met while ingesting, errors first.
SELECT severity, code, path, line, message, log_sha256
FROM store.ingest_issues
ORDER BY CASE severity WHEN 'error' THEN 0 ELSE 1 END, path, line, code
