"""The samples each official language-model run trained, read from its log: the table
`collector/queries/language_model_runs.csv` that the derived tables join on the runs' log paths.

    python benchmarks/llm_samples.py --trees TREES [-o collector/queries/language_model_runs.csv]

TREES holds the official result repositories (training_results_v4.0 ... _v5.1). For every
result log of llama2_70b_lora and llama31_8b: its path as the store records it
(`training_results_vX.Y/<submitter>/results/<system>/<benchmark>/result_N.txt`), its sha256,
the global batch and sequence length it logs, and the samples it trained when it stopped
(`samples_count` of run_stop, else of its last eval_accuracy). The stored runs keep no per-event
rows for these rounds, so this is where the samples to target come from.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
from pathlib import Path

BENCHMARKS = ("llama2_70b_lora", "llama31_8b")
ROUNDS = ("v4.0", "v4.1", "v5.0", "v5.1")
COLUMNS = ["log_path", "log_sha256", "global_batch", "max_sequence_length", "samples_to_target"]
MLLOG = re.compile(r":::MLLOG (\{.*\})")


def read(log: Path) -> dict[str, int | None]:
    """The global batch, sequence length and samples at the stop that ``log`` states."""
    found: dict[str, int | None] = dict.fromkeys(COLUMNS[2:])
    last_eval = None
    for line in log.read_text(errors="replace").splitlines():
        m = MLLOG.search(line)
        if not m:
            continue
        try:
            rec = json.loads(m.group(1))
        except json.JSONDecodeError:
            continue
        key, meta = rec.get("key"), rec.get("metadata") or {}
        if key == "global_batch_size" and found["global_batch"] is None:
            found["global_batch"] = int(rec["value"])
        elif key == "max_sequence_length" and found["max_sequence_length"] is None:
            found["max_sequence_length"] = int(rec["value"])
        elif key == "eval_accuracy" and "samples_count" in meta:
            last_eval = int(meta["samples_count"])
        elif key == "run_stop" and "samples_count" in meta:
            found["samples_to_target"] = int(meta["samples_count"])
    if found["samples_to_target"] is None:
        found["samples_to_target"] = last_eval
    return found


def rows(trees: Path) -> list[dict]:
    out = []
    for r in ROUNDS:
        root = trees / f"training_results_{r}"
        for bench in BENCHMARKS:
            for log in sorted(root.glob(f"*/results/*/{bench}/result_*.txt")):
                rel = log.relative_to(trees).as_posix()
                sha = hashlib.sha256(log.read_bytes()).hexdigest()
                out.append({"log_path": rel, "log_sha256": sha, **read(log)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=Path, required=True)
    here = Path(__file__).resolve().parents[1]
    ap.add_argument("-o", type=Path, default=here / "collector/queries/language_model_runs.csv")
    args = ap.parse_args()
    found = rows(args.trees)
    with args.o.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(found)
    print(f"{len(found)} logs -> {args.o}")


if __name__ == "__main__":
    main()
