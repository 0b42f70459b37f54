"""Write a variant of a suite with some settings of one benchmark and scale overridden.

    python benchmarks/suite_variant.py v0.5 resnet small out.yml \
        params.batch_size=1024 params.ddp.broadcast_buffers=false max_epochs=4

Values parse as YAML (``false``, ``4``, ``[1, 2]``); dotted keys descend into mappings and
create the missing ones. Used by benchmarks/h200_campaign.sh to measure training-loop settings
through the product itself (`collector run --suite out.yml`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.run.suite import load_suite  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("benchmark")
    ap.add_argument("scale")
    ap.add_argument("out", type=Path)
    ap.add_argument("overrides", nargs="*", metavar="KEY=VALUE")
    args = ap.parse_args()
    doc = yaml.safe_load(load_suite(args.suite).path.read_text())
    block = doc["benchmarks"][args.benchmark][args.scale]
    for item in args.overrides:
        key, _, value = item.partition("=")
        *parents, leaf = key.split(".")
        node = block
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = yaml.safe_load(value)
    args.out.write_text(yaml.safe_dump(doc, sort_keys=False))
    load_suite(str(args.out))  # fails loudly on an invalid variant


if __name__ == "__main__":
    main()
