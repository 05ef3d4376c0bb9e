"""Batches and executors lose nothing and mislead nobody (the reliability attack on
``privopt batch``, ``solve_many`` and ``sweep``): two runs on one output, referenced files
edited or repeated in other folders, damaged journals and tables, killed workers and an
orphaned pool. The attacks on the command line run in subprocesses, as a user would run
them; every wait on a subprocess has a generous bound only."""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import privopt as po
from privopt import batch_files
from privopt.errors import TaskLostError
from privopt.io.batch_files import problem_key, read_results, run_batch, solve_problem_data
from privopt.io.files import read_referenced_files, read_toml

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "problems"
#: A problem that takes seconds (a budget-mode line search over a database): long enough
#: for a worker to be caught solving it.
SLOW_PROBLEM = PROBLEMS / "counting_query_thm2_budget.toml"
#: Generous bound on any one subprocess (seconds): a loaded machine, never a measurement.
PATIENCE = 300

LDP = """title = "{title}"
[prior]
probs = [0.5, 0.3, 0.2]
[distortion]
kind = "hamming"
[privacy]
notion = "ldp"
epsilon = {eps}
"""

FROM_CSV = """[prior]
file = "prior.csv"
[distortion]
kind = "hamming"
[privacy]
notion = "ldp"
epsilon = 1.0
"""


def ldp_folder(folder: Path, levels) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, eps in enumerate(levels):
        (folder / f"p{i}.toml").write_text(LDP.format(title=f"{folder.name} {i}", eps=eps))
    return folder


def privopt_batch(*args, **popen) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "privopt", "batch", *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def finished(proc: subprocess.Popen) -> tuple[int, str]:
    _, err = proc.communicate(timeout=PATIENCE)
    return proc.returncode, err


def keys_of(path: Path) -> list[str]:
    return [r["key"] for r in read_results(path)]


# --- 1. concurrent runs on one output ----------------------------------------------------------
def test_two_runs_on_one_output_keep_every_row(tmp_path):
    out = tmp_path / "R.csv"
    assert run_batch([ldp_folder(tmp_path / "old", [1.1, 1.2])], out).solved == 2
    a = ldp_folder(tmp_path / "a", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    b = ldp_folder(tmp_path / "b", [0.15, 0.25, 0.35, 0.45, 0.55, 0.65])
    runs = [privopt_batch(a, "--out", out), privopt_batch(b, "--out", out)]
    for proc in runs:
        code, err = finished(proc)
        assert code == 0, err
    keys = keys_of(out)
    assert len(keys) == len(set(keys)) == 14  # 2 old rows and 6 from each run
    assert not (tmp_path / "R.csv.partial").exists()  # the last run out removed it


def test_a_run_leaves_the_journal_to_a_run_still_using_it(tmp_path):
    """In-process: a second run's open journal stays when the first finishes, and its rows
    reach the table when it finishes itself."""
    out = tmp_path / "R.csv"
    real = os.path.realpath(out)
    lock = batch_files._Lock(real + ".lock")
    other = batch_files._Journal(real + ".partial", lock)
    with lock.held():
        other.start()
    row = solve_problem_data(
        read_toml(ldp_folder(tmp_path / "c", [2.0]) / "p0.toml"), "c/p0.toml", "a" * 20
    )
    other.append([row])
    summary = run_batch([ldp_folder(tmp_path / "a", [0.1, 0.2])], out)
    assert summary.journal_kept
    assert Path(real + ".partial").exists()
    assert len(keys_of(out)) == 3  # the other run's row is in the table already
    with lock.held():
        assert other.finish()  # the last one out removes the journal
    lock.close()
    assert not Path(real + ".partial").exists()


def test_an_error_row_never_replaces_a_solved_one():
    solved = {"key": "a" * 20, "file": "f", "status": "optimal"}
    failed = {"key": "a" * 20, "file": "f", "status": "error"}
    retried = {"key": "a" * 20, "file": "f", "status": "infeasible"}
    assert batch_files._merge([solved, failed])["a" * 20]["status"] == "optimal"
    assert batch_files._merge([failed, retried])["a" * 20]["status"] == "infeasible"


# --- 2. the key covers the referenced files -----------------------------------------------------
def test_the_same_text_naming_other_csv_files_is_two_problems(tmp_path):
    for name, probs in (("x", "a,0.5\nb,0.5\n"), ("y", "a,0.9\nb,0.1\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "p.toml").write_text(FROM_CSV)
        (tmp_path / name / "prior.csv").write_text(probs)
    out = tmp_path / "R.csv"
    summary = run_batch([tmp_path / "x", tmp_path / "y"], out)
    assert summary.solved == 2 and summary.skipped == 0
    rows = {Path(r["file"]).parent.name: r for r in read_results(out)}
    for name, probs in (("x", [0.5, 0.5]), ("y", [0.9, 0.1])):
        want = po.design(probs, "hamming", "ldp", epsilon=1.0).distortion
        assert rows[name]["distortion"] == pytest.approx(want, abs=1e-9)


def test_an_edited_referenced_csv_is_solved_again(tmp_path):
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "p.toml").write_text(FROM_CSV)
    (folder / "prior.csv").write_text("a,0.5\nb,0.5\n")
    out = tmp_path / "R.csv"
    code, err = finished(privopt_batch(folder, "--out", out))
    assert code == 0, err
    (folder / "prior.csv").write_text("a,0.8\nb,0.2\n")
    code, err = finished(privopt_batch(folder, "--out", out))
    assert code == 0, err
    fresh = po.design([0.8, 0.2], "hamming", "ldp", epsilon=1.0).distortion
    stale = po.design([0.5, 0.5], "hamming", "ldp", epsilon=1.0).distortion
    values = sorted(r["distortion"] for r in read_results(out))
    assert values == pytest.approx(sorted([fresh, stale]), abs=1e-9)
    # a third run finds both contents known: nothing is solved
    code, err = finished(privopt_batch(folder, "--out", out))
    assert code == 0, err
    assert len(read_results(out)) == 2


def test_a_file_without_references_keeps_its_key(tmp_path):
    data = read_toml(ldp_folder(tmp_path / "a", [0.3]) / "p0.toml")
    assert problem_key(data) == problem_key(data, {})
    assert problem_key(data) == problem_key(data, read_referenced_files(data, "a/p0.toml"))


def test_workers_get_the_content_not_the_path(tmp_path):
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "p.toml").write_text(FROM_CSV)
    (folder / "prior.csv").write_text("a,0.9\nb,0.1\n")
    data = read_toml(folder / "p.toml")
    files = read_referenced_files(data, str(folder / "p.toml"))
    (folder / "prior.csv").unlink()  # gone from disk: the worker must not need it
    row = solve_problem_data(data, str(folder / "p.toml"), "b" * 20, files=files)
    assert row["status"] == "optimal"
    want = po.design([0.9, 0.1], "hamming", "ldp", epsilon=1.0).distortion
    assert row["distortion"] == pytest.approx(want, abs=1e-9)
    # a name that was not read with the problem is an error, never a read from disk
    row = solve_problem_data(data, str(folder / "p.toml"), "b" * 20, files={})
    assert row["status"] == "error" and row["error"] == "InputError"


def test_every_file_key_of_the_format_is_collected():
    """The walk finds every key that names a file, at every place the format allows."""
    data = {
        "prior": {"file": "a.csv", "grid": {"counts_file": "b.csv"}},
        "privacy": {"metric": {"file": "c.csv"}, "neighbors": {"file": "d.csv"}},
        "distortion": {"metric": {"file": "e.csv"}, "extra": [{"metric": {"file": "f.csv"}}]},
    }
    assert batch_files.read_referenced_files  # the batch's reader is the files module's
    from privopt.io.files import referenced_files

    assert referenced_files(data) == ["a.csv", "b.csv", "c.csv", "d.csv", "e.csv", "f.csv"]


# --- 3. damaged journals and tables -------------------------------------------------------------
def test_a_fifo_journal_is_set_aside_not_waited_on(tmp_path):
    out = tmp_path / "R.csv"
    os.mkfifo(tmp_path / "R.csv.partial")
    code, err = finished(privopt_batch(ldp_folder(tmp_path / "a", [0.1, 0.2]), "--out", out))
    assert code == 0, err
    assert len(keys_of(out)) == 2
    (aside,) = tmp_path.glob("R.csv.partial.damaged-*")
    assert stat.S_ISFIFO(os.lstat(aside).st_mode)
    assert not (tmp_path / "R.csv.partial").exists()


def _row(key: str, status: str = "optimal") -> dict:
    return {"key": key, "file": "x.toml", "status": status, "distortion": 0.25}


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe not UTF-8\n",
        b'{"key": 5}\n',
        b'{"key": "' + b"c" * 20 + b'", "file": "x.toml", "status": "optimal"}\n[1, 2]\n',
        b'{"key": "' + b"d" * 20 + b'", "file": "x.toml", "status": "splendid"}\n',
        b'{"key": "' + b"e" * 20 + b'", "file": "", "status": "optimal"}\n',
        "directory",
    ],
)
def test_a_damaged_journal_is_set_aside_and_its_good_rows_kept(tmp_path, content):
    out = tmp_path / "R.csv"
    journal = tmp_path / "R.csv.partial"
    good = json.dumps(_row("f" * 20)).encode() + b"\n"
    if content == "directory":
        journal.mkdir()
        kept = 0
    else:
        journal.write_bytes(good + content)
        kept = 1 + (b"c" * 20 in content)
    summary = run_batch([ldp_folder(tmp_path / "a", [0.1])], out)
    (aside,) = summary.set_aside
    assert aside["name"].endswith("R.csv.partial") and aside["kept"] == kept
    assert Path(aside["moved_to"]).exists()
    keys = keys_of(out)
    assert len(keys) == 1 + kept  # the problem solved and the good rows, no phantom
    assert all(batch_files.KEY_PATTERN.match(k) for k in keys)
    if kept:
        assert "f" * 20 in keys


def test_a_journal_line_cut_off_by_a_crash_is_dropped_alone(tmp_path):
    out = tmp_path / "R.csv"
    good = json.dumps(_row("f" * 20)).encode() + b"\n"
    (tmp_path / "R.csv.partial").write_bytes(good + good[:30])  # killed mid-write
    summary = run_batch([ldp_folder(tmp_path / "a", [0.1])], out)
    assert summary.set_aside == [] and summary.solved == 1
    keys = keys_of(out)
    assert len(keys) == 2 and "f" * 20 in keys


def test_a_whole_last_row_without_its_line_end_is_kept_and_ended(tmp_path):
    out = tmp_path / "R.csv"
    whole = json.dumps(_row("f" * 20)).encode()
    (tmp_path / "R.csv.partial").write_bytes(whole)  # cut just before its line end
    summary = run_batch([ldp_folder(tmp_path / "a", [0.1])], out)
    assert summary.set_aside == [] and summary.solved == 1
    assert len(keys_of(out)) == 2 and "f" * 20 in keys_of(out)


@pytest.mark.parametrize("torn", [b'{"key": "abc', json.dumps(_row("9" * 20)).encode()])
def test_an_append_after_a_writer_died_mid_line_keeps_the_journal_whole(tmp_path, torn):
    """A run killed in the middle of its append leaves a cut-off line in the shared journal:
    the next append (another run's, in its turn) drops it, or ends it when only its line end
    is missing, instead of gluing its own row to it."""
    out = tmp_path / "R.csv"
    real = os.path.realpath(out)
    lock = batch_files._Lock(real + ".lock")
    journal = batch_files._Journal(real + ".partial", lock)
    with lock.held():
        journal.start()
    journal.append([_row("a" * 20)])
    with open(real + ".partial", "ab") as fh:  # the writer that died
        fh.write(torn)
    journal.append([_row("b" * 20)])
    journal.close()
    lock.close()
    loaded = batch_files._load_journal(real + ".partial")
    assert loaded.damage == [] and not loaded.cut_tail
    keys = [r["key"] for r in loaded.rows]
    assert keys == ["a" * 20, "9" * 20, "b" * 20] if b"9" in torn else ["a" * 20, "b" * 20]


def test_a_cut_off_last_row_of_the_table_is_not_carried_forward(tmp_path):
    out = tmp_path / "R.csv"
    run_batch([ldp_folder(tmp_path / "a", [0.1, 0.2, 0.3])], out)
    whole = out.read_bytes()
    out.write_bytes(whole[:-40])  # the last row loses its end
    summary = run_batch([ldp_folder(tmp_path / "b", [0.5])], out)
    (aside,) = summary.set_aside
    assert aside["name"] == str(out) and aside["kept"] == 2
    assert Path(aside["moved_to"]).read_bytes() == whole[:-40]
    rows = read_results(out)
    assert len(rows) == 3  # two intact old rows and the new one; no garbage row
    for row in rows:
        assert row["status"] == "optimal" and row["distortion"] is not None


@pytest.mark.parametrize(
    "bad",
    [
        ("status", "great"),
        ("key", "not-a-key"),
        ("distortion", "many"),
        ("verified", "perhaps"),
    ],
)
def test_a_table_row_that_does_not_parse_is_set_aside(tmp_path, bad):
    out = tmp_path / "R.csv"
    run_batch([ldp_folder(tmp_path / "a", [0.1, 0.2])], out)
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].strip().split(",")
    cells = lines[2].rstrip("\r\n").split(",")
    cells[header.index(bad[0])] = bad[1]
    out.write_text(lines[0] + lines[1] + ",".join(cells) + "\r\n", encoding="utf-8")
    with pytest.raises(po.InputError) as info:
        read_results(out)
    assert info.value.field == "--out"
    summary = run_batch([ldp_folder(tmp_path / "a", [0.1, 0.2])], out)
    assert len(summary.set_aside) == 1 and summary.set_aside[0]["kept"] == 1
    assert summary.solved == 1  # the problem of the bad row is solved again
    assert len(read_results(out)) == 2


def test_a_table_that_is_not_utf8_is_set_aside(tmp_path):
    out = tmp_path / "R.csv"
    run_batch([ldp_folder(tmp_path / "a", [0.1])], out)
    out.write_bytes(out.read_bytes().replace(b"a 0", b"a \xff"))
    summary = run_batch([ldp_folder(tmp_path / "a", [0.1])], out)
    assert len(summary.set_aside) == 1
    assert len(read_results(out)) == 1


def test_a_table_that_is_someone_elses_is_refused_not_set_aside(tmp_path, capsys):
    out = tmp_path / "R.csv"
    out.write_text("name,value\na,1\n")
    from privopt.cli import main

    assert main(["batch", str(ldp_folder(tmp_path / "a", [0.1])), "--out", str(out)]) == 2
    assert out.read_text() == "name,value\na,1\n"
    assert not list(tmp_path.glob("*.damaged-*"))


# --- 4. killed workers ----------------------------------------------------------------------------
def _session_members(session: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        if int(fields[3]) == session and fields[0] != "Z":
            members.append(int(entry))
    return members


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(text.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _pool_workers(batch: int) -> list[int]:
    """The pool's worker processes: children of the forkserver, itself a child of ``batch``
    (the resource tracker has no children)."""
    return [w for server in _children(batch) for w in _children(server)]


def _slow_folder(folder: Path, count: int) -> Path:
    folder.mkdir()
    text = SLOW_PROBLEM.read_text(encoding="utf-8")
    for i in range(count):
        (folder / f"slow{i}.toml").write_text(f'title = "slow {i}"\n' + _without_title(text))
    return folder


def _without_title(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if not line.startswith("title"))


needs_proc = pytest.mark.skipif(
    not sys.platform.startswith("linux")
    or "forkserver" not in multiprocessing.get_all_start_methods(),
    reason="reads /proc and the forkserver's process tree (Linux)",
)


@needs_proc
def test_a_killed_pool_worker_loses_no_problem(tmp_path):
    folder = _slow_folder(tmp_path / "slow", 4)
    out = tmp_path / "R.csv"
    proc = privopt_batch(folder, "--out", out, "--workers", "2", start_new_session=True)
    try:
        deadline = time.monotonic() + PATIENCE
        workers: list[int] = []
        while not workers and time.monotonic() < deadline and proc.poll() is None:
            workers = _pool_workers(proc.pid)
            time.sleep(0.2)
        assert workers, "the pool never started"
        os.kill(workers[0], signal.SIGKILL)
        code, err = finished(proc)
    finally:
        for pid in _session_members(proc.pid):  # only what this test started
            os.kill(pid, signal.SIGKILL)
    assert code == 0, err
    rows = read_results(out)
    assert sorted(Path(r["file"]).name for r in rows) == [f"slow{i}.toml" for i in range(4)]
    assert all(r["status"] == "optimal" for r in rows)


@needs_proc
def test_an_orphaned_pool_dies_with_its_batch(tmp_path):
    folder = _slow_folder(tmp_path / "slow", 4)
    proc = privopt_batch(
        folder, "--out", tmp_path / "R.csv", "--workers", "2", start_new_session=True
    )
    session = proc.pid
    try:
        deadline = time.monotonic() + PATIENCE
        while len(_pool_workers(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_session_members(session)) >= 4  # batch, forkserver, tracker, workers
        proc.kill()
        proc.wait(timeout=PATIENCE)
        deadline = time.monotonic() + PATIENCE
        while _session_members(session) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _session_members(session)
    finally:
        for pid in _session_members(session):
            os.kill(pid, signal.SIGKILL)
        proc.communicate()
    assert left == []  # workers, forkserver and resource tracker all gone


ASKS = [
    {"prior": [0.5, 0.3, 0.2], "distortion": "hamming", "notion": "ldp", "epsilon": e}
    for e in (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
]


_RNG = np.random.default_rng(33)
#: Requests that take a tenth of a second or more each: a worker killed when the first
#: answer is back is still busy with the rest.
P40, D40 = _RNG.dirichlet(np.ones(40)), _RNG.random((40, 40))
LEVELS = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0]
SLOW_ASKS = [{"prior": P40, "distortion": D40, "notion": "ldp", "epsilon": e} for e in LEVELS]


def _kill_on_first_tick(pool: cf.ProcessPoolExecutor):
    """A ``progress`` wrapper that kills the pool's worker when the first answer is back."""

    def progress(ticks):
        for n, tick in enumerate(ticks):
            if n == 0:
                for process in list(pool._processes.values()):
                    os.kill(process.pid, signal.SIGKILL)
            yield tick

    return progress


@pytest.mark.parametrize("errors", ["return", "raise"])
def test_solve_many_keeps_what_came_back_from_a_broken_pool(errors):
    serial = po.solve_many(SLOW_ASKS)
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(1, mp_context=context) as pool:
        progress = _kill_on_first_tick(pool)
        if errors == "return":
            outcomes = po.solve_many(SLOW_ASKS, executor=pool, errors="return", progress=progress)
        else:
            with pytest.raises(TaskLostError) as info:
                po.solve_many(SLOW_ASKS, executor=pool, progress=progress)
            outcomes = info.value.results
    lost = [o for o in outcomes if isinstance(o, TaskLostError)]
    kept = [(o, s) for o, s in zip(outcomes, serial, strict=True) if not isinstance(o, Exception)]
    assert lost and kept  # the first answer came back; the rest went with the pool
    assert {o.cause for o in lost} == {"BrokenProcessPool"}
    for got, want in kept:
        assert got.distortion == want.distortion and got.status == want.status


def test_a_sweep_keeps_its_points_when_a_chunk_is_lost():
    serial = po.sweep(P40, D40, "ldp", epsilons=LEVELS)
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(1, mp_context=context) as pool:
        curve = po.sweep(
            P40,
            D40,
            "ldp",
            epsilons=LEVELS,
            executor=pool,
            chunk_size=2,
            progress=_kill_on_first_tick(pool),
        )
    statuses = [r["status"] for r in curve.records]
    assert "error" in statuses and "optimal" in statuses
    assert len(curve.records) == len(LEVELS)
    for got, want in zip(curve.records, serial.records, strict=True):
        assert got["requested_epsilon"] == want["requested_epsilon"]
        if got["status"] != "error":
            assert got["distortion"] == want["distortion"]


class _LosesOneTask(cf.Executor):
    """An executor that runs tasks here, except the second, which a "cluster" loses with
    Dask's own exception."""

    def __init__(self, killed_worker: type):
        self.count = 0
        self.killed_worker = killed_worker

    def submit(self, fn, /, *args, **kwargs):
        future: cf.Future = cf.Future()
        self.count += 1
        if self.count == 2:
            future.set_exception(self.killed_worker("task-2", "tcp://worker:1", 3))
        else:
            future.set_result(fn(*args, **kwargs))
        return future


def test_a_dask_killed_worker_is_that_points_error():
    killed_worker = pytest.importorskip("distributed").KilledWorker
    outcomes = po.solve_many(ASKS[:3], executor=_LosesOneTask(killed_worker), errors="return")
    assert isinstance(outcomes[1], TaskLostError) and outcomes[1].cause == "KilledWorker"
    assert outcomes[0].status == "optimal" and outcomes[2].status == "optimal"
    curve = po.sweep(
        [0.5, 0.3, 0.2],
        "hamming",
        "ldp",
        epsilons=[0.5, 1, 2, 3],
        executor=_LosesOneTask(killed_worker),
        chunk_size=2,
    )
    assert [r["status"] for r in curve.records] == ["optimal", "optimal", "error", "error"]


def test_a_lost_task_error_pickles_with_its_cause():
    import pickle

    error = pickle.loads(pickle.dumps(TaskLostError("lost", "KilledWorker")))
    assert error.cause == "KilledWorker" and isinstance(error, po.SolverError)
    assert np.isfinite(error.exit_code)
