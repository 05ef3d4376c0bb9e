"""Solve a batch of problem files into one results table (``privopt batch``), resumably.

Every problem file becomes one row of the table, keyed by :func:`problem_key` (a hash of the
file's parsed content, so that re-formatting or comments do not change it while any change of
a value does). Rows are streamed as they finish to a journal, ``OUT.partial`` (JSON lines,
flushed and synced after every row); when every problem has a row the table ``OUT`` (CSV, or
Parquet with pyarrow) is written atomically from the old rows and the journal, and the journal
is removed. An interrupted run (Ctrl-C, a crash, a lost cluster) leaves ``OUT`` as it was and
the journal with every row done; running the same command again skips every problem whose key
already has a row in ``OUT`` or in the journal. A problem that fails (bad file, no solver
succeeded) is recorded with status ``error`` and its message and does not stop the batch.

The problems are solved in this process, in a local process pool (``workers``), or on a Dask
cluster (``scheduler``): the file's parsed content travels to the worker, so workers need not
see the files.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import csv
import hashlib
import json
import math
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from privopt._io import atomic_write, check_output_path
from privopt.errors import InputError, PrivoptError
from privopt.files import parse_problem, read_toml

__all__ = [
    "BATCH_COLUMNS",
    "BatchSummary",
    "collect_problem_files",
    "problem_key",
    "read_results",
    "run_batch",
    "solve_problem_data",
]

#: Output formats of ``privopt batch --out``.
BATCH_FORMATS = (".csv", ".parquet")

#: The columns of the results table, in order, with their type.
BATCH_COLUMNS: dict[str, type] = {
    "key": str,
    "file": str,
    "title": str,
    "status": str,
    "notion": str,
    "mode": str,
    "requested_epsilon": float,
    "requested_max_distortion": float,
    "epsilon": float,
    "distortion": float,
    "verified": bool,
    "solver": str,
    "reference_ok": bool,
    "solve_time_s": float,
    "wall_time_s": float,
    "worker": str,
    "error": str,
    "message": str,
}


# --- the problems ------------------------------------------------------------------------------
def collect_problem_files(paths: Iterable[str | os.PathLike]) -> list[str]:
    """The problem files of a batch: each file as given, each folder's ``*.toml`` (not its
    sub-folders), in sorted order within a folder, without repeats.

    Parameters
    ----------
    paths : iterable of str or path-like
        Files and folders.

    Returns
    -------
    list of str

    Raises
    ------
    InputError
        If a path does not exist, or nothing is left to solve.
    """
    files: list[str] = []
    seen: set[str] = set()
    for raw in paths:
        path = os.fspath(raw)
        if os.path.isdir(path):
            found = sorted(
                os.path.join(path, name)
                for name in os.listdir(path)
                if name.endswith(".toml") and os.path.isfile(os.path.join(path, name))
            )
        elif os.path.exists(path):
            found = [path]
        else:
            raise InputError(f"no such file or folder: {path!r}", "FILES")
        for name in found:
            real = os.path.realpath(name)
            if real not in seen:
                seen.add(real)
                files.append(name)
    if not files:
        raise InputError("no problem files (*.toml) found in the given paths", "FILES")
    return files


def problem_key(data: dict) -> str:
    """A hash of a problem file's parsed content: its identity in the results table.

    Parameters
    ----------
    data : dict
        The parsed TOML document (:func:`privopt.files.read_toml`).

    Returns
    -------
    str
        20 hexadecimal digits of the SHA-256 of the document as canonical JSON (sorted keys,
        no spaces): formatting, comments and key order do not change it.
    """
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def _error_row(key: str, path: str, exc: BaseException) -> dict:
    kind = type(exc).__name__ if isinstance(exc, PrivoptError) else "internal error"
    text = str(exc) if isinstance(exc, PrivoptError) else f"{type(exc).__name__}: {exc}"
    return {"key": key, "file": path, "status": "error", "error": kind, "message": text}


def solve_problem_data(
    data: dict,
    path: str,
    key: str,
    solver: str | None = None,
    time_limit: float | None = None,
) -> dict:
    """Solve one parsed problem file into its row of the results table (runs in a worker).

    Parameters
    ----------
    data : dict
        The parsed TOML document.
    path : str
        The file's name (for the row and the messages).
    key : str
        Its :func:`problem_key`.
    solver : str, optional
        Overrides the file's ``[solver] name``.
    time_limit : float, optional
        Seconds; overrides the file's ``[solver] time_limit``.

    Returns
    -------
    dict
        The row; a file that cannot be solved gives a row with status ``error``, never an
        exception.
    """
    from privopt.files import check_reference

    start = time.perf_counter()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    try:
        spec = parse_problem(data, path)
        result = spec.solve(solver=solver, time_limit=time_limit)
        out = result.to_dict()
        checks = check_reference(spec.reference, out) if spec.reference else []
        row = {
            "key": key,
            "file": path,
            "title": spec.title,
            "status": str(result.status),
            "notion": result.notion,
            "mode": result.mode,
            "requested_epsilon": result.requested.get("epsilon"),
            "requested_max_distortion": result.requested.get("max_distortion"),
            "epsilon": result.epsilon,
            "distortion": result.distortion,
            "verified": bool(result.verified),
            "solver": result.solver.name if result.solver is not None else None,
            "reference_ok": all(c["ok"] for c in checks) if checks else None,
            "solve_time_s": result.solver.solve_time_s if result.solver is not None else None,
            "message": result.message or None,
        }
    except Exception as exc:  # noqa: BLE001 - a failing problem is a row, never a stop
        row = _error_row(key, path, exc)
    row["wall_time_s"] = time.perf_counter() - start
    row["worker"] = worker
    return row


# --- the table ------------------------------------------------------------------------------------
def _typed(column: str, value: Any) -> Any:
    """A cell as its column's type (``None`` for empty or unreadable cells)."""
    if value is None or value == "":
        return None
    kind = BATCH_COLUMNS.get(column, str)
    if kind is float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return None
        return None if math.isnan(number) else number
    if kind is bool:
        if isinstance(value, str):
            return value.strip().lower() in ("true", "1", "yes")
        return bool(value)
    return str(value)


def _normalise(row: dict) -> dict:
    return {c: _typed(c, row.get(c)) for c in BATCH_COLUMNS}


def _parquet():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            "writing .parquet needs pyarrow: pip install pyarrow (or the privopt[parquet] "
            "extra), or use a .csv output",
            "--out",
        ) from None
    return pa, pq


def read_results(path: str | os.PathLike) -> list[dict]:
    """The rows of a results table written by :func:`run_batch` (CSV or Parquet).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    list of dict
        Typed as in :data:`BATCH_COLUMNS`; empty when the file does not exist.

    Raises
    ------
    InputError
        If the file cannot be read as a results table.
    """
    name = os.fspath(path)
    if not os.path.exists(name):
        return []
    try:
        if name.lower().endswith(".parquet"):
            _, pq = _parquet()
            rows = pq.read_table(name).to_pylist()
        else:
            with open(name, encoding="utf-8", newline="") as fh:
                rows = list(csv.DictReader(fh))
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable table is the user's to fix
        raise InputError(f"cannot read the existing results {name!r}: {exc}", "--out") from None
    if rows and "key" not in rows[0]:
        raise InputError(
            f"{name!r} is not a results table of privopt batch (no 'key' column); choose "
            "another --out",
            "--out",
        )
    return [_normalise(r) for r in rows]


def _read_journal(path: str) -> list[dict]:
    """The rows of a journal; a torn last line (a crash mid-write) is ignored."""
    rows: list[dict] = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            with contextlib.suppress(ValueError):
                row = json.loads(line)
                if isinstance(row, dict) and row.get("key"):
                    rows.append(_normalise(row))
    return rows


def _write_table(path: str, rows: list[dict]) -> None:
    rows = [_normalise(r) for r in rows]
    if path.lower().endswith(".parquet"):
        pa, pq = _parquet()
        types = {str: pa.string(), float: pa.float64(), bool: pa.bool_()}
        schema = pa.schema([(c, types[t]) for c, t in BATCH_COLUMNS.items()])
        table = pa.Table.from_pylist(rows, schema=schema)
        atomic_write(path, lambda fh: pq.write_table(table, fh), binary=True, option="--out")
        return

    def write_csv(fh: IO[str]) -> None:
        writer = csv.DictWriter(fh, fieldnames=list(BATCH_COLUMNS))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(k, v) for k, v in row.items()})

    atomic_write(path, write_csv, newline="", option="--out")


def _csv_cell(column: str, value: Any) -> Any:
    """A CSV cell: floats written exactly (``repr``), ``None`` as empty."""
    if value is None:
        return ""
    return repr(value) if BATCH_COLUMNS[column] is float else value


# --- the run ------------------------------------------------------------------------------------
@dataclass
class BatchSummary:
    """What a batch run did.

    Attributes
    ----------
    out : str
        The results table.
    files : int
        Problem files given.
    skipped : int
        Files whose key already had a row (not solved again).
    solved : int
        Rows added by this run (errors included).
    errors : list of dict
        The rows of this run with status ``error``.
    interrupted : bool
        Whether the run stopped before every problem had a row (``OUT.partial`` keeps them).
    statuses : dict
        Count of each status among the rows added.
    """

    out: str
    files: int = 0
    skipped: int = 0
    solved: int = 0
    errors: list = field(default_factory=list)
    interrupted: bool = False
    statuses: dict = field(default_factory=dict)


def _ignore_sigint() -> None:
    """Process-pool initializer: Ctrl-C is handled by the parent only."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _executor(workers: int, scheduler: str | None) -> Iterator[Any]:
    """``None`` (this process), a process pool, or a Dask client; closed on the way out."""
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise InputError(
                "--scheduler needs Dask: pip install 'dask[distributed]' (or privopt[dask])",
                "--scheduler",
            ) from None
        try:
            client = Client(scheduler, timeout=30)
        except Exception as exc:  # noqa: BLE001 - an address that does not answer
            raise InputError(
                f"cannot reach the scheduler {scheduler!r}: {exc}", "--scheduler"
            ) from None
        try:
            yield client
        finally:
            client.close()
        return
    if workers <= 1:
        yield None
        return
    import multiprocessing

    # not fork: this process may hold threads (a solver's time-limit worker, a progress bar)
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_ignore_sigint
    )
    try:
        yield pool
    except BaseException:
        # stop now: running tasks are abandoned (their rows were not done)
        for process in list(getattr(pool, "_processes", {}).values()):
            with contextlib.suppress(Exception):
                process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)


def run_batch(
    paths: Iterable[str | os.PathLike],
    out: str | os.PathLike,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    solver: str | None = None,
    time_limit: float | None = None,
    retry_errors: bool = False,
    report: Callable[[str], None] | None = None,
) -> BatchSummary:
    """Solve every problem file not yet in ``out`` and write the results table.

    Parameters
    ----------
    paths : iterable of str or path-like
        Problem files and folders (:func:`collect_problem_files`).
    out : str or path-like
        The results table, ``.csv`` or ``.parquet`` (pyarrow).
    workers : int
        Processes on this machine (1: solve in this process).
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``); its workers solve the problems.
    solver : str, optional
        Overrides each file's ``[solver] name``.
    time_limit : float, optional
        Seconds for each problem; overrides ``[solver] time_limit``.
    retry_errors : bool
        Solve again the problems whose row has status ``error``.
    report : callable, optional
        Receives one line of progress per finished problem (the CLI prints it on stderr).

    Returns
    -------
    BatchSummary

    Raises
    ------
    InputError
        A bad output path or option, a missing input path.
    KeyboardInterrupt
        After Ctrl-C, once the journal holds every row done.
    """
    out = os.fspath(out)
    check_output_path(out, "--out", extensions=BATCH_FORMATS)
    if out.lower().endswith(".parquet"):
        _parquet()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"expected a whole number ≥ 1, got {workers!r}", "--workers")
    files = collect_problem_files(paths)
    journal = out + ".partial"
    old_rows = read_results(out) + _read_journal(journal)
    done: dict[str, dict] = {}
    for row in old_rows:
        done[row["key"]] = row
    if retry_errors:
        done = {k: r for k, r in done.items() if r.get("status") != "error"}
    summary = BatchSummary(out=out, files=len(files))
    say = report or (lambda line: None)

    todo: list[tuple[str, str, Any]] = []  # (path, key, data or the read error)
    queued: set[str] = set()
    for path in files:
        try:
            data = read_toml(path)
            key = problem_key(data)
        except InputError as exc:
            digest = hashlib.sha256(f"{path}\n{exc}".encode()).hexdigest()[:9]
            data, key = exc, f"unreadable-{digest}"
        if key in done or key in queued:
            summary.skipped += 1
            continue
        queued.add(key)
        todo.append((path, key, data))
    if summary.skipped:
        say(f"{summary.skipped} of {len(files)} problem(s) already in the results: skipped")

    kept = list(done.values())

    def restart_journal(fh: IO[str]) -> None:  # from what is kept (atomically replaced)
        for row in kept:
            fh.write(json.dumps(row, allow_nan=True) + "\n")

    atomic_write(journal, restart_journal, option="--out")
    total = len(todo)

    def record(row: dict, fh: IO[str]) -> None:
        fh.write(json.dumps(_normalise(row), allow_nan=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
        summary.solved += 1
        status = row.get("status") or "error"
        summary.statuses[status] = summary.statuses.get(status, 0) + 1
        if status == "error":
            summary.errors.append(row)
        seconds = row.get("wall_time_s")
        timing = f" in {seconds:.2f} s" if isinstance(seconds, float) else ""
        detail = f": {row.get('message')}" if status == "error" else ""
        say(f"[{summary.solved}/{total}] {row['file']}: {status}{timing}{detail}")

    try:
        with open(journal, "a", encoding="utf-8") as fh, _executor(workers, scheduler) as ex:
            ready = [(p, k, d) for p, k, d in todo if isinstance(d, InputError)]
            for path, key, exc in ready:
                record(_error_row(key, path, exc), fh)
            tasks = [(p, k, d) for p, k, d in todo if not isinstance(d, InputError)]
            if ex is None:
                for path, key, data in tasks:
                    record(solve_problem_data(data, path, key, solver, time_limit), fh)
            else:
                from privopt.solve.batch import resolve_executor

                pool = resolve_executor(ex)
                futures = {
                    pool.submit(solve_problem_data, data, path, key, solver, time_limit): (
                        path,
                        key,
                    )
                    for path, key, data in tasks
                }
                try:
                    for future in cf.as_completed(futures):
                        path, key = futures[future]
                        try:
                            row = future.result()
                        except Exception as exc:  # noqa: BLE001 - a lost worker, say
                            row = _error_row(key, path, exc)
                        record(row, fh)
                finally:
                    for future in futures:
                        future.cancel()
    except KeyboardInterrupt:
        summary.interrupted = True
        raise
    rows = sorted(_read_journal(journal), key=lambda r: (r.get("file") or "", r["key"]))
    _write_table(out, rows)
    with contextlib.suppress(OSError):
        os.unlink(journal)
    return summary


def print_line(line: str) -> None:
    """Write one progress line to stderr (flushed).

    Parameters
    ----------
    line : str
    """
    print(f"privopt batch: {line}", file=sys.stderr, flush=True)
