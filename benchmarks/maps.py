"""Location privacy at map scale: the targets of the map-scale work, one fresh process each.

``python -m benchmarks.maps [--cases NAME ...] [--baseline] [--time-limit S] [--max-memory M]
[--out FILE]``
solves each case below with privopt's default (``po.design`` with no solver named) in its own
process and records wall time, CPU time, peak resident memory, status, certified gap and the
method that answered (privopt's solve layer is imported before the clock, like the
baseline's cvxpy; its import time is recorded apart); with ``--baseline`` the exact 8 × 8 and
10 × 10 maps are also solved by the plain all-pairs LP in cvxpy with Clarabel
(``baselines.plain_metric_dp``) **in the same process**, after privopt, and the ratio is
reported. Every case uses random visit counts
(integers 1–19 per cell, seeded by the map's side) and the Euclidean distance between cell
centres as the loss, ε = 0.5 per cell side.

Cases (``NAME``: what):

* ``exact-8``, ``exact-10``, ``exact-20``: the Euclidean metric, every constraint pair;
* ``manhattan-N``: the Manhattan metric (the 4-neighbour grid's path metric), ``N × N``;
* ``spanner-N``: the Euclidean metric on the 8-neighbour grid (a 1.0824-spanner; asked as
  ``spanner = 1.1``, the level holds on the full metric at ``1.1·ε``);
* ``road-N``: a planar road-like graph on ``N`` random places (Delaunay edges, weights the
  Euclidean lengths), its shortest-path metric and Euclidean loss;
* ``coarse-S-O``: ``S × S`` secret cells, ``O × O`` output cells over the same map, Manhattan
  metric (``coarse-30-10``, ``coarse-100-20``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

CASES = [
    "exact-8",
    "exact-10",
    "exact-20",
    "manhattan-20",
    "manhattan-30",
    "manhattan-50",
    "spanner-20",
    "spanner-30",
    "road-1500",
    "coarse-30-10",
    "coarse-100-20",
]


def _instance(name: str):
    """``(prior, distortion, options, baseline_args)`` of a case."""
    import privopt as po

    kind, *sizes = name.split("-")
    eps = 0.5
    if kind == "road":
        from scipy.spatial import Delaunay

        k = int(sizes[0])
        rng = np.random.default_rng(k)
        points = rng.uniform(0.0, np.sqrt(k), size=(k, 2))
        tri = Delaunay(points).simplices
        edges = {
            tuple(sorted((int(a), int(b))))
            for t in tri
            for a, b in ((t[0], t[1]), (t[1], t[2]), (t[0], t[2]))
        }
        edge_list = [[a, b, float(np.linalg.norm(points[a] - points[b]))] for a, b in sorted(edges)]
        metric = po.Metric.from_graph(k, edge_list)
        counts = rng.integers(1, 20, k).astype(float)
        prior = counts / counts.sum()
        loss = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
        return prior, loss, {"epsilon": eps, "metric": metric}, None
    side = int(sizes[0])
    rng = np.random.default_rng(side)
    grid = po.LocationGrid(side, side, counts=rng.integers(1, 20, (side, side)))
    if kind == "coarse":
        outputs = int(sizes[1])
        step = side / outputs
        centres = (np.arange(outputs) + 0.5) * step
        out_points = np.array([(x, y) for y in centres for x in centres])
        places = grid.points
        loss = np.sqrt(((places[:, None, :] - out_points[None, :, :]) ** 2).sum(-1))
        return grid.prior(), loss, {"epsilon": eps, "metric": grid.metric("manhattan")}, None
    loss = grid.distortion()
    if kind == "manhattan":
        return grid.prior(), loss, {"epsilon": eps, "metric": grid.metric("manhattan")}, None
    options = {"epsilon": eps, "metric": grid.metric()}
    if kind == "spanner":
        options["spanner"] = 1.1
        return grid.prior(), loss, options, None
    return grid.prior(), loss, options, (grid.prior().probs, loss.matrix, grid.metric().matrix, eps)


def run_case(
    name: str, baseline: bool, time_limit: float | None, max_memory: str | None = None
) -> dict:
    """Solve one case in this process and return its measurements (a request that privopt
    refuses, e.g. above the memory bound, is recorded with the field its error names)."""
    import warnings

    import privopt as po

    prior, loss, options, base_args = _instance(name)
    if time_limit:
        options["time_limit"] = time_limit
    if max_memory:
        options["max_memory"] = max_memory
    # the solve layer that po.design imports on its first call, imported before the clock as
    # the baseline's cvxpy is (benchmarks.baselines, imported before its clock): 0.2-0.3 s of
    # a fresh process's first answer, reported apart (section "First call" of the README)
    began = time.perf_counter()
    import privopt.solve  # noqa: F401

    imported = time.perf_counter() - began
    head = {"case": name, "time_limit": time_limit, "max_memory": max_memory}
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = po.design(prior, loss, "metric_dp", **options)
        except po.InputError as exc:
            return {**head, "status": "refused", "field": exc.field, "error": str(exc)}
    row = {
        **head,
        "status": str(res.status),
        "method": res.solver.name if res.solver else "",
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
        "distortion": res.distortion,
        "relative_gap": res.certificate.relative_gap if res.certificate else None,
        "iterations": (res.solver.details or {}).get("iterations") if res.solver else None,
        # block-ipm's bound from column LPs: the polish, or output pruning's pricing
        "column_duals": (res.solver.details or {}).get("bound_from_column_duals")
        if res.solver
        else None,
        # a method that cannot be stopped runs in a child process: its peak counts too
        "peak_gb": max(
            resource.getrusage(who).ru_maxrss
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        / 2**20,
        "import_seconds": imported,
    }
    if baseline and base_args is not None:
        from benchmarks import baselines

        t0 = time.perf_counter()
        value, info = baselines.plain_metric_dp(*base_args)
        row["baseline_seconds"] = time.perf_counter() - t0
        row["baseline_value"] = value
        row["baseline_status"] = info["status"]
        row["ratio"] = row["baseline_seconds"] / row["seconds"]
        row["agreement"] = abs(value - res.distortion) / (1.0 + abs(value))
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the cases, each in a fresh process, and write one JSON line per case.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=CASES)
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--max-memory", default=None, help="as po.design's max_memory")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "maps.jsonl")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_case(args.one, args.baseline, args.time_limit, args.max_memory)))
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.cases:
        command = [sys.executable, "-m", "benchmarks.maps", "--one", name]
        if args.baseline:
            command.append("--baseline")
        if args.time_limit:
            command += ["--time-limit", str(args.time_limit)]
        if args.max_memory:
            command += ["--max-memory", args.max_memory]
        done = subprocess.run(command, capture_output=True, text=True, cwd=HERE.parent)
        line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
        if done.returncode != 0 or not line.startswith("{"):
            row = {"case": name, "status": f"exit {done.returncode}", "error": done.stderr[-500:]}
        else:
            row = json.loads(line)
        print(json.dumps(row), flush=True)
        with args.out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
