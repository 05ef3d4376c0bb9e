"""Many requests and sweeps over executors (a Dask LocalCluster of two processes), and
``privopt batch``: serial and distributed runs give the same numbers bit for bit, a run
interrupted midway resumes without solving again what it had done, a broken problem is a row.
"""

from __future__ import annotations

import csv
import os
import pickle
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cloudpickle
import numpy as np
import pytest

import privopt as po
from privopt import batch_files
from privopt.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "problems"
#: Fields that differ between two runs of the same solve (wall-clock timings, the worker).
TIMING_KEYS = {"solve_time_s", "build_time_s", "wall_time_s", "seconds", "worker"}


def without_timings(value):
    """``value`` (JSON-like) with every timing key removed, recursively."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def curve_facts(curve: po.Curve):
    return (
        without_timings(curve.records),
        [without_timings(r.to_dict()) if r is not None else None for r in curve.results],
    )


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


# --- what goes to a worker pickles ----------------------------------------------------------------
@pytest.mark.parametrize(
    "prior, notion, options",
    [
        (po.DatabasePrior(m=2, n=2, row_probs=[0.6, 0.4]), "dp", {}),
        ([0.5, 0.3, 0.2], "robust_pml", {"priors": [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]}),
        (po.JointPrior([[0.3, 0.1], [0.2, 0.4]]), "pml", {}),
    ],
)
@pytest.mark.parametrize(
    "dumps, loads", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)]
)
def test_requests_pickle_and_solve_the_same(prior, notion, options, dumps, loads):
    request = po.prepare_request(prior, "hamming", notion, epsilon=0.7, **options)
    copy = loads(dumps(request))
    assert type(copy.prior) is type(request.prior)
    np.testing.assert_array_equal(copy.prior.input_probs, request.prior.input_probs)
    np.testing.assert_array_equal(copy.distortion.matrix, request.distortion.matrix)
    assert copy.notion.name == request.notion.name
    first, second = po.solve_many([request, copy])
    assert without_timings(first.to_dict()) == without_timings(second.to_dict())
    # the result itself pickles too (its warm start does not travel)
    back = loads(dumps(first))
    assert without_timings(back.to_dict()) == without_timings(first.to_dict())
    assert back.warm_state is None


# --- solve_many ---------------------------------------------------------------------
def test_solve_many_threads_equal_serial_and_errors_stay_in_place():
    asks = [
        {"prior": [0.5, 0.3, 0.2], "distortion": "hamming", "notion": n, "epsilon": e}
        for n in ("pml", "ldp", "maximal_leakage")
        for e in (0.2, 0.9)
    ]
    bad = {"prior": [0.5, 0.5], "distortion": "hamming", "notion": "ldp", "epsilon": -1.0}
    serial = po.solve_many(asks)
    with ThreadPoolExecutor(2) as pool:
        threaded = po.solve_many([*asks, bad], executor=pool, errors="return")
    assert [without_timings(r.to_dict()) for r in serial] == [
        without_timings(r.to_dict()) for r in threaded[:-1]
    ]
    assert isinstance(threaded[-1], po.InputError)
    with pytest.raises(po.InputError):
        po.solve_many([bad])
    # binary randomised response is LDP-optimal on a uniform bit: D* = 1/(e^ε + 1)
    # (Kairouz, Oh & Viswanath)
    (rr,) = po.solve_many([{**bad, "epsilon": 1.0}])
    assert rr.distortion == pytest.approx(1 / (np.e + 1), abs=1e-9)


def test_sweep_chunks_serial_are_the_same_points():
    eps = [0.1, 0.4, 0.8, 1.5, 2.5]
    whole = po.sweep([0.5, 0.3, 0.2], "hamming", "pml", epsilons=eps)
    chunked = po.sweep([0.5, 0.3, 0.2], "hamming", "pml", epsilons=eps, chunk_size=2)
    assert [r["requested_epsilon"] for r in chunked.records] == eps
    np.testing.assert_allclose(chunked.column("distortion"), whole.column("distortion"), atol=1e-9)
    with pytest.raises(po.InputError, match="chunk_size"):
        po.sweep([0.5, 0.5], "hamming", "pml", epsilons=eps, chunk_size=0)
    with pytest.raises(po.InputError, match="executor"):
        po.sweep([0.5, 0.5], "hamming", "pml", epsilons=eps, executor="tcp://nowhere")


# --- Dask: bit for bit the serial numbers -------------------------------------------------------
def test_dask_sweep_solve_many_and_notions_equal_serial(dask_client):
    prior = po.DatabasePrior(m=2, n=3, row_probs=[0.6, 0.4])
    eps = [0.1, 0.3, 0.6, 1.0, 1.5, 2.0, 3.0]
    serial = po.sweep(prior, "hamming", "dp", epsilons=eps, chunk_size=3)
    spread = po.sweep(prior, "hamming", "dp", epsilons=eps, chunk_size=3, executor=dask_client)
    assert curve_facts(spread) == curve_facts(serial)
    # the default chunking over two workers (four chunks) is still ordered and verified
    default = po.sweep(prior, "hamming", "dp", epsilons=eps, executor=dask_client)
    assert [r["requested_epsilon"] for r in default.records] == eps
    assert all(r["verified"] for r in default.records)

    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(12))
    asks = [
        po.prepare_request(p, "hamming", n, epsilon=e)
        for n in ("pml", "information_privacy", "ldp")
        for e in (0.3, 1.2)
    ]
    local = po.solve_many(asks)
    remote = po.solve_many(asks, executor=dask_client)
    assert [without_timings(r.to_dict()) for r in remote] == [
        without_timings(r.to_dict()) for r in local
    ]
    mechanisms = [r.mechanism.matrix for r in remote]
    for a, b in zip(mechanisms, [r.mechanism.matrix for r in local], strict=True):
        assert np.array_equal(a, b)

    curves = po.sweep_notions(
        prior, "hamming", ["dp", "identifiability"], epsilons=eps[2:], executor=dask_client
    )
    assert [c.notion for c in curves] == ["dp", "identifiability"]
    dp, ident = (c.column("distortion") for c in curves)
    # Wang, Ying & Zhang, Thm 1: D*_DP(ε) ≤ D*_I(ε) = h(ε) where identifiability is feasible
    h = np.array([po.closed_forms.h(e, 2, 3) for e in eps[2:]])
    assert np.all(dp <= h + 1e-9)
    ok = ~np.isnan(ident)
    np.testing.assert_allclose(ident[ok], h[ok], atol=1e-8)


# --- privopt batch ------------------------------------------------------------------
def problem_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "problems"
    folder.mkdir()
    for name in (
        "pml_uniform_ternary.toml",
        "maximal_leakage.toml",
        "ldp_randomized_response.toml",
        "wang_uniform_dp.toml",
        "wang_product_identifiability_infeasible.toml",
    ):
        shutil.copy(PROBLEMS / name, folder / name)
    (folder / "zz_broken.toml").write_text("[prior]\nprobs = [0.5, 0.6]\n", encoding="utf-8")
    return folder


def read_rows(path: Path) -> list[dict]:
    rows = batch_files.read_results(path)
    return sorted((without_timings(r) for r in rows), key=lambda r: r["file"])


def test_batch_serial_and_dask_rows_are_equal(tmp_path, dask_client, capsys):
    folder = problem_folder(tmp_path)
    serial, spread = tmp_path / "serial.csv", tmp_path / "dask.csv"
    assert main(["batch", str(folder), "--out", str(serial)]) == 3  # one problem is broken
    address = dask_client.scheduler.address
    assert main(["batch", str(folder), "--out", str(spread), "--scheduler", address]) == 3
    err = capsys.readouterr().err
    assert "[6/6]" in err and "wrote" in err
    rows = read_rows(serial)
    assert rows == read_rows(spread)
    assert len(rows) == 6
    by_name = {Path(r["file"]).name: r for r in rows}
    broken = by_name["zz_broken.toml"]
    assert broken["status"] == "error" and "prior" in broken["message"]
    assert by_name["wang_product_identifiability_infeasible.toml"]["status"] == "infeasible"
    rr = by_name["ldp_randomized_response.toml"]
    # k-ary randomised response (Kairouz, Oh & Viswanath): D* = (k−1)/(e^ε+k−1), k = 4, ε = 1
    assert rr["status"] == "optimal" and rr["reference_ok"] is True
    assert rr["distortion"] == pytest.approx(3 / (np.e + 3), abs=1e-9)
    # the CSV holds every float exactly
    with open(serial, newline="", encoding="utf-8") as fh:
        text_rows = {Path(r["file"]).name: r for r in csv.DictReader(fh)}
    assert float(text_rows["ldp_randomized_response.toml"]["distortion"]) == rr["distortion"]
    # the rows of the workers say where they ran
    workers = {r["worker"] for r in batch_files.read_results(spread)}
    assert workers and all(":" in w for w in workers)


def test_batch_resumes_after_an_interruption(tmp_path, monkeypatch, capsys):
    folder = problem_folder(tmp_path)
    out = tmp_path / "results.csv"
    real = batch_files.solve_problem_data
    calls: list[str] = []

    def interrupted_at_third(data, path, key, solver=None, time_limit=None, files=None):
        calls.append(Path(path).name)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(data, path, key, solver, time_limit, files)

    monkeypatch.setattr(batch_files, "solve_problem_data", interrupted_at_third)
    assert main(["batch", str(folder), "--out", str(out)]) == 130
    assert "kept" in capsys.readouterr().err
    assert not out.exists()
    partial = Path(str(out) + ".partial")
    kept = partial.read_text(encoding="utf-8").splitlines()
    assert len(kept) == 2  # the two problems solved before the interruption

    calls.clear()

    def counted(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(batch_files, "solve_problem_data", counted)
    assert main(["batch", str(folder), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "2 of 6 problem(s) already in the results: skipped" in err
    assert len(calls) == 4  # only what was not done
    assert not partial.exists()
    rows = read_rows(out)
    assert len({r["key"] for r in rows}) == 6
    # a third run solves nothing; a changed file is a new problem
    calls.clear()
    assert main(["batch", str(folder), "--out", str(out)]) == 0
    assert calls == []
    target = folder / "pml_uniform_ternary.toml"
    target.write_text(target.read_text(encoding="utf-8").replace("title =", "# c\ntitle ="))
    assert main(["batch", str(folder), "--out", str(out)]) == 0
    assert calls == []  # a comment does not change the content
    edited = target.read_text(encoding="utf-8").replace("epsilon = ", "epsilon = 0.5 # ", 1)
    target.write_text(edited)
    assert main(["batch", str(folder), "--out", str(out)]) == 0
    assert [Path(c).name for c in calls] == ["pml_uniform_ternary.toml"]
    assert len(read_rows(out)) == 7


def test_batch_ctrl_c_with_a_process_pool_keeps_rows(tmp_path):
    folder = problem_folder(tmp_path)
    for name in ("counting_query_thm2_budget.toml", "wang_nonproduct_dp_budget.toml"):
        shutil.copy(PROBLEMS / name, folder / name)
    out = tmp_path / "r.csv"
    proc = subprocess.Popen(
        [sys.executable, "-m", "privopt", "batch", str(folder), "--out", str(out)]
        + ["--workers", "2"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "[2/" in line:
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, "".join(seen) + rest
    assert "run the same command to resume" in rest
    assert not out.exists()
    kept = Path(str(out) + ".partial").read_text(encoding="utf-8").splitlines()
    assert len(kept) >= 2


def test_batch_parquet_and_bad_options(tmp_path, monkeypatch, capsys):
    folder = problem_folder(tmp_path)
    pytest.importorskip("pyarrow")
    out = tmp_path / "r.parquet"
    assert main(["batch", str(folder / "maximal_leakage.toml"), "--out", str(out)]) == 0
    (row,) = batch_files.read_results(out)
    assert row["status"] == "optimal" and row["distortion"] == pytest.approx(0.35, abs=1e-9)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert main(["batch", str(folder), "--out", str(tmp_path / "x.parquet")]) == 2
    assert "needs pyarrow" in capsys.readouterr().err
    monkeypatch.undo()
    assert main(["batch", str(folder), "--out", str(tmp_path / "x.txt")]) == 2
    assert main(["batch", str(tmp_path / "missing"), "--out", str(tmp_path / "x.csv")]) == 2
    assert main(["batch", str(folder), "--out", str(tmp_path / "y.csv"), "--workers", "0"]) == 2
    args = ["batch", str(folder), "--out", str(tmp_path / "z.csv")]
    assert main([*args, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert not os.path.exists(tmp_path / "z.csv")


def test_benchmark_cases_run_as_tasks_on_dask(dask_client):
    from benchmarks.harness import run_cases, single_cases

    case = single_cases("smoke")[0]
    lines: list[str] = []
    rows = run_cases([case], log=lines.append, executor=dask_client)
    assert len(rows) == 1 + len(case.methods) == len(lines)
    workers = {r["worker"] for r in rows}
    assert len(workers) == 1  # the baseline and the methods of a case run in one process
    assert not workers & {f"{os.uname().nodename}:{os.getpid()}"}
    for r in rows:
        assert str(r["status"]).startswith("optimal"), r
        assert r["error"] < 1e-6


# --- what solve_many takes -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "requests, said",
    [
        (3, "got int 3"),
        (None, "got NoneType"),
        ("abc", "got str 'abc'"),
        ({"prior": [0.5, 0.5], "distortion": "hamming", "notion": "ldp"}, "a single dict"),
    ],
)
def test_solve_many_refuses_what_is_not_a_list_of_requests(requests, said):
    with pytest.raises(po.InputError) as info:
        po.solve_many(requests)
    assert info.value.field == "requests"
    assert "expected a list of requests" in str(info.value) and said in str(info.value)
    single = po.prepare_request([0.5, 0.5], "hamming", "ldp", epsilon=1.0)
    with pytest.raises(po.InputError, match="a single DesignRequest: wrap it in a list"):
        po.solve_many(single)
    assert po.solve_many(iter([single]))[0].status == "optimal"  # any iterable of requests
