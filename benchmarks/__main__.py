"""``python -m benchmarks [--size smoke|quick|full] [--families hamming-db,single] [--out DIR]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.harness import SIZES, run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--size", choices=SIZES, default="quick")
    parser.add_argument("--families", default="hamming-db,single,targets,curves")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default results/)")
    args = parser.parse_args(argv)
    rows, paths = run(args.size, tuple(args.families.split(",")), args.out)
    for kind, path in paths.items():
        print(f"{kind}: {path}", file=sys.stderr)
    failed = [r for r in rows if str(r["status"]).startswith("error")]
    return 1 if failed and args.size == "smoke" else 0


if __name__ == "__main__":
    sys.exit(main())
