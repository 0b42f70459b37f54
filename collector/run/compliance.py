"""Checking run logs with the official MLPerf compliance checker.

The logs are checked against the ``training_0.7.0`` ruleset, the newest one whose benchmark list
still holds the v0.5 names (resnet, ssd, maskrcnn, gnmt, transformer, minigo). Its common rules
(init/run/epoch/eval structure, required keys, ``run_stop`` status) apply as they are.

Three of its value checks conflict with the local log contract by design: the division is
``local`` (0.7.0 allows closed/open), the status is ``proxy-<scale>`` or ``full`` (0.7.0 allows
cloud/onprem/preview/research), and ``ncf`` left the suite after v0.6. The checker resolves this
the way it resolves open vs closed: the division's value selects a follow-up rule file
(``training_0.7.0/<division>_common.yaml``), whose rules override earlier rules for the same
keys. For ``local`` that file is ours, ``collector/ingest/local_common.yaml``: it re-checks the
three keys against the local contract and adds the collector keys (``eval_target``,
``collector_run``, ``tracked_stats``) and "a successful run reached its target".
"""

from __future__ import annotations

from pathlib import Path

from collector.ingest.check import LOCAL_RULES, ComplianceReport, mlperf_check

RULESET = "0.7.0"

__all__ = ["LOCAL_RULES", "RULESET", "ComplianceReport", "check_log"]


def check_log(path: Path) -> ComplianceReport:
    """Run the training 0.7.0 compliance rules (plus the local division's rules) on ``path``."""
    return mlperf_check(path, RULESET)
