-- accelerator_words: each accelerator string the runs and system descriptions give, with the
-- accelerator model and vendor in words of hardware_words.yml: the longest pattern it contains
-- (matched once here, so the site's tables join on the string itself).
SELECT a.accelerator, n.model, n.vendor
FROM (SELECT accelerator FROM runs UNION SELECT accelerator FROM systems) AS a
LEFT JOIN accelerator_names AS n ON contains(lower(a.accelerator), lower(n.pattern))
WHERE a.accelerator IS NOT NULL
QUALIFY row_number() OVER (
    PARTITION BY a.accelerator ORDER BY length(n.pattern) DESC NULLS LAST, n.model) = 1
ORDER BY a.accelerator
