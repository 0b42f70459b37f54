"""The benchmark runner behind ``collector run``: suites, workloads, logging and system capture.

Typical use::

    from collector.run import Options, run_suite
    result = run_suite(Options(benchmarks=["resnet"], repeats=3))

Importing this package needs torch (the optional ``run`` dependencies).
"""

from __future__ import annotations

from collector.run.compliance import check_log
from collector.run.plan import Machine, Options, describe, plan_runs, run_finished
from collector.run.runner import RunResult, SuiteResult, run_suite
from collector.run.spec import RunSpec
from collector.run.suite import Suite, load_suite

__all__ = [
    "Machine",
    "Options",
    "RunResult",
    "RunSpec",
    "Suite",
    "SuiteResult",
    "check_log",
    "describe",
    "load_suite",
    "plan_runs",
    "run_finished",
    "run_suite",
]
