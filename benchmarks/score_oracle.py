"""Compare `collector query scores` with MLCommons' own result summarizer, round by round.

    python benchmarks/score_oracle.py ROUNDS_DIR STORE [--rounds v1.0,v1.1] [--jobs 2]
        [--logging-git PATH_TO_MLPERF_LOGGING_GIT] [--cache FILE.csv]

ROUNDS_DIR holds the official trees `training_results_vX.Y/` (each `<org>/results/<system>/
<benchmark>/result_*.txt`, `<org>/systems/<system>.json`, `scaling.json` where the review
committee set one). STORE is a collector store ingested from them.

The oracle of each round from v1.0 on is mlperf-logging's result summarizer at the release the
round was scored with (a tag of its git repository, `--logging-git`; without it the installed
mlperf-logging for every round, which rejects some logs valid in their round). Per benchmark
folder it runs the summarizer's own functions: each `result_*.txt` passes the round's compliance
checker and parses, or counts as dropped; too many dropped leaves no score; else the olympic
average (`_compute_olympic_average`) times the folder's `scaling.json` factor (from v2.0). The
summarizer reads `scaling.json` only; its RCP check, which rewrites that file, is not run.

v0.5 to v0.7 have no summarizer of their own (v0.7's is the 0.7.0 release: used too): those
configurations are recomputed independently from the raw logs (run_start, run_stop, the logged
status or target) under the round's rules as MLCommons published them.

Prints per round: configurations, scored, matched, mismatches with reasons, unscorable with
reasons. Matching is to 1e-6 relative (the summarizer's minutes against ours).
"""

from __future__ import annotations

import argparse
import ast
import copy
import csv
import glob
import hashlib
import importlib
import json
import math
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import yaml

# the mlperf-logging release each round was scored with, and the round's ruleset
RELEASES = {
    "v5.1": ("5.1.0-rc4", "5.1.0"),
    "v5.0": ("5.0.0-rc3", "5.0.0"),
    "v4.1": ("4.1.0-rc4", "4.1.0"),
    "v4.0": ("4.0.0-rc3-rcp-prunning", "4.0.0"),
    "v3.1": ("9b25d4a", "3.1.0"),  # rc3 + its checker fixes (AT_LEAST, step_num)
    "v3.0": ("3.0.0-rc2", "3.0.0"),
    "v2.1": ("2.1.0", "2.1.0"),
    "v2.0": ("2.0.0", "2.0.0"),
    "v1.1": ("1.1.0-rc4", "1.1.0"),
    "v1.0": ("1.0.0", "1.0.0"),
    "v0.7": ("0.7.0", "0.7.0"),
}
RELATIVE_TOLERANCE = 1e-6
RULES = Path(__file__).resolve().parents[1] / "collector" / "queries" / "rules"

_summarizer = None  # the summarizer module of this worker process


def _load_summarizer(root: str | None) -> None:
    """Import mlperf_logging's summarizer from `root` (a release's source) in this process,
    with the compliance configs (YAML) read once per file instead of once per log."""
    global _summarizer
    if root:
        sys.path.insert(0, root)
    module = importlib.import_module("mlperf_logging.result_summarizer.result_summarizer")
    checker = importlib.import_module("mlperf_logging.compliance_checker.mlp_compliance")
    checker.yaml = _CachedYaml(checker.yaml)
    parsers = importlib.import_module("mlperf_logging.compliance_checker.mlp_parser")
    if hasattr(module, "parse_file"):  # the summarizer parses each log again after the checker
        parsers.parse_file = module.parse_file = _last_parsed(parsers.parse_file)
    for name, parser in list(sys.modules.items()):
        if name.startswith("mlperf_logging.compliance_checker.mlp_parser.ruleset_"):
            parser.re = _FastRe(getattr(parser, "TOKEN", ":::MLLOG "))
    _summarizer = module


def _last_parsed(parse):
    """parse_file, answering a second call for the same file from the first's result."""
    last: list = [None, None]

    def parse_file(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if last[0] != key:
            last[:] = [key, parse(*args, **kwargs)]
        loglines, errors = last[1]
        return list(loglines), list(errors)

    return parse_file


class _FastRe:
    """re, but the parsers' `re.sub(".*" + TOKEN, TOKEN, line)` (cut everything before the
    last token of a line) done with rfind: the same result without the regular expression's
    quadratic retries over the rest of a long line, which take most of the checker's time."""

    def __init__(self, token: str):
        self._pattern = ".*" + token
        self._token = token

    def __getattr__(self, name):
        return getattr(re, name)

    def sub(self, pattern, repl, string, count=0, flags=0):
        if pattern == self._pattern and repl == self._token and not count and not flags:
            cut = string.rfind(self._token, 0, len(string.split("\n", 1)[0]))
            return string if cut < 0 else self._token + string[cut + len(self._token) :]
        return re.sub(pattern, repl, string, count=count, flags=flags)


class _CachedYaml:
    """yaml with `load` memoised by file name (the checker re-reads its configs per log)."""

    def __init__(self, yaml_module):
        self._yaml = yaml_module
        self._seen: dict[str, object] = {}

    def __getattr__(self, name):
        return getattr(self._yaml, name)

    def load(self, stream, Loader):  # noqa: N803 (yaml's own argument name)
        key = getattr(stream, "name", None)
        if key is None:
            return self._yaml.load(stream, Loader=Loader)
        if key not in self._seen:
            self._seen[key] = self._yaml.load(stream, Loader=Loader)
        return copy.deepcopy(self._seen[key])


def summarize_folder(task: tuple[str, str, str]) -> dict:
    """The summarizer's score of one benchmark folder (its own loop and functions)."""
    folder, ruleset, benchmark = task
    s = _summarizer
    scores, dropped, reasons = [], 0, Counter()
    files = sorted(glob.glob(f"{folder}/result_*.txt"))
    for path in files:
        try:
            if hasattr(s, "_read_result_file"):
                lines = s._read_result_file(path, "training", ruleset)
                scores.append(s._query_mlperf_strong_scaling_score(lines))
            else:  # 0.7.0 and 1.0.0
                minutes = s._read_mlperf_score(path, ruleset)
                if minutes is None:
                    raise ValueError("Compliance check failed")
                scores.append(minutes)
        except Exception as exc:  # the summarizer counts any unreadable log as dropped
            dropped += 1
            reasons[str(exc).splitlines()[0][:60] if str(exc) else type(exc).__name__] += 1
    most = 4 if benchmark == "unet3d" else 1
    score = None
    factor = 1.0
    if hasattr(s, "_get_scaling_factor"):
        factor = float(s._get_scaling_factor(folder))
    if files and dropped <= most:
        try:
            if s._compute_olympic_average.__code__.co_argcount == 2:  # 0.7.0: one at each end
                score = s._compute_olympic_average(list(scores), dropped)
            else:
                score = s._compute_olympic_average(list(scores), dropped, most)
        except (ZeroDivisionError, ValueError):  # no score left to average
            score = None
        if score is not None:
            score *= factor
    return {
        "folder": folder,
        "files": len(files),
        "dropped": dropped,
        "why_dropped": "; ".join(f"{n} x {why}" for why, n in reasons.items()),
        "scaling_factor": factor,
        "oracle_minutes": score,
    }


def benchmark_folders(tree: Path) -> list[tuple[str, str, str, str]]:
    """(org, system, benchmark folder name, path) of every `<org>/results/<system>/<bench>/`."""
    found = []
    for results in sorted(tree.glob("*/results")):
        org = results.parent.name
        for system in sorted(p for p in results.iterdir() if p.is_dir()):
            for bench in sorted(p for p in system.iterdir() if p.is_dir()):
                if glob.glob(f"{bench}/result_*.txt"):
                    found.append((org, system.name, bench.name, str(bench)))
    return found


def run_oracle(
    rounds_dir: Path, rounds: list[str], git: str | None, jobs: int, cache: Path | None
) -> list[dict]:
    """The summarizer's score of every benchmark folder of the rounds that have one; each
    round's rows are appended to `cache` as it ends."""
    rows = []
    for rnd in rounds:
        if rnd not in RELEASES:
            continue
        tag, ruleset = RELEASES[rnd]
        tree = rounds_dir / f"training_results_{rnd}"
        folders = benchmark_folders(tree)
        root = _release_source(git, tag) if git else None
        tasks = [(path, ruleset, _alias(bench)) for _, _, bench, path in folders]
        with ProcessPoolExecutor(jobs, initializer=_load_summarizer, initargs=(root,)) as pool:
            results = list(pool.map(summarize_folder, tasks, chunksize=4))
        for (org, system, bench, _), got in zip(folders, results, strict=True):
            rows.append(
                {"round": rnd, "org": org, "system": system, "benchmark": _alias(bench), **got}
            )
        print(f"{rnd}: summarized {len(folders)} folders with mlperf-logging {tag}", flush=True)
        if cache is not None:
            _append(cache, rows[-len(folders) :])
    return rows


def _append(cache: Path, rows: list[dict]) -> None:
    new = not cache.exists()
    with cache.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _alias(bench: str) -> str:
    return "maskrcnn" if bench == "mask" else bench


def _release_source(git: str, tag: str) -> str:
    root = Path(tempfile.gettempdir()) / f"mlperf-logging-{tag}"
    if not (root / "mlperf_logging").exists():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", f"--git-dir={git}", "archive", tag, "mlperf_logging"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return str(root)


# --- independent recomputation for v0.5 to v0.7 -------------------------------------------

_V05 = re.compile(rb":::MLPv0\.5\.0 \S+ (\d+(?:\.\d+)?) \([^)]*\) (\w+)(?:: (.*))?")
_V06 = re.compile(rb":::MLL (\d+(?:\.\d+)?) (\w+): (.*)")
_MLLOG = re.compile(rb":::MLLOG (\{.*\})")
# v0.6 Alibaba: `MLPerf: resnet [06/13/19 00:30:56], key: value`, percentages, no target
_BENCH = re.compile(rb"MLPerf: \w+ \[(\d\d/\d\d/\d\d \d\d:\d\d:\d\d)\], (\w+)(?:: (.*))?")
# targets of the v0.6 rules, for the logs that do not state theirs
V06_TARGETS = {"resnet": 0.759}


def recompute_run(path: Path, target: float | None = None) -> tuple[float, bool]:
    """(minutes, converged) of one raw log, read with this script's own few regular
    expressions: the first run_start to the last run_stop; converged if run_stop says so
    (success flag or status), else if an evaluation reached the logged target. A log without
    both events is (inf, False)."""
    start = stop = None
    status = best = None
    for raw in path.read_bytes().splitlines():
        key, t, value = _event(raw)
        if key == "run_start" and start is None:
            start = t
        elif key == "run_stop":
            stop, status = t, _stop_status(value)
        elif key in ("eval_target", "quality_target"):
            target = _number(value)
        elif key == "eval_accuracy" and (q := _number(value)) is not None:
            best = q if best is None else max(best, q)
    if start is None or stop is None:
        return math.inf, False
    if status is not None:
        return (stop - start) / 60, status == "success"
    return (stop - start) / 60, target is not None and best is not None and best >= target


def _event(raw: bytes) -> tuple[str | None, float, object]:
    if m := _MLLOG.search(raw):
        try:
            doc = json.loads(m.group(1))
            seconds = doc["time_s"] if "time_s" in doc else doc["time_ms"] / 1000  # Alibaba v0.7
            return doc["key"], float(seconds), doc
        except (ValueError, KeyError, TypeError):
            return None, 0.0, None
    for pattern in (_V06, _V05, _BENCH):
        if m := pattern.search(raw):
            text = (m.group(3) or b"").decode("latin-1").strip()
            if pattern is _BENCH:
                when = datetime.strptime(m.group(1).decode(), "%m/%d/%y %H:%M:%S")
                t = when.replace(tzinfo=UTC).timestamp()
                text = re.sub(r"([\d.]+)%", lambda p: str(float(p.group(1)) / 100), text)
            else:
                t = float(m.group(1))
            return m.group(2).decode(), t, _value(text)
    return None, 0.0, None


def _value(text: str) -> object:
    """JSON, else a Python literal (v0.6 Intel logs write their metadata as a Python dict)."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text.replace("null", "None").replace("true", "True"))
    except (ValueError, SyntaxError):
        return text


def _stop_status(value: object) -> str | None:
    if not isinstance(value, dict):
        return None
    meta = value.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("status"), str):
        return meta["status"].lower()
    if isinstance(value.get("status"), str):
        return value["status"].lower()
    if isinstance(value.get("success"), bool):
        return "success" if value["success"] else "failed"
    return _stop_status(value.get("value"))


def _number(value: object) -> float | None:
    if isinstance(value, dict):
        return _number(value.get("value"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def recompute(rounds_dir: Path, rounds: list[str]) -> list[dict]:
    """Independent scores of v0.5 to v0.7 from the raw logs, under the rounds' rules
    (collector/queries/rules/<round>.yml, read here as plain YAML)."""
    rows = []
    for rnd in rounds:
        if rnd not in ("v0.5", "v0.6", "v0.7"):
            continue
        rules = yaml.safe_load((RULES / f"{rnd}.yml").read_text())
        tree = rounds_dir / f"training_results_{rnd}"
        folders: dict[Path, list[Path]] = defaultdict(list)
        for log in sorted(tree.rglob("result_*.txt")):
            if "results" in log.parts:
                folders[log.parent].append(log)
        for folder, logs in sorted(folders.items()):
            bench = _alias(folder.name)
            if bench not in rules["benchmarks"]:  # logs in the system folder (Alibaba v0.7)
                bench = _logged_benchmark(logs[0]) or bench
            rule = rules["benchmarks"].get(bench)
            rule = None if rule is None else {**rules["defaults"], **rule}
            target = V06_TARGETS.get(bench) if rnd == "v0.6" else None
            runs = [recompute_run(p, target) for p in logs]
            rows.append(
                {
                    "round": rnd,
                    "folder": str(folder),
                    "benchmark": bench,
                    "files": len(runs),
                    "dropped": sum(not ok for _, ok in runs),
                    "why_dropped": "not converged",
                    "scaling_factor": 1.0,
                    "oracle_minutes": _olympic(runs, logs, rule),
                }
            )
    return rows


def _logged_benchmark(path: Path) -> str | None:
    for raw in path.read_bytes().splitlines():
        key, _, value = _event(raw)
        if key == "submission_benchmark":
            found = value.get("value") if isinstance(value, dict) else value
            return _alias(str(found)) if found else None
    return None


def _olympic(runs: list[tuple[float, bool]], logs: list[Path], rule: dict | None):
    if rule is None or len(runs) < rule["runs_required"]:
        return None
    drop = rule["dropped_each_end"]
    if rule["selection"] == "first_converged_by_start":
        starts = [_first_start(p) for p in logs]
        kept = [t for _, (t, ok) in sorted(zip(starts, runs, strict=True)) if ok]
        kept = kept[: rule["runs_scored"]]
        if len(kept) < rule["runs_scored"]:
            return None
    else:
        kept = [t if ok else math.inf for t, ok in runs]
        if sum(not ok for _, ok in runs) > rule["failed_allowed"]:
            return None
    middle = sorted(kept)[drop : len(kept) - drop]
    return sum(middle) / len(middle) if middle else None


def _first_start(path: Path) -> float:
    for raw in path.read_bytes().splitlines():
        key, t, _ = _event(raw)
        if key == "run_start":
            return t
    return math.inf


# --- comparison ---------------------------------------------------------------------------

STORE_SQL = """
SELECT s.*, f.tree, f.folder
FROM scores AS s
JOIN (
    SELECT DISTINCT system_id, benchmark, coalesce(precision, '') AS p,
        coalesce(interconnect, '') AS i, coalesce(accelerators, -1) AS a,
        split_part(log_path, '/', 1) AS tree,
        regexp_replace(regexp_replace(log_path, '^[^/]*/', ''), '/[^/]*$', '') AS folder
    FROM store.runs WHERE source = 'official'
) AS f
    ON f.system_id = s.system_id AND f.benchmark = s.benchmark
    AND f.p = coalesce(s.precision, '') AND f.i = coalesce(s.interconnect, '')
    AND f.a = coalesce(s.accelerators, -1)
WHERE s.source = 'official'
"""


def store_scores(store: str) -> dict[tuple[str, str], list[dict]]:
    """`collector query scores` over STORE, by (round of the tree, benchmark folder)."""
    import collector

    found: dict[tuple[str, str], list[dict]] = defaultdict(list)
    with collector.open(store) as wh:  # a Warehouse dropped unclosed closes its connection
        rows = wh.sql(STORE_SQL).to_arrow_table().to_pylist()
    for row in rows:
        found[row["tree"].removeprefix("training_results_"), row["folder"]].append(row)
    return found


def _stored_elsewhere(store: str) -> dict[str, str]:
    """log sha256 -> the path it is stored under (one per distinct log)."""
    import collector

    text = "SELECT log_sha256, log_path FROM store.runs WHERE source = 'official'"
    with collector.open(store) as wh:
        rows = wh.sql(text).to_arrow_table().to_pylist()
    return {r["log_sha256"]: r["log_path"] for r in rows}


def _why_absent(folder: str, stored: dict[str, str]) -> str:
    """Why a folder the oracle scored has no configuration in the store."""
    logs = sorted(Path(folder).glob("result_*.txt"))
    elsewhere = {stored.get(hashlib.sha256(p.read_bytes()).hexdigest()) for p in logs}
    elsewhere.discard(None)
    if elsewhere:
        first = sorted(elsewhere)[0].rsplit("/", 2)[0]
        return f"its logs are byte-identical to logs stored once, under another folder ({first})"
    return "no run of the folder in the store"


def compare(oracle: list[dict], ours: dict, rounds: list[str], name=None, stored=None) -> None:
    """Print, per round, how the store's scores compare with the oracle's (named `name`, else
    the round's summarizer)."""
    stats: dict[str, Counter] = defaultdict(Counter)
    reasons: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for o in oracle:
        rnd = o["round"]
        folder = _folder_key(o["folder"], rnd)
        mine = ours.pop((rnd, folder), [])
        theirs = _float(o["oracle_minutes"])
        st, why = stats[rnd], reasons[rnd]
        st["configurations"] += 1
        if not mine:
            absent = _why_absent(o["folder"], stored or {})
            why["absent"][re.sub(r"\(.*\)", "(...)", absent)] += 1
            st["absent"] += 1
            continue
        if len(mine) > 1:
            why["mismatch"][f"{len(mine)} store configurations for the folder"] += 1
            continue
        (mine,) = mine
        score = mine["score_minutes"]
        st["scored"] += score is not None
        if score is None:
            why["unscorable"][_generic(mine["unscorable_reason"])] += 1
            if theirs is None:
                st["unscorable_by_both"] += 1
            else:
                st["oracle_only"] += 1
            continue
        if theirs is None:
            why["mismatch"][f"the oracle gives none: {_dropped(o)}"] += 1
            continue
        st["both"] += 1
        if math.isclose(score, theirs, rel_tol=RELATIVE_TOLERANCE):
            st["matched"] += 1
        else:
            why["mismatch"][_why_differ(mine, o, theirs)] += 1
    for rnd, _ in ours:
        if rnd in rounds:
            stats[rnd]["store_only"] += 1
            reasons[rnd]["store only"]["a folder the oracle did not score"] += 1
    for rnd in rounds:
        st = stats[rnd]
        rate = f"{100 * st['matched'] / st['both']:.1f}%" if st["both"] else "n/a"
        print(
            f"\n{rnd} ({name or _oracle_name(rnd)}): configurations {st['configurations']}, "
            f"scored {st['scored']}, matched {st['matched']} of {st['both']} scored by both "
            f"({rate}); unscorable by both {st['unscorable_by_both']}, by collector only "
            f"{st['oracle_only']}; not in the store {st['absent']}; store-only configurations "
            f"{st['store_only']}"
        )
        for kind in ("mismatch", "absent", "unscorable", "store only"):
            for text, n in sorted(reasons[rnd][kind].items(), key=lambda kv: -kv[1])[:15]:
                print(f"  {kind}: {n} x {text}")


def _oracle_name(rnd: str) -> str:
    return f"mlperf-logging {RELEASES[rnd][0]} result summarizer"


def _folder_key(folder: str, rnd: str) -> str:
    parts = Path(folder).parts
    i = parts.index(f"training_results_{rnd}")
    return "/".join(parts[i + 1 :])


def _generic(text: str | None) -> str:
    return re.sub(r"(?<![v.\d])\d+(?![.\d])", "N", text or "")


def _float(value) -> float | None:
    return None if value in (None, "") else float(value)


def _dropped(o: dict) -> str:
    return f"{o['dropped']} of {o['files']} logs dropped ({o['why_dropped'][:80]})"


def _why_differ(mine: dict, o: dict, theirs: float) -> str:
    failed = mine["runs_total"] - mine["runs_converged"]
    if mine["runs_total"] != int(o["files"]):
        return f"runs differ: collector {mine['runs_total']}, oracle {o['files']}"
    if failed != int(o["dropped"]):
        return f"non-converged runs differ: collector {failed}, oracle {_dropped(o)}"
    if not math.isclose(mine["rcp_scaling_factor"], float(o["scaling_factor"]), rel_tol=1e-12):
        return "RCP factors differ"
    ratio = mine["score_minutes"] / theirs
    return f"run times differ (collector / oracle = {ratio:.6f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds_dir", type=Path)
    parser.add_argument("store")
    parser.add_argument("--rounds", default=",".join(["v0.5", "v0.6", *reversed(RELEASES)]))
    parser.add_argument("--logging-git", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="CSV of the summarizer's scores: rounds found there are not summarized again",
    )
    args = parser.parse_args()
    rounds = args.rounds.split(",")
    oracle = []
    if args.cache and args.cache.exists():
        with args.cache.open() as handle:
            oracle = [r for r in csv.DictReader(handle) if r["round"] in rounds]
    done = {r["round"] for r in oracle}
    todo = [r for r in rounds if r not in done]
    oracle += run_oracle(args.rounds_dir, todo, args.logging_git, args.jobs, args.cache)
    stored = _stored_elsewhere(args.store)
    compare(oracle, store_scores(args.store), [r for r in rounds if r in RELEASES], None, stored)
    early = [r for r in rounds if r in ("v0.5", "v0.6", "v0.7")]
    if early:
        own = recompute(args.rounds_dir, early)
        compare(own, store_scores(args.store), early, "independent recomputation", stored)


if __name__ == "__main__":
    main()
