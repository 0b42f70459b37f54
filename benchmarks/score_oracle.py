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
import copy
import csv
import glob
import importlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

# the mlperf-logging release each round was scored with, and the round's ruleset
RELEASES = {
    "v0.7": ("0.7.0", "0.7.0"),
    "v1.0": ("1.0.0", "1.0.0"),
    "v1.1": ("1.1.0-rc4", "1.1.0"),
    "v2.0": ("2.0.0", "2.0.0"),
    "v2.1": ("2.1.0", "2.1.0"),
    "v3.0": ("3.0.0-rc2", "3.0.0"),
    "v3.1": ("3.1.0-rc3", "3.1.0"),
    "v4.0": ("4.0.0-rc3-rcp-prunning", "4.0.0"),
    "v4.1": ("4.1.0-rc4", "4.1.0"),
    "v5.0": ("5.0.0-rc3", "5.0.0"),
    "v5.1": ("5.1.0-rc4", "5.1.0"),
}
RELATIVE_TOLERANCE = 1e-6

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
    for name, parser in list(sys.modules.items()):
        if name.startswith("mlperf_logging.compliance_checker.mlp_parser.ruleset_"):
            parser.re = _FastRe(getattr(parser, "TOKEN", ":::MLLOG "))
    _summarizer = module


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
            score = s._compute_olympic_average(list(scores), dropped, most)
        except ZeroDivisionError:
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


def recompute_run(path: Path) -> tuple[float | None, bool]:
    """(minutes, converged) of one raw log, read without collector's parser: the first
    run_start to the last run_stop; converged if run_stop says so, else if an evaluation
    reached the logged target."""
    start = stop = None
    status = None
    target, best = None, None
    for raw in path.read_bytes().splitlines():
        key, t, value = _event(raw)
        if key is None:
            continue
        if key == "run_start" and start is None:
            start = t
        elif key in ("run_stop", "run_final") and key == "run_stop":
            stop = t
            status = _stop_status(value)
        elif key in ("eval_target", "quality_target"):
            target = _number(value)
        elif key == "eval_accuracy":
            q = _number(value)
            if q is not None:
                best = q if best is None else max(best, q)
    if start is None or stop is None:
        return None, False
    if status == "aborted":
        return (stop - start) / 60, False
    if target is not None and best is not None:
        return (stop - start) / 60, best >= target * (1 - 1e-9) - 1e-12
    return (stop - start) / 60, status == "success"


def _event(raw: bytes) -> tuple[str | None, float, object]:
    if m := _MLLOG.search(raw):
        try:
            doc = json.loads(m.group(1))
        except ValueError:
            return None, 0.0, None
        value = doc.get("value")
        meta = doc.get("metadata") or {}
        if doc.get("key") == "run_stop":
            value = {"status": meta.get("status")}
        return doc.get("key"), float(doc.get("time_ms", 0)) / 1000, value
    for pattern in (_V06, _V05):
        if m := pattern.search(raw):
            text = (m.group(3) or b"").decode("latin-1").strip()
            try:
                value = json.loads(text) if text else None
            except ValueError:
                value = text
            if isinstance(value, dict) and "value" in value and "metadata" in value:
                meta = value.get("metadata") or {}
                value = {"status": meta.get("status")} if m.group(2) == b"run_stop" else value
            return m.group(2).decode(), float(m.group(1)), value
    return None, 0.0, None


def _stop_status(value: object) -> str | None:
    if isinstance(value, dict):
        if isinstance(value.get("status"), str):
            return value["status"].lower()
        if isinstance(value.get("success"), bool):
            return "success" if value["success"] else "failed"
        if isinstance(value.get("value"), dict):
            return _stop_status(value["value"])
    return None


def _number(value: object) -> float | None:
    if isinstance(value, dict):
        value = value.get("value", value.get("accuracy"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


# --- comparison ---------------------------------------------------------------------------


def store_scores(store: str) -> list[dict]:
    """`collector query scores` over STORE, official rows."""
    from collector.queries import query

    table = query.sql("SELECT * FROM scores WHERE source = 'official'", store)
    return table.to_pylist()


def compare(oracle: list[dict], ours: list[dict], rounds: list[str]) -> None:
    """Print, per round, how the store's scores compare with the oracle's."""
    by_folder = {}
    for row in ours:
        by_folder[(row["round"], row["log_folder"])] = row
    report: dict[str, dict] = defaultdict(lambda: defaultdict(Counter))
    stats: dict[str, Counter] = defaultdict(Counter)
    for o in oracle:
        rnd = o["round"]
        key = (rnd, _folder_key(o["folder"]))
        mine = by_folder.pop(key, None)
        stats[rnd]["configurations"] += 1
        theirs = _float(o["oracle_minutes"])
        score = mine["score_minutes"] if mine else None
        if score is not None:
            stats[rnd]["scored"] += 1
        if mine is None:
            report[rnd]["mismatch"]["not in the store"] += 1
            continue
        if score is None:
            report[rnd]["unscorable"][_reason(mine["unscorable_reason"])] += 1
            if theirs is None:
                stats[rnd]["agreed_unscorable"] += 1
            continue
        if theirs is None:
            why = f"summarizer gives none ({o['dropped']} of {o['files']} dropped: "
            why += f"{o['why_dropped'][:70]})"
            report[rnd]["mismatch"][why] += 1
            continue
        stats[rnd]["comparable"] += 1
        if math.isclose(score, theirs, rel_tol=RELATIVE_TOLERANCE):
            stats[rnd]["matched"] += 1
        else:
            why = _why_differ(mine, o, theirs)
            report[rnd]["mismatch"][why] += 1
            stats[rnd]["mismatched"] += 1
    for rnd, folder in by_folder:
        if rnd in rounds and rnd in RELEASES:
            report[rnd]["extra"][f"in the store only: {folder}"] += 1
    _print(rounds, stats, report)


def _folder_key(folder: str) -> str:
    parts = Path(folder).parts
    i = parts.index("results")
    return "/".join(parts[i - 1 :])


def _reason(text: str | None) -> str:
    return re.sub(r"\d+", "N", text or "")


def _float(value) -> float | None:
    if value in (None, ""):
        return None
    return float(value)


def _why_differ(mine: dict, o: dict, theirs: float) -> str:
    failed_ours = mine["runs_total"] - mine["runs_converged"]
    if failed_ours != int(o["dropped"]):
        return (
            f"failed runs differ: ours {failed_ours}, summarizer {o['dropped']} "
            f"({o['why_dropped'][:60]})"
        )
    if mine["runs_total"] != int(o["files"]):
        return f"runs differ: ours {mine['runs_total']}, summarizer {o['files']}"
    if abs(float(o["scaling_factor"]) - (mine["rcp_scaling_factor"] or 1.0)) > 1e-12:
        return "RCP scaling factor differs"
    return f"times differ ({mine['score_minutes']:.6f} vs {theirs:.6f} min)"


def _print(rounds, stats, report) -> None:
    for rnd in rounds:
        st = stats[rnd]
        comparable = st["comparable"]
        rate = f"{100 * st['matched'] / comparable:.1f}%" if comparable else "n/a"
        print(
            f"\n{rnd}: configurations {st['configurations']}, scored {st['scored']}, "
            f"matched {st['matched']} of {comparable} scored by both ({rate}), "
            f"unscorable by both {st['agreed_unscorable']}"
        )
        for kind in ("mismatch", "unscorable", "extra"):
            for why, n in sorted(report[rnd][kind].items(), key=lambda kv: -kv[1])[:12]:
                print(f"  {kind}: {n} x {why}")


def recompute_rows(rounds_dir: Path, rounds: list[str], rules: dict) -> list[dict]:
    """Independent scores of v0.5 to v0.7 from the raw logs under the rounds' rules."""
    rows = []
    for rnd in rounds:
        if rnd not in ("v0.5", "v0.6", "v0.7"):
            continue
        tree = rounds_dir / f"training_results_{rnd}"
        groups: dict[str, list[Path]] = defaultdict(list)
        for log in sorted(tree.rglob("result_*")):
            if "results" in log.parts and log.suffix in (".txt", ".log"):
                groups[str(log.parent)].append(log)
        for folder, logs in groups.items():
            bench = _alias(Path(folder).name)
            rule = rules.get((rnd, bench))
            times = [recompute_run(p) for p in logs]
            rows.append(
                {
                    "round": rnd,
                    "folder": folder,
                    "benchmark": bench,
                    **_score_independently(times, rule),
                }
            )
    return rows


def _score_independently(times, rule) -> dict:
    files = len(times)
    failed = sum(1 for t, ok in times if not ok)
    out = {
        "files": files,
        "dropped": failed,
        "why_dropped": "not converged",
        "scaling_factor": 1.0,
        "oracle_minutes": None,
    }
    if rule is None:
        return out
    required, scored, drop = rule
    if files < required:
        return out
    if scored:  # v0.5 NCF: the first `scored` converged runs by start
        ok = [t for t, good in times if good][:scored]
        if len(ok) < scored:
            return out
        kept = sorted(ok)
    else:
        kept = sorted(t if good and t is not None else math.inf for t, good in times)
    if failed > drop and not scored:
        return out
    middle = kept[drop : len(kept) - drop]
    if middle and all(math.isfinite(t) for t in middle):
        out["oracle_minutes"] = sum(middle) / len(middle)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds_dir", type=Path)
    parser.add_argument("store")
    parser.add_argument(
        "--rounds",
        default=",".join(["v0.5", "v0.6", "v0.7", *[r for r in RELEASES if r != "v0.7"]]),
    )
    parser.add_argument("--logging-git", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="CSV of the summarizer's scores: read if present, else written",
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
    print(len(oracle))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
