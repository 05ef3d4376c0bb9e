"""First-call costs: what the first answer of a process costs, each run in a fresh interpreter.

``python -m benchmarks.first_call [--runs 7] [--families cli,design,scale] [--out FILE]
[--privopt-from DIR]``

Three families, every run a new ``python`` process (nothing imported, nothing cached):

* ``cli``: the wall time of ``privopt solve FILE`` on the shipped problem files, interpreter
  start-up included (timed from outside the process), and the process's CPU time (user +
  system: what the wall time is on an idle machine for this single-threaded work; on a
  loaded one the wall time also counts the waits for a core);
* ``design``: after ``import privopt``, the first ``po.design`` of a small single-alphabet or
  database problem (building its arguments, e.g. a ``DatabasePrior``, included), then the
  same design again in the same process (warm); wall and CPU time;
* ``scale``: the arbitrary-prior 2⁷ request of the ``scale`` family (PD-DP, Dirichlet prior,
  ε = 1) against its plain-cvxpy baseline in one process, as :mod:`benchmarks.harness`
  measures it (cvxpy imported with the baselines beforehand, then the baseline, then
  privopt's default), each done twice: the first-call ratio against the warm one. A second
  order is measured too: privopt first, in a process where nothing has imported cvxpy, then
  the baseline, whose first call then includes importing cvxpy (each first call pays its
  own imports).

Each family reports the minimum and the median over the runs; the markdown table goes to
``--out`` (default ``benchmarks/results/first-call.md``; every run's numbers beside it, in
``.json``). privopt's modules are compiled to
bytecode first, as ``pip install`` leaves them (with ``PYTHONDONTWRITEBYTECODE=1`` an
editable install recompiles every module in every process; ``--no-compile`` measures that).
``--privopt-from DIR`` measures another copy of privopt the same way, e.g. an older commit's
(``git archive COMMIT privopt | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems"
#: Code run first in every measured process: empty, or (``--privopt-from DIR``) code that
#: puts another copy of privopt first on the path.
PRELUDE = ""
#: The modules whose loading the ``design`` family reports.
WATCHED = ("cvxpy", "scipy.optimize", "scipy.stats", "scipy.linalg", "scipy.special", "highspy")

#: Small designs: label → the code building the arguments of ``po.design`` (``args``, ``kw``).
DESIGNS = {
    "pml, uniform 3 symbols, Hamming": (
        "args = ([1/3, 1/3, 1/3], 'hamming', 'pml'); kw = dict(epsilon=0.6931471805599453)"
    ),
    "pml, 4 symbols, absolute distortion": (
        "args = ([0.4, 0.3, 0.2, 0.1], 'absolute', 'pml'); kw = dict(epsilon=0.5)"
    ),
    "ldp, 4 symbols, Hamming": (
        "args = ([0.4, 0.3, 0.2, 0.1], 'hamming', 'ldp'); kw = dict(epsilon=0.5)"
    ),
    "dp, 2³ database, i.i.d. rows": (
        "args = (po.DatabasePrior(m=2, n=3, row_probs=[0.6, 0.4]), "
        "po.Distortion.database_hamming(2, 3), 'dp'); kw = dict(epsilon=1.0)"
    ),
    "dp, 2² database, arbitrary prior": (
        "args = (po.DatabasePrior(m=2, n=2, probs=[0.4, 0.1, 0.2, 0.3]), "
        "po.Distortion.database_hamming(2, 2), 'dp'); kw = dict(epsilon=1.0)"
    ),
    "identifiability, 3² database, i.i.d. rows": (
        "args = (po.DatabasePrior(m=3, n=2, row_probs=[0.5, 0.3, 0.2]), "
        "po.Distortion.database_hamming(3, 2), 'identifiability'); kw = dict(epsilon=1.0)"
    ),
    "mutual information, 4 symbols, Hamming (budget)": (
        "args = ([0.4, 0.3, 0.2, 0.1], 'hamming', 'mutual_information'); "
        "kw = dict(max_distortion=0.3)"
    ),
}

DESIGN_PROBE = """
import json, sys, time
t0 = time.perf_counter()
import privopt as po
t1 = time.perf_counter()
t2, c2 = time.perf_counter(), time.process_time()
{setup}
result = po.design(*args, **kw)
t3, c3 = time.perf_counter(), time.process_time()
again = po.design(*args, **kw)
t4 = time.perf_counter()
print(json.dumps({{
    "import_s": t1 - t0, "first_s": t3 - t2, "first_cpu_s": c3 - c2, "warm_s": t4 - t3,
    "method": result.solver.name, "status": str(result.status),
    "loaded": [m for m in {watched!r} if m in sys.modules],
}}))
"""

SCALE_PROBE = """
import json, time
import numpy as np
import privopt as po
{preload}
rng = np.random.default_rng(16)  # the scale family's first instance at --size full
prior = po.DatabasePrior(2, {n}, probs=rng.dirichlet(np.ones(2**{n})))
dist = po.Distortion.database_hamming(2, {n})
out = {{}}

def privopt_call(key):
    t0 = time.perf_counter()
    res = po.design(prior, dist, "dp", epsilon=1.0)
    out[key] = time.perf_counter() - t0
    out[key + "_method"] = res.solver.name
    out[key + "_value"] = res.distortion

def baseline_call(key):
    t0 = time.perf_counter()
    from benchmarks import baselines  # imports cvxpy, unless done above

    value, _ = baselines.plain_pd_dp(prior.probs, 2, {n}, 1.0)
    out[key] = time.perf_counter() - t0
    out[key + "_value"] = value

for step in {order!r}:
    (privopt_call if step.startswith("privopt") else baseline_call)(step)
print(json.dumps(out))
"""


def _python(code: str, timeout: float = 1800) -> dict:
    """Run ``code`` in a fresh interpreter (from the repository root) and parse the JSON
    object it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _stats(values: list[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def cli_family(runs: int, files: list[Path]) -> list[dict]:
    """Wall time of ``privopt solve FILE`` (a fresh process each), interpreter included."""
    runner = "import runpy\nrunpy.run_module('privopt', run_name='__main__', alter_sys=True)"
    command = [sys.executable, "-c", PRELUDE + runner, "solve"]
    rows = []
    for path in files:
        walls, cpus = [], []
        code = 0
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run([*command, str(path)], capture_output=True, cwd=ROOT, timeout=600)
            walls.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            code = done.returncode
        lo, mid = _stats(walls)
        cpu_lo, cpu_mid = _stats(cpus)
        rows.append(
            {
                "file": path.name,
                "min_s": lo,
                "median_s": mid,
                "cpu_min_s": cpu_lo,
                "cpu_median_s": cpu_mid,
                "exit": code,
            }
        )
    return rows


def design_family(runs: int) -> list[dict]:
    """The first ``po.design`` after ``import privopt``, and the same design warm."""
    rows = []
    for label, setup in DESIGNS.items():
        results = [_python(DESIGN_PROBE.format(setup=setup, watched=WATCHED)) for _ in range(runs)]
        first = _stats([r["first_s"] for r in results])
        first_cpu = _stats([r["first_cpu_s"] for r in results])
        warm = _stats([r["warm_s"] for r in results])
        imported = _stats([r["import_s"] for r in results])
        rows.append(
            {
                "design": label,
                "method": results[-1]["method"],
                "status": results[-1]["status"],
                "import_min_s": imported[0],
                "first_min_s": first[0],
                "first_median_s": first[1],
                "first_cpu_min_s": first_cpu[0],
                "first_cpu_median_s": first_cpu[1],
                "warm_min_s": warm[0],
                "warm_median_s": warm[1],
                "loaded": ", ".join(results[-1]["loaded"]) or "none of them",
            }
        )
    return rows


def scale_family(runs: int, n: int = 7) -> list[dict]:
    """First-call and warm ratios of the arbitrary-prior 2ⁿ request to plain cvxpy
    (``n = 7``: the scale family's; smaller for a smoke run)."""
    orders = {
        "baseline first, cvxpy imported beforehand (as the harness)": (
            ("baseline_1", "privopt_1", "baseline_2", "privopt_2"),
            "from benchmarks import baselines",
        ),
        "privopt first; the baseline's first call imports cvxpy": (
            ("privopt_1", "baseline_1", "privopt_2", "baseline_2"),
            "",
        ),
    }
    rows = []
    for label, (order, preload) in orders.items():
        results = [
            _python(SCALE_PROBE.format(order=order, preload=preload, n=n)) for _ in range(runs)
        ]
        first = [r["baseline_1"] / r["privopt_1"] for r in results]
        warm = [r["baseline_2"] / r["privopt_2"] for r in results]
        rows.append(
            {
                "order": label,
                "method": results[-1]["privopt_1_method"],
                "value_gap": max(
                    abs(r["privopt_1_value"] - r["baseline_1_value"]) for r in results
                ),
                "baseline_1": [r["baseline_1"] for r in results],
                "privopt_1": [r["privopt_1"] for r in results],
                "baseline_2": [r["baseline_2"] for r in results],
                "privopt_2": [r["privopt_2"] for r in results],
                "ratio_first": first,
                "ratio_warm": warm,
                "first_over_warm": [f / w for f, w in zip(first, warm, strict=True)],
                "privopt_first_over_warm": [r["privopt_1"] / r["privopt_2"] for r in results],
            }
        )
    return rows


def _fmt(values: list[float], spec: str = ".3f") -> str:
    lo, mid = _stats(values)
    return f"{lo:{spec}} / {mid:{spec}}"


def markdown(cli: list[dict], design: list[dict], scale: list[dict], runs: int) -> str:
    """The tables of the three families (min / median over ``runs`` fresh processes)."""
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"First-call costs, {runs} fresh processes each (min / median); load average at the "
        f"end {load}.",
        "",
    ]
    if cli:
        lines += [
            "| `privopt solve FILE` | wall (min / median) | CPU (min / median) | exit |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {r['file']} | {r['min_s']:.3f} / {r['median_s']:.3f} s | "
            f"{r['cpu_min_s']:.3f} / {r['cpu_median_s']:.3f} s | {r['exit']} |"
            for r in cli
        ]
        lines.append("")
    if design:
        lines += [
            "| first `po.design` after `import privopt` | method | first, wall (min / median) "
            "| first, CPU (min / median) | warm, wall (min / median) | `import privopt` "
            "| loaded among " + ", ".join(WATCHED) + " |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['design']} | `{r['method']}` | {r['first_min_s']:.3f} / "
            f"{r['first_median_s']:.3f} s | {r['first_cpu_min_s']:.3f} / "
            f"{r['first_cpu_median_s']:.3f} s | {r['warm_min_s']:.4f} / "
            f"{r['warm_median_s']:.4f} s | {r['import_min_s']:.4f} s | {r['loaded']} |"
            for r in design
        ]
        lines.append("")
    if scale:
        lines += [
            "| 2⁷ arbitrary prior, PD-DP | privopt first call | privopt warm | baseline first "
            "| baseline warm | ratio first | ratio warm | ratio first / warm "
            "| privopt first / warm | ratio of the minima, first / warm |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['order']} (`{r['method']}`) | {_fmt(r['privopt_1'])} s | "
            f"{_fmt(r['privopt_2'])} s | {_fmt(r['baseline_1'], '.1f')} s | "
            f"{_fmt(r['baseline_2'], '.1f')} s | ×{_fmt(r['ratio_first'], '.1f')} | "
            f"×{_fmt(r['ratio_warm'], '.1f')} | {_fmt(r['first_over_warm'], '.2f')} | "
            f"{_fmt(r['privopt_first_over_warm'], '.2f')} | "
            f"×{min(r['baseline_1']) / min(r['privopt_1']):.1f} / "
            f"×{min(r['baseline_2']) / min(r['privopt_2']):.1f} |"
            for r in scale
        ]
        lines.append("")
    return "\n".join(lines)


def compile_privopt(folder: Path | None = None) -> Path:
    """Compile privopt's modules to bytecode (``__pycache__``), as an installation does.

    Parameters
    ----------
    folder : Path, optional
        The package folder (default: the installed privopt).

    Returns
    -------
    Path
        The package folder compiled.
    """
    if folder is None:
        folder = Path(importlib.util.find_spec("privopt").submodule_search_locations[0])
    compileall.compile_dir(folder, quiet=1)
    return folder


def use_privopt_from(root: Path) -> None:
    """Measure the privopt package in ``root`` (e.g. ``git archive COMMIT privopt | tar -x -C
    root``) instead of the installed one: every measured process puts ``root`` first on its
    path and drops the editable install's finder.

    Parameters
    ----------
    root : Path
        A folder holding a ``privopt`` package.
    """
    global PRELUDE
    PRELUDE = (
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
        f"sys.path.insert(0, {str(root.resolve())!r})\n"
        "import privopt\n"
        f"assert privopt.__file__.startswith({str(root.resolve())!r}), privopt.__file__\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the families asked for and write the tables.

    Parameters
    ----------
    argv : list of str, optional
        The command line (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0.
    """
    parser = argparse.ArgumentParser(prog="python -m benchmarks.first_call", description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--families", default="cli,design,scale")
    parser.add_argument(
        "--files",
        default="",
        help="comma-separated problem files for the cli family (default: every shipped one)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/first-call.md")
    parser.add_argument(
        "--no-compile", action="store_true", help="do not compile privopt's modules first"
    )
    parser.add_argument(
        "--scale-n", type=int, default=7, help="rows of the scale family's databases (2ⁿ)"
    )
    parser.add_argument(
        "--privopt-from",
        type=Path,
        default=None,
        metavar="DIR",
        help="measure the privopt package in DIR (e.g. an older commit's, extracted with git "
        "archive) instead of the installed one",
    )
    args = parser.parse_args(argv)
    if args.privopt_from is not None:
        use_privopt_from(args.privopt_from)
    if not args.no_compile:
        compile_privopt(args.privopt_from / "privopt" if args.privopt_from else None)
    families = set(args.families.split(","))
    files = (
        [PROBLEMS / name for name in args.files.split(",")]
        if args.files
        else sorted(PROBLEMS.glob("*.toml"))
    )
    cli = cli_family(args.runs, files) if "cli" in families else []
    design = design_family(args.runs) if "design" in families else []
    scale = scale_family(args.runs, args.scale_n) if "scale" in families else []
    text = markdown(cli, design, scale, args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    raw = {"runs": args.runs, "load": os.getloadavg(), "cli": cli, "design": design, "scale": scale}
    args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
