"""Checking run logs with the official MLPerf compliance checker.

The logs are checked against the ``training_0.7.0`` ruleset, the newest one whose benchmark list
still holds the v0.5 names (resnet, ssd, maskrcnn, gnmt, transformer, minigo). Its common rules
(init/run/epoch/eval structure, required keys, ``run_stop`` status) apply as they are.

Three of its value checks conflict with the local log contract by design: the division is
``local`` (0.7.0 allows closed/open), the status is ``proxy-<scale>`` or ``full`` (0.7.0 allows
cloud/onprem/preview/research), and ``ncf`` left the suite after v0.6. The checker resolves this
the way it resolves open vs closed: the division's value selects a follow-up rule file
(``training_0.7.0/<division>_common.yaml``), whose rules override earlier rules for the same
keys. For ``local`` that file is ours, ``local_common.yaml`` beside this module: it re-checks the
three keys against the local contract and adds the collector keys (``eval_target``,
``collector_run``, ``tracked_stats``) and "a successful run reached its target".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from mlperf_logging.compliance_checker import mlp_compliance, mlp_parser

RULESET = "0.7.0"
LOCAL_RULES = Path(__file__).with_name("local_common.yaml")


@dataclass
class ComplianceReport:
    """The checker's verdict on one log."""

    path: Path
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the checker reported no failure."""
        return not self.failures


def check_log(path: Path) -> ComplianceReport:
    """Run the training 0.7.0 compliance rules (plus the local division's rules) on ``path``."""
    report = ComplianceReport(path)
    checker = mlp_compliance.make_checker("training", RULESET, quiet=False, werror=False)
    loglines, errors = mlp_parser.parse_file(str(path), ruleset=RULESET)
    report.failures += [f"parse error: {err} in {line!r}" for line, err in errors]
    if not loglines:
        report.failures.append("no log lines")
        return report
    queue = mlp_compliance.enqueued_configs
    queue.clear()
    queue.append(f"training_{RULESET}/common.yaml")
    previous = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # the checker logs progress at INFO
    try:
        while queue:
            cfg = queue.pop(0)
            if cfg.startswith(f"training_{RULESET}/local_"):
                cfg = str(LOCAL_RULES)
            checker.configured_checks(loglines, str(Path(mlp_compliance.__file__).parent / cfg))
    finally:
        logging.getLogger().setLevel(previous)
        queue.clear()
    report.failures += list(checker.overwritable.values())
    report.failures += checker.not_overwritable
    report.warnings += list(checker.warnings.values())
    return report
