"""The benchmark runner behind ``collector run``: suites, workloads, logging and system capture.

Typical use::

    from collector.run.plan import Options
    from collector.run.runner import run_suite

    result = run_suite(Options(benchmarks=["resnet"], repeats=3))

Planning (``plan``, ``spec``, ``suite``, ``launch``) needs no torch; the modules that train
(``runner``, ``engine``, ``node``, ``workloads``, ``data``) import it.
"""
