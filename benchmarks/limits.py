"""Time and memory limits: each method's memory estimate against its measured peak, and the
time-limit scenarios of the reliability report, each run in a fresh process.

``python -m benchmarks.limits memory [--quick]``
    For each method and instance, a fresh interpreter builds the request, resets its
    resident high-water mark (``/proc/self/clear_refs``), solves with that method alone
    (``max_memory=inf``, in process) and reports the peak resident memory above the level
    before the solve, next to :func:`privopt.resources.estimate_bytes`. Written to
    ``results/limits-memory.{csv,md}``.
``python -m benchmarks.limits scenarios [--quick]``
    Each scenario is a command (``privopt solve`` or a short script) run in a fresh process
    whose resident memory (with its children) is sampled every 50 ms: wall time, exit code,
    peak memory, and the seconds between the last line printed and the process's end.
    Written to ``results/limits-scenarios.{csv,md}``.

Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
GIB = 2.0**30


# --- instances -------------------------------------------------------------------------------
def instance(kind: str, size: int) -> dict:
    """Keyword arguments of :func:`privopt.design` for one instance.

    Parameters
    ----------
    kind : str
        ``grid`` (Euclidean n × n map, metric privacy, ε = 0.5), ``manhattan`` (the same with
        the Manhattan metric), ``dp-db`` (dp on 2^n databases, arbitrary prior, ε = 1),
        ``pml`` / ``ldp`` / ``mi`` (k symbols, |x − u|; mi at D = 0.3·D_max), ``iid-db``
        (dp on 2^n databases, i.i.d. rows).
    size : int

    Returns
    -------
    dict
    """
    import numpy as np

    import privopt as po

    rng = np.random.default_rng(size)
    if kind in ("grid", "manhattan"):
        grid = po.LocationGrid(size, size, counts=rng.integers(1, 20, (size, size)))
        norm = "euclidean" if kind == "grid" else "manhattan"
        metric = grid.metric(norm)
        return dict(
            prior=grid.prior(),
            distortion=metric.matrix,
            notion="metric_dp",
            epsilon=0.5,
            metric=metric,
        )
    if kind == "dp-db":
        prior = po.DatabasePrior(2, size, probs=rng.dirichlet(np.ones(2**size)))
        return dict(prior=prior, distortion="hamming", notion="dp", epsilon=1.0)
    if kind == "iid-db":
        prior = po.DatabasePrior(2, size, row_probs=[0.6, 0.4])
        return dict(prior=prior, distortion="hamming", notion="dp", epsilon=1.0)
    p = rng.dirichlet(np.ones(size))
    d = np.abs(np.subtract.outer(np.arange(size), np.arange(size))).astype(float)
    if kind == "mi":
        return dict(prior=p, distortion=d, notion="mutual_information", max_distortion=0.3)
    return dict(prior=p, distortion=d, notion=kind, epsilon=0.5)


#: (kind, sizes, methods) measured by ``memory`` (``--quick``: the first two sizes).
MEMORY_CASES = [
    ("grid", [6, 8, 10, 12], ["sparse-clarabel", "block-ipm"]),
    ("grid", [6, 8], ["sparse-highs"]),
    ("grid", [4, 5, 6], ["CLARABEL"]),
    ("manhattan", [10, 15, 20], ["sparse-clarabel", "block-ipm"]),
    ("dp-db", [6, 7, 8, 9], ["block-ipm"]),
    ("dp-db", [5, 6, 7], ["sparse-highs", "CLARABEL"]),
    ("pml", [100, 200, 400], ["sparse-highs-ipm-crossover", "block-ipm", "CLARABEL"]),
    ("ldp", [50, 100, 200], ["CLARABEL", "block-ipm"]),
    ("mi", [200, 500, 1000], ["blahut-arimoto"]),
    ("mi", [20, 40], ["CLARABEL"]),
    ("iid-db", [8, 12, 16], ["symmetric"]),
]


def _rss(pid: int | str = "self", key: str = "VmRSS") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024.0
    except OSError:
        pass
    return 0.0


def measure_one(kind: str, size: int, method: str, time_limit: float) -> dict:
    """One measurement, in this (fresh) process: see the module docstring.

    Parameters
    ----------
    kind, size
        As in :func:`instance`.
    method : str
    time_limit : float

    Returns
    -------
    dict
    """
    os.environ["PRIVOPT_ISOLATE"] = "never"
    import privopt as po
    from privopt.methods import lookup
    from privopt.request import prepare_request
    from privopt.resources import estimate_bytes

    kwargs = instance(kind, size)
    request = prepare_request(**kwargs)
    model = lookup(method).memory_model
    estimate = estimate_bytes(request, model)
    base = _rss()
    Path("/proc/self/clear_refs").write_text("5")
    start = time.perf_counter()
    try:
        result = po.design(**kwargs, solver=method, max_memory="inf", time_limit=time_limit)
        status = result.status
    except po.PrivoptError as exc:
        status = type(exc).__name__
    wall = time.perf_counter() - start
    peak = _rss(key="VmHWM")
    return {
        "kind": kind,
        "size": size,
        "method": method,
        "model": model,
        "entries": request.entries,
        "estimate_mb": round(estimate / 2**20, 1),
        "measured_mb": round(max(peak - base, 0.0) / 2**20, 1),
        "ratio": round(estimate / max(peak - base, 1.0), 2),
        "status": status,
        "seconds": round(wall, 2),
    }


def memory(quick: bool, time_limit: float, log=print) -> list[dict]:
    """Run :data:`MEMORY_CASES`, each in a fresh interpreter.

    Parameters
    ----------
    quick : bool
    time_limit : float
    log : callable

    Returns
    -------
    list of dict
    """
    rows = []
    for kind, sizes, methods in MEMORY_CASES:
        for size in sizes[:2] if quick else sizes:
            for method in methods:
                spec = json.dumps([kind, size, method, time_limit])
                proc = subprocess.run(
                    [sys.executable, "-m", "benchmarks.limits", "one", spec],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                )
                lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
                if not lines:
                    row = {"kind": kind, "size": size, "method": method, "status": "crashed"}
                    row["error"] = (proc.stderr.strip().splitlines() or [""])[-1][:200]
                else:
                    row = json.loads(lines[-1])
                log(json.dumps(row))
                rows.append(row)
    return rows


# --- scenarios -------------------------------------------------------------------------------
def _grid_file(n: int, norm: str, folder: Path) -> Path:
    """``problems/geo_indistinguishability_grid.toml`` scaled to n × n (seeded counts)."""
    import numpy as np

    counts = np.random.default_rng(n).integers(1, 20, (n, n))
    rows = ",\n  ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in counts)
    path = folder / f"grid{n}-{norm}.toml"
    path.write_text(
        f'title = "{n} x {n} map, {norm}"\n[prior.grid]\nrows = {n}\ncols = {n}\n'
        f'counts = [\n  {rows}\n]\n[distortion]\nkind = "metric"\n[privacy]\n'
        f'notion = "metric_dp"\nepsilon = 0.5\nmetric = {{ norm = "{norm}" }}\n'
    )
    return path


_SCRIPT = """
import sys, time, numpy as np, privopt as po
import privopt.solve  # imported before the clock starts: the seconds are the call's
kind = sys.argv[1]
start = time.perf_counter()
try:
    if kind == "dp-db":
        n, limit = int(sys.argv[2]), float(sys.argv[3])
        prior = po.DatabasePrior(2, n, probs=np.random.default_rng(0).dirichlet(np.ones(2**n)))
        r = po.design(prior, "hamming", "dp", epsilon=1.0, time_limit=limit)
    elif kind == "lip":
        k, limit = int(sys.argv[2]), float(sys.argv[3])
        p = np.random.default_rng(1).dirichlet(np.ones(k))
        d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
        r = po.design(p, d, "information_privacy", epsilon=0.5, time_limit=limit)
    elif kind == "huge-limit":
        r = po.design([.5, .3, .2], "hamming", "pml", epsilon=0.5, time_limit=1e10)
        po.sweep([.5, .3, .2], "hamming", "pml", epsilons=[0.2, 0.5], time_limit=1e10)
        po.design([.5, .3, .2], "hamming", "pml", max_distortion=0.3, time_limit=1e10)
    elif kind == "grid-object":
        n = int(sys.argv[2])
        g = po.LocationGrid(n, n)
        r = po.design(g.prior(), g.distortion(), "metric_dp", epsilon=0.5, metric=g.metric())
    print("RESULT", r.status, r.solver.name, f"{time.perf_counter() - start:.2f}", flush=True)
except Exception as exc:
    print("RESULT", type(exc).__name__, getattr(exc, "field", None),
          f"{time.perf_counter() - start:.2f}", flush=True)
"""


def scenario_commands(folder: Path, quick: bool) -> list[tuple[str, list[str]]]:
    """The scenarios: (label, command)."""
    privopt = [sys.executable, "-m", "privopt"]
    script = [sys.executable, "-c", _SCRIPT]
    grid = {n: _grid_file(n, "euclidean", folder) for n in (15, 20)}
    manhattan = _grid_file(20, "manhattan", folder)
    cases = [
        ("20x20 exact, --time-limit 20", privopt + ["solve", str(grid[20]), "--time-limit", "20"]),
        ("15x15 exact, --time-limit 30", privopt + ["solve", str(grid[15]), "--time-limit", "30"]),
        ("2^8 dp, time_limit=2", script + ["dp-db", "8", "2"]),
        ("2^9 dp, time_limit=2", script + ["dp-db", "9", "2"]),
        ("LIP k=51, time_limit=0.5", script + ["lip", "51", "0.5"]),
        ("time_limit=1e10", script + ["huge-limit"]),
        ("300x300 LocationGrid", script + ["grid-object", "300"]),
        ("120x120 LocationGrid", script + ["grid-object", "120"]),
    ]
    if not quick:
        cases += [
            (
                "20x20 Manhattan, --time-limit 300",
                privopt + ["solve", str(manhattan), "--time-limit", "300"],
            ),
            (
                "20x20 exact, --time-limit 120",
                privopt + ["solve", str(grid[20]), "--time-limit", "120"],
            ),
        ]
    return cases


def _tree(pid: int) -> list[int]:
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return pids
    for child in children:
        pids += _tree(int(child))
    return pids


def run_scenario(
    command: list[str], root: Path = ROOT, cap: float = 12 * GIB, timeout: float = 900.0
) -> dict:
    """Run ``command``; sample the resident memory of its process tree; kill it beyond ``cap``
    bytes or ``timeout`` seconds.

    Parameters
    ----------
    command : list of str
    root : Path
        The source tree whose ``privopt`` runs (working folder and ``PYTHONPATH``).
    cap : float
    timeout : float

    Returns
    -------
    dict
        ``exit_code``, ``wall_s``, ``peak_gb``, ``after_last_line_s`` (seconds from the last
        line printed to the end of the process), ``last_line``, ``killed``.
    """
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=root,
        env=env,
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for raw in proc.stdout:
            lines.append((time.perf_counter() - start, raw.decode(errors="replace").rstrip()))

    reader = threading.Thread(target=read)
    reader.start()
    peak, killed = 0.0, ""
    while proc.poll() is None:
        rss = sum(_rss(pid) for pid in _tree(proc.pid))
        peak = max(peak, rss)
        if rss > cap or time.perf_counter() - start > timeout:
            killed = "memory cap" if rss > cap else "timeout"
            os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(0.05)
    reader.join()
    wall = time.perf_counter() - start
    last_time, last = lines[-1] if lines else (wall, "")
    return {
        "exit_code": proc.returncode,
        "wall_s": round(wall, 2),
        "peak_gb": round(peak / GIB, 2),
        "after_last_line_s": round(wall - last_time, 2),
        "last_line": last[:160],
        "killed": killed,
    }


def scenarios(quick: bool, root: Path = ROOT, only: str = "", log=print) -> list[dict]:
    """Run :func:`scenario_commands`, one at a time.

    Parameters
    ----------
    quick : bool
    root : Path
        The source tree to measure (another checkout, for a before/after comparison).
    only : str
        Run only the scenarios whose label contains this text.
    log : callable

    Returns
    -------
    list of dict
    """
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, command in scenario_commands(Path(folder), quick):
            if only not in label:
                continue
            row = {"scenario": label, **run_scenario(command, root)}
            log(json.dumps(row))
            rows.append(row)
    return rows


def _write(rows: list[dict], name: str) -> None:
    RESULTS.mkdir(exist_ok=True)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    with open(RESULTS / f"{name}.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    with open(RESULTS / f"{name}.md", "w") as fh:
        fh.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
        for row in rows:
            fh.write("| " + " | ".join(str(row.get(k, "")) for k in keys) + " |\n")


def main(argv=None) -> int:
    """The command line (module docstring).

    Parameters
    ----------
    argv : list of str, optional

    Returns
    -------
    int
    """
    parser = argparse.ArgumentParser(prog="python -m benchmarks.limits", description=__doc__)
    parser.add_argument("what", choices=("memory", "scenarios", "one"))
    parser.add_argument("spec", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=60.0,
        help="per measurement (the peak comes early: the set-up, the first iterations)",
    )
    parser.add_argument("--tag", default="", help="suffix of the result files")
    parser.add_argument("--root", type=Path, default=ROOT, help="source tree to measure")
    parser.add_argument("--only", default="", help="scenarios whose label contains this")
    args = parser.parse_args(argv)
    if args.what == "one":
        print(json.dumps(measure_one(*json.loads(args.spec))), flush=True)
        return 0
    if args.what == "memory":
        _write(memory(args.quick, args.time_limit), "limits-memory" + args.tag)
    else:
        _write(scenarios(args.quick, args.root, args.only), "limits-scenarios" + args.tag)
    return 0


if __name__ == "__main__":
    sys.exit(main())
