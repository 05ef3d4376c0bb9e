"""``python -m benchmarks [--size smoke|quick|full] [--families hamming-db,single] [--out DIR]
[--scheduler ADDRESS]``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from benchmarks.harness import SIZES, run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--size", choices=SIZES, default="quick")
    parser.add_argument("--families", default="hamming-db,single,targets,curves")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default results/)")
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run each case as a task on this Dask scheduler (tcp://host:8786), timed where it "
        "runs; 'local' starts a LocalCluster of 2 processes",
    )
    args = parser.parse_args(argv)
    families = tuple(args.families.split(","))
    if args.scheduler is None:
        rows, paths = run(args.size, families, args.out)
    else:
        from distributed import Client, LocalCluster

        with contextlib.ExitStack() as stack:
            if args.scheduler == "local":
                cluster = stack.enter_context(
                    LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
                )
                client = stack.enter_context(Client(cluster))
            else:
                client = stack.enter_context(Client(args.scheduler))
            rows, paths = run(args.size, families, args.out, executor=client)
    for kind, path in paths.items():
        print(f"{kind}: {path}", file=sys.stderr)
    failed = [r for r in rows if str(r["status"]).startswith("error")]
    return 1 if failed and args.size == "smoke" else 0


if __name__ == "__main__":
    sys.exit(main())
