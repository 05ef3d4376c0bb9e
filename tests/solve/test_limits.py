"""Limits that hold: every run ends inside its time limit and memory bound and exits cleanly.

The time-limit tests run in subprocesses and assert structured outcomes: the status, the exit
code, that no child process or thread is left behind, the peak memory of the process that
never allocated, and wall time only against generous bounds (the work done before a limit
is what the methods measure). Methods made for the tests (one that sleeps, one that
allocates without bound, both unable to stop) are written to a module the subprocess and
the driver's child process both import.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import privopt as po
from privopt.methods.base import Deadline, Stopping
from privopt.status import Status

ROOT = Path(__file__).resolve().parents[2]
P3 = [0.5, 0.3, 0.2]
LINUX = sys.platform.startswith("linux")
#: Generous bound on the seconds a subprocess test may take beyond its time limit: what is
#: asserted is that the run is bounded at all (the methods made for the tests never end).
SLACK = 60.0

METHODS_MODULE = '''
import time

import numpy as np

from privopt.methods.base import Answer, Method, Stopping, register


class Sleeper(Method):
    """Cannot be stopped: sleeps for an hour."""

    name = "test-sleeper"
    description = "sleeps (tests)"
    stopping = Stopping.NONE

    def unsupported(self, request):
        return None

    def solve(self, task):
        time.sleep(3600)


class Hog(Method):
    """Allocates (and touches) 64 MB blocks without end."""

    name = "test-hog"
    description = "allocates without bound (tests)"
    stopping = Stopping.NONE

    def unsupported(self, request):
        return None

    def solve(self, task):
        blocks = []
        while True:
            blocks.append(np.ones(2**23))


register(Sleeper())
register(Hog())
'''

#: Run in the subprocess after the test's own lines: what is left when the run is over.
REPORT = """
import os, threading, json
def _children():
    pids = []
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/children") as fh:
            pids += fh.read().split()
    return pids
def _peak():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM"))
out["children"] = _children()
out["threads"] = sorted(t.name for t in threading.enumerate())
out["peak"] = _peak()
print(json.dumps(out), flush=True)
"""


def _run(tmp_path: Path, body: str, env: dict | None = None, timeout: float = 300):
    (tmp_path / "limit_methods.py").write_text(METHODS_MODULE)
    script = "import json, time, numpy as np\nimport privopt as po\nout = {}\n"
    script += textwrap.dedent(body) + REPORT
    environment = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", **(env or {}))
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1]), proc, time.perf_counter() - start


def _idle_threads_only(names: list[str]) -> bool:
    """Only the main thread, and block-ipm's idle pool of LAPACK workers (they wait for
    work and end with the interpreter)."""
    return all(n == "MainThread" or n.startswith("privopt-spd") for n in names)


needs_linux = pytest.mark.skipif(not LINUX, reason="child processes are read from /proc")


# --- a method that cannot stop runs in a child process ended at the deadline -----------------
@needs_linux
def test_a_method_that_cannot_stop_is_ended_at_the_deadline(tmp_path):
    out, _, _ = _run(
        tmp_path,
        """
        import limit_methods
        start = time.perf_counter()
        r = po.design([.5, .3, .2], "hamming", "pml", epsilon=0.5, solver="test-sleeper",
                      time_limit=1)
        out.update(status=r.status, seconds=time.perf_counter() - start, tried=r.solver.tried,
                   attempt=r.solver.attempts[0].status if r.solver.attempts else None)
        """,
        env={"PRIVOPT_ISOLATE": "always"},
    )
    assert out["status"] == Status.TIME_LIMIT and out["tried"] == ["test-sleeper"]
    assert out["attempt"] == "time_limit"
    assert out["seconds"] < 1 + SLACK  # the method sleeps for an hour
    assert out["children"] == [] and _idle_threads_only(out["threads"])


@needs_linux
def test_the_command_line_exits_3_at_the_time_limit_and_prints_nothing_after(tmp_path):
    problem = tmp_path / "p.toml"
    problem.write_text(
        '[prior]\nprobs = [0.5, 0.3, 0.2]\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "pml"\nepsilon = 0.5\n'
    )
    (tmp_path / "limit_methods.py").write_text(METHODS_MODULE)
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", PRIVOPT_ISOLATE="always")
    command = (
        "import sys, limit_methods; from privopt._entry import main; "
        f"sys.exit(main(['solve', {str(problem)!r}, '--solver', 'test-sleeper', "
        "'--time-limit', '1', '--json']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", command], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 3, proc.stderr  # not 134 (an abort) nor 1
    assert json.loads(proc.stdout)["status"] == Status.TIME_LIMIT
    # every line on stderr is privopt's own note: no native library's dying words
    assert all(line.startswith("privopt: ") for line in proc.stderr.splitlines()), proc.stderr


@needs_linux
def test_a_child_process_is_held_to_the_memory_bound(tmp_path):
    out, _, _ = _run(
        tmp_path,
        """
        import limit_methods
        r = po.design([.5, .3, .2], "hamming", "pml", epsilon=0.5,
                      solver=["test-hog", "sparse-highs"], time_limit=120, max_memory="256M")
        out.update(status=r.status, name=r.solver.name,
                   attempts=[(a.method, a.status) for a in r.solver.attempts])
        """,
        env={"PRIVOPT_ISOLATE": "always"},
    )
    # the hog failed at its address-space limit in the child; the next method answered
    assert out["status"] == Status.OPTIMAL and out["name"] == "sparse-highs"
    assert out["attempts"] == [["test-hog", "failed"]]
    assert out["peak"] < 2**30  # the caller never held the hog's memory
    assert out["children"] == [] and _idle_threads_only(out["threads"])


@needs_linux
def test_isolated_methods_answer_as_in_process(tmp_path):
    out, _, _ = _run(
        tmp_path,
        """
        events = []
        results = {}
        for solver in ("CLARABEL", "sparse-highs", "sparse-highs-simplex"):
            r = po.design([.5, .3, .2], "hamming", "pml", epsilon=0.5, solver=solver,
                          time_limit=300, on_progress=events.append)
            results[solver] = (r.status, r.distortion, r.solver.details.get("isolated"))
        budget = po.design([.5, .3, .2], "hamming", "mutual_information", max_distortion=0.3,
                           solver="CLARABEL", time_limit=300)
        out.update(results=results, budget=(budget.status, budget.epsilon),
                   stages=sorted({e.stage for e in events}))
        """,
        env={"PRIVOPT_ISOLATE": "always"},
    )
    reference = po.design(P3, "hamming", "pml", epsilon=0.5)
    for status, distortion, isolated in out["results"].values():
        assert status == Status.OPTIMAL and isolated is True
        assert distortion == pytest.approx(reference.distortion, abs=1e-8)
    budget = po.design(P3, "hamming", "mutual_information", max_distortion=0.3)
    assert out["budget"][0] == Status.OPTIMAL
    assert out["budget"][1] == pytest.approx(budget.epsilon, abs=1e-7)
    assert {"start", "done"} <= set(out["stages"])  # progress events came from the child
    assert out["children"] == []


@needs_linux
def test_a_method_that_checks_the_deadline_returns_with_nothing_left_running(tmp_path):
    out, _, _ = _run(
        tmp_path,
        """
        from privopt.methods.block_ipm import dense_inverse
        from privopt.methods.block_ipm.kernels import DenseColumns
        from privopt.methods.base import Deadline
        pool, futures = dense_inverse._pool(), []  # every chunk handed to its thread pool
        submit = pool.submit
        pool.submit = lambda *a, **k: futures.append(submit(*a, **k)) or futures[-1]
        # the limit passes once a factorisation has begun (not after a second of a clock: on
        # a loaded machine the set-up alone can take that long), so its chunks, already in
        # the pool, each meet the deadline at their first check
        begun = []
        factor = DenseColumns.factor
        DenseColumns.factor = lambda self, *a, **k: begun.append(1) or factor(self, *a, **k)
        clock = Deadline.expired
        Deadline.expired = lambda self: (self.limited and bool(begun)) or clock(self)
        out["workers"] = dense_inverse.worker_count()
        prior = po.DatabasePrior(2, 8, probs=np.random.default_rng(0).dirichlet(np.ones(256)))
        start = time.perf_counter()
        r = po.design(prior, "hamming", "dp", epsilon=1.0, solver="block-ipm", time_limit=60)
        out.update(status=r.status, seconds=time.perf_counter() - start, verified=r.verified,
                   level=r.epsilon, chunks=len(futures),
                   running=sum(not f.done() for f in futures))
        """,
    )
    assert out["status"] == Status.TIME_LIMIT
    assert out["running"] == 0  # no factorisation chunk left running
    assert out["chunks"] > 0 or out["workers"] == 1  # one core: no pool, nothing to leave
    if out["verified"]:  # the best iterate, re-measured
        assert out["level"] <= 1.0 + 1e-9
    assert out["seconds"] < 60
    assert out["children"] == [] and _idle_threads_only(out["threads"])


# --- limits at their edges -------------------------------------------------------------------
@pytest.mark.parametrize("limit", [1e10, 1e300, 10**400, math.inf, None])
def test_a_huge_time_limit_is_no_limit(limit):
    assert po.design(P3, "hamming", "pml", epsilon=0.5, time_limit=limit).status == "optimal"
    budget = po.design(P3, "hamming", "pml", max_distortion=0.3, time_limit=limit)
    assert budget.status == Status.OPTIMAL
    curve = po.sweep(P3, "hamming", "pml", epsilons=[0.2, 0.5], time_limit=limit)
    assert [r["status"] for r in curve.records] == ["optimal", "optimal"]
    many = po.solve_many(
        [dict(prior=P3, distortion="hamming", notion="pml", epsilon=0.4)], time_limit=limit
    )
    assert many[0].status == Status.OPTIMAL
    assert not Deadline(limit if limit is not None else None).limited


def test_a_zero_time_limit_is_a_limit_already_reached(capsys):
    res = po.design(P3, "hamming", "pml", epsilon=0.5, time_limit=0)
    assert res.status == Status.TIME_LIMIT and res.mechanism is None
    # what needs no solver is still answered: level 0 is the best constant output
    assert po.design(P3, "hamming", "pml", epsilon=0, time_limit=0).status == Status.OPTIMAL
    from privopt.cli import main

    path = ROOT / "problems" / "pml_uniform_ternary.toml"
    assert main(["solve", str(path), "--time-limit", "0"]) == 3
    assert main(["solve", str(path), "--time-limit", "1e10"]) == 0
    capsys.readouterr()


def test_every_method_declares_how_it_stops():
    from privopt.methods import METHODS

    for method in METHODS.values():
        assert isinstance(method.stopping, Stopping), method.name
    # privopt's own loops run in process; the native solvers may be isolated
    for name in ("block-ipm", "blahut-arimoto", "symmetric", "wang-identifiability"):
        assert METHODS[name].stopping == Stopping.CHECKS
    for name in ("sparse-highs", "sparse-clarabel", "CLARABEL", "HIGHS"):
        assert METHODS[name].stopping == Stopping.NATIVE


def test_only_large_requests_of_methods_that_cannot_stop_are_isolated(monkeypatch):
    from privopt.methods import METHODS
    from privopt.request import prepare_request
    from privopt.solve.isolation import ISOLATION_ENV, should_isolate

    monkeypatch.delenv(ISOLATION_ENV, raising=False)
    small = prepare_request(P3, "hamming", "pml", epsilon=0.5)
    k = 400
    large = prepare_request(np.full(k, 1 / k), "absolute", "pml", epsilon=0.5)
    limited, unlimited = Deadline(10), Deadline(None)
    native, checks = METHODS["sparse-highs"], METHODS["block-ipm"]
    assert should_isolate(native, large, limited) == LINUX
    assert not should_isolate(native, small, limited)
    assert not should_isolate(native, large, unlimited)
    assert not should_isolate(checks, large, limited)
    monkeypatch.setenv(ISOLATION_ENV, "always")
    assert should_isolate(native, small, limited) == LINUX
    assert not should_isolate(checks, small, limited)
    monkeypatch.setenv(ISOLATION_ENV, "never")
    assert not should_isolate(native, large, limited)


# --- memory ----------------------------------------------------------------------------------
def test_a_map_too_large_for_the_bound_is_refused_before_anything_is_allocated(monkeypatch):
    import tracemalloc

    monkeypatch.setenv("PRIVOPT_MAX_MEMORY", "64M")
    grid = po.LocationGrid(60, 60)  # 3,600 cells: 104 MB of distances
    tracemalloc.start()
    try:
        for build in (grid.distortion, grid.metric):
            with pytest.raises(po.InputError) as info:
                build()
            assert info.value.field == "grid"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20
    monkeypatch.delenv("PRIVOPT_MAX_MEMORY")
    huge = po.LocationGrid(300, 300)  # 90,000 cells: 65 GB of distances under the default
    with pytest.raises(po.InputError) as info:
        huge.distortion()
    assert info.value.field == "grid"


def test_a_map_request_above_the_bound_is_refused_naming_the_bound():
    grid = po.LocationGrid(12, 12)
    with pytest.raises(po.InputError) as info:
        po.design(
            grid.prior(),
            grid.distortion(),
            "metric_dp",
            epsilon=0.5,
            metric=grid.metric(),
            max_memory="2M",
        )
    assert info.value.field == "max_memory"


@pytest.mark.slow
@needs_linux
def test_a_20_by_20_map_ends_at_its_time_limit_within_the_default_memory_bound(tmp_path):
    """The reliability report's map: exit 3 near the limit, peak memory of the whole
    process tree within the default bound plus 10 %, nothing printed after the report."""
    counts = np.random.default_rng(20).integers(1, 20, (20, 20))
    rows = ",\n".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in counts)
    problem = tmp_path / "map.toml"
    problem.write_text(
        f"[prior.grid]\nrows = 20\ncols = 20\ncounts = [\n{rows}\n]\n"
        '[distortion]\nkind = "metric"\n[privacy]\nnotion = "metric_dp"\nepsilon = 0.5\n'
        'metric = { norm = "euclidean" }\n'
    )
    sys.path.insert(0, str(ROOT))
    from benchmarks.limits import run_scenario

    env_keep = os.environ.pop("PRIVOPT_MAX_MEMORY", None)
    try:
        row = run_scenario(
            [sys.executable, "-m", "privopt", "solve", str(problem), "--time-limit", "20"],
            timeout=600,
        )
    finally:
        if env_keep is not None:
            os.environ["PRIVOPT_MAX_MEMORY"] = env_keep
    assert row["exit_code"] == 3, row
    assert row["peak_gb"] <= 4 * 1.1, row
    assert row["wall_s"] < 20 + SLACK, row
    assert row["last_line"].startswith("privopt: "), row  # the report's note is the last line


def test_a_chunk_stopped_by_the_limit_leaves_no_other_chunk_running(monkeypatch):
    """block-ipm shares a factorisation's columns between threads: when one chunk raises
    (the deadline passed), the error comes back only once every chunk has ended. A chunk
    left running in the pool worked on outside the caller's BLAS limit (13.5 s more)."""
    import threading

    from privopt.methods.base import TimeLimitReached
    from privopt.methods.block_ipm import dense_inverse

    monkeypatch.setattr(dense_inverse, "worker_count", lambda: 2)
    ended, released = [], threading.Event()

    def task(lo: int, hi: int):
        if lo == 0:
            released.set()
            raise TimeLimitReached("the time limit passed during a factorisation")
        released.wait()  # the first chunk has already failed: this one is still working
        for _ in range(200):
            threading.Event().wait(0.001)
        ended.append(lo)
        return lo

    with pytest.raises(TimeLimitReached):
        dense_inverse.for_chunks(task, 8, 1e9)
    assert ended == [4]  # ended before the error was handed back


def test_a_request_no_method_takes_is_refused_before_its_distortion_is_copied(monkeypatch):
    """Above EARLY_REFUSAL_ENTRIES a request beyond the bound for every method is refused
    before the rescaled copy of its distortion (141 MB here) is made."""
    import tracemalloc

    from privopt.request import prepare_request
    from privopt.solve.selection import EARLY_REFUSAL_ENTRIES, choose_methods

    k = 4200
    assert k * k >= EARLY_REFUSAL_ENTRIES
    p = np.random.default_rng(0).dirichlet(np.ones(k))
    d = np.random.default_rng(1).uniform(1.0, 300.0, (k, k))  # rescaled by 256 if copied
    request = prepare_request(p, d, "pml", epsilon=1.0)
    del d
    tracemalloc.start()
    try:
        with pytest.raises(po.InputError):
            choose_methods(request, None, max_memory_bytes=64 * 2**20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20
