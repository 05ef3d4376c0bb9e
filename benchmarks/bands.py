"""Certified curves: what a whole curve certified to 1 % of its range costs, against one solve.

``python -m benchmarks.bands [--size quick|full] [--cases NAME ...] [--band 0.01] [--out FILE]``

For each case, in this process and in this order (the ratios hold on a loaded machine):

* **one solve**: ``po.design`` at ε = 1 with no solver named, the median of 5 calls when a call
  takes under half a second (as the ``curves`` family of ``python -m benchmarks``);
* **certified curve**: ``po.sweep(..., epsilon_range=(0.05, 3), band=BAND)``: wall time, the
  points it solved, whether the band met the tolerance, its width (fraction of the range),
  and the share of the time spent outside the solves (the band: mixtures, repairs, dual points);
* **uniform grid reaching the same band** (``--size full`` only up to 100 symbols and the
  8 × 8 map, the others take tens of minutes): the fewest evenly spaced points whose band is
  as narrow, by doubling from the adaptive count and then bisecting;
* **50-point grid** (target 2): ``po.sweep(..., epsilons=linspace(0.05, 3, 50))`` without a
  band, and with one (``band=BAND``: the same points, certified between them).

Cases: PML, LDP, maximal leakage, information privacy and dp (every pair of symbols
neighbours) on ``k`` symbols with ``|x − u|`` distortion and a prior with weights uniform on
``[0.2, 1]`` (seed 3, as the ``curves`` family), and metric privacy on 8 × 8 and 12 × 12 maps
(random visit counts 1–19, the Euclidean distance between cell centres as metric and loss).
"""

from __future__ import annotations

import argparse
import csv
import functools
import gc
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LINEAR = ("pml", "ldp", "maximal_leakage", "information_privacy", "dp")
RANGE = (0.05, 3.0)


def _single(k: int, seed: int = 3):
    import privopt as po

    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 1.0, k)
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    return po.Prior(w / w.sum()), d, {}


def _map(side: int):
    import privopt as po

    rng = np.random.default_rng(side)
    grid = po.LocationGrid(side, side, counts=rng.integers(1, 20, (side, side)))
    metric = grid.metric()
    return grid.prior(), metric.matrix, {"metric": metric}


def cases(size: str) -> list[tuple[str, str, callable, bool]]:
    """``(label, notion, instance, compare_uniform)`` of every case at ``size``."""
    out = []
    sizes = (30,) if size == "quick" else (30, 100, 200)
    for k in sizes:
        for notion in LINEAR:
            out.append((f"k={k}, {notion}", notion, functools.partial(_single, k), k <= 100))
    out.append(("8x8 map, metric_dp", "metric_dp", functools.partial(_map, 8), True))
    if size == "full":
        out.append(("12x12 map, metric_dp", "metric_dp", functools.partial(_map, 12), False))
    return out


def _time_one(run) -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
        if times[0] >= 0.5:
            break
    return float(np.median(times))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _solve_seconds(curve) -> float:
    return float(
        sum(r.solver.wall_time_s or 0.0 for r in curve.results if r is not None and r.solver)
    )


def _uniform_points(prior, dist, notion, options, width: float, start: int) -> tuple[int, float]:
    """The fewest evenly spaced points on :data:`RANGE` whose band is at most ``width``
    (doubling from ``start``, then bisecting; at most 1,600), with that grid's seconds."""
    import privopt as po

    def band_of(n: int) -> tuple[float, float]:
        t0 = time.perf_counter()
        curve = _quiet(
            po.sweep, prior, dist, notion, epsilons=np.linspace(*RANGE, n), band=0.01, **options
        )
        return curve.band.width, time.perf_counter() - t0

    lo, hi = start // 2, start
    found = band_of(hi)
    while found[0] > width:
        if hi >= 1600:
            return -1, math.nan
        lo, hi = hi, 2 * hi
        found = band_of(hi)
    best = (hi, found[1])
    while hi - lo > max(2, hi // 20):
        mid = (lo + hi) // 2
        value = band_of(mid)
        if value[0] <= width:
            hi, best = mid, (mid, value[1])
        else:
            lo = mid
    return best


def measure(
    label: str, notion: str, instance, uniform: bool, band: float, banded_grid: bool = True
) -> dict:
    """One case's row (see the module docstring)."""
    import privopt as po

    prior, dist, options = instance()
    gc.collect()
    first = _quiet(po.design, prior, dist, notion, epsilon=1.0, **options)  # warms the caches
    one = _time_one(
        functools.partial(_quiet, po.design, prior, dist, notion, epsilon=1.0, **options)
    )
    t0 = time.perf_counter()
    curve = _quiet(
        po.sweep, prior, dist, notion, epsilon_range=RANGE, band=band, max_points=400, **options
    )
    adaptive = time.perf_counter() - t0
    b = curve.band
    methods = sorted({r.solver.name for r in curve.results if r is not None and r.solver})
    row = {
        "case": label,
        "one_solve_s": one,
        "one_solve_method": first.solver.name,
        "band": band,
        "certified_curve_s": adaptive,
        "ratio_certified": adaptive / one,
        "points": len(curve),
        "met": b.met,
        "relative_width": b.relative_width,
        "stopped": b.stopped,
        "dual_points": b.dual_points,
        "band_share": 1.0 - _solve_seconds(curve) / adaptive,
        "sweep_methods": ",".join(methods),
    }
    if uniform:
        n, seconds = _uniform_points(prior, dist, notion, options, b.width, len(curve))
        row["uniform_points_same_band"] = n
        row["uniform_s"] = seconds
    else:
        row["uniform_points_same_band"] = math.nan
        row["uniform_s"] = math.nan
    eps = np.linspace(*RANGE, 50)
    t0 = time.perf_counter()
    _quiet(po.sweep, prior, dist, notion, epsilons=eps, **options)
    row["grid50_s"] = time.perf_counter() - t0
    row["ratio_grid50"] = row["grid50_s"] / one
    row["grid50_banded_s"] = row["grid50_relative_width"] = math.nan
    if banded_grid:
        t0 = time.perf_counter()
        banded = _quiet(po.sweep, prior, dist, notion, epsilons=eps, band=band, **options)
        row["grid50_banded_s"] = time.perf_counter() - t0
        row["grid50_relative_width"] = banded.band.relative_width
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bands", description=__doc__)
    parser.add_argument("--size", choices=("quick", "full"), default="quick")
    parser.add_argument("--cases", nargs="*", default=None, help="labels to run (substrings)")
    parser.add_argument("--band", type=float, default=0.01)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bands.csv")
    parser.add_argument(
        "--no-banded-grid", action="store_true", help="skip the 50-point grid with its band"
    )
    args = parser.parse_args(argv)
    rows = []
    for label, notion, instance, uniform in cases(args.size):
        if args.cases and not any(c in label for c in args.cases):
            continue
        row = measure(label, notion, instance, uniform, args.band, not args.no_banded_grid)
        rows.append(row)
        _write(args.out, rows)  # after every case: an interrupted run keeps what it measured
        print(
            f"{label:26s} one {row['one_solve_s']:.3f}s [{row['one_solve_method']}]  certified "
            f"{row['certified_curve_s']:.2f}s x{row['ratio_certified']:.1f}, {row['points']} pts"
            f" (met {row['met']}, width {row['relative_width']:.4f}, band share "
            f"{row['band_share']:.0%}); uniform same band {row['uniform_points_same_band']} pts;"
            f" 50-pt grid {row['grid50_s']:.2f}s x{row['ratio_grid50']:.1f} (banded "
            f"{row['grid50_banded_s']:.2f}s, width {row['grid50_relative_width']:.4f})",
            flush=True,
        )
    if rows:
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
