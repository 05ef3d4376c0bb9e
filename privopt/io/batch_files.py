"""Solve a batch of problem files into one results table (``privopt batch``), resumably.

Every problem file becomes one row of the table, keyed by :func:`problem_key` (a hash of the
file's parsed content and of the content of every file it names, so that re-formatting or
comments do not change it while any change of a value, or of a referenced CSV file, does).
Rows are streamed as they finish to a journal, ``OUT.partial`` (JSON lines, synced after
every row); when every problem has a row the table ``OUT`` (CSV, or Parquet with pyarrow) is
written atomically from the old rows and the journal. An interrupted run (Ctrl-C, a crash, a
lost cluster) leaves ``OUT`` as it was and the journal with every row done; running the same
command again skips every problem whose key already has a row in ``OUT`` or in the journal.
A problem that fails (bad file, no solver succeeded, its worker lost twice) is recorded with
status ``error`` and its message and does not stop the batch.

Several runs may share one ``OUT`` at the same time: they take turns (``fcntl.flock`` on the
lock file ``OUT.lock``, which is never removed) to read the table, to append a row to the
shared journal and to write the table, and the journal is removed only by the last run that
uses it; no row is ever lost. (On platforms without ``fcntl``, e.g. Windows, nothing is
locked: run one batch at a time on an output there. On a network file system the lock is as
good as the file system's ``flock``.) Two runs given the same problems may both solve one;
its row is kept once (a row that is not an error is never replaced by an error).

A journal or table that is damaged — not a regular file (a FIFO, a directory), not UTF-8,
a row that does not parse or is not a row of this table, a cut-off last row — is reported by
name and set aside (renamed ``NAME.damaged-<time>``); every row of it that does parse is kept.
A journal whose last line was cut off by a crash loses that line only.

The problems are solved in this process, in a local process pool (``workers``), or on a Dask
cluster (``scheduler``): the file's parsed content and the content of the files it names travel
to the worker, so workers never read a file. Pool workers end when the run does, however it
ends (each watches the run's process). A pool whose worker dies (killed, out of memory) is
replaced and its unfinished problems are solved again; a problem that was running each of two
times its pool broke is recorded as an error. On Dask a task whose workers die is retried by
the scheduler (``distributed.scheduler.allowed-failures``, 3 by default) and then recorded as
an error.
"""

from __future__ import annotations

__all__ = [
    "BATCH_COLUMNS",
    "BatchSummary",
    "collect_problem_files",
    "problem_key",
    "read_results",
    "read_results_frame",
    "run_batch",
    "solve_problem_data",
]

import concurrent.futures as cf
import contextlib
import csv
import hashlib
import json
import math
import os
import re
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from privopt._io import atomic_write, check_output_path, file_kind, read_input_file
from privopt.errors import InputError, PrivoptError
from privopt.io.files import ReferencedFile, parse_problem, read_referenced_files, read_toml
from privopt.status import Status

try:  # POSIX: the lock of a shared output
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock (see the module docstring)
    fcntl = None  # type: ignore[assignment]

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


def problem_key(data: dict, files: dict[str, ReferencedFile] | None = None) -> str:
    """A hash of a problem file's parsed content and of the files it names: its identity in
    the results table.

    Parameters
    ----------
    data : dict
        The parsed TOML document (:func:`privopt.io.files.read_toml`).
    files : dict, optional
        The files it names, read (:func:`privopt.io.files.read_referenced_files`).

    Returns
    -------
    str
        20 hexadecimal digits of the SHA-256 of the document as canonical JSON (sorted keys,
        no spaces): formatting, comments and key order do not change it. With referenced
        files, the JSON holds the document and each file's SHA-256 (its bytes), so that two
        documents of the same text naming different contents (other folders, an edited CSV
        file) are two problems. A document that names no file keeps the key it always had.
    """
    payload: Any = data
    if files:
        payload = {"problem": data, "files": {name: f.digest for name, f in files.items()}}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def _error_row(key: str, path: str, exc: BaseException, kind: str | None = None) -> dict:
    if kind is None:
        kind = type(exc).__name__ if isinstance(exc, PrivoptError) else "internal error"
    text = str(exc) if isinstance(exc, PrivoptError) else f"{type(exc).__name__}: {exc}"
    return {"key": key, "file": path, "status": "error", "error": kind, "message": text}


def solve_problem_data(
    data: dict,
    path: str,
    key: str,
    solver: str | None = None,
    time_limit: float | None = None,
    files: dict[str, ReferencedFile] | None = None,
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
    files : dict, optional
        The files the document names, read by the caller
        (:func:`privopt.io.files.read_referenced_files`); then nothing is read from disk
        here. ``None``: read them from disk relative to ``path``.

    Returns
    -------
    dict
        The row; a file that cannot be solved gives a row with status ``error``, never an
        exception.
    """
    from privopt.io.files import check_reference

    start = time.perf_counter()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    try:
        spec = parse_problem(data, path, files=files)
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


# --- rows ------------------------------------------------------------------------------------
#: A row's key: 20 hexadecimal digits, or ``unreadable-`` and 9 for a file that cannot be read.
KEY_PATTERN = re.compile(r"(?:[0-9a-f]{20}|unreadable-[0-9a-f]{9})\Z")
#: The statuses a row may have.
ROW_STATUSES = frozenset(str(s.value) for s in Status)
#: Largest results table or journal read (bytes): far above any real table, a bound on memory.
MAX_RESULTS_BYTES = 2**31


class _BadCell(ValueError):
    """A cell that is not a value of its column."""


def _typed(column: str, value: Any, strict: bool = False) -> Any:
    """A cell as its column's type (``None`` for empty cells; for unreadable ones too, unless
    ``strict``, which raises :class:`_BadCell`)."""
    if value is None or value == "":
        return None
    kind = BATCH_COLUMNS.get(column, str)
    if kind is float:
        try:
            if isinstance(value, bool) or (isinstance(value, str) and "_" in value):
                raise ValueError(value)
            number = float(value)
        except (TypeError, ValueError):
            if strict:
                raise _BadCell(f"{column} = {value!r} is not a number") from None
            return None
        return None if math.isnan(number) else number
    if kind is bool:
        if isinstance(value, str):
            word = value.strip().lower()
            if strict and word not in ("true", "false", "1", "0", "yes", "no"):
                raise _BadCell(f"{column} = {value!r} is not true or false")
            return word in ("true", "1", "yes")
        if strict and not isinstance(value, (bool, int)):
            raise _BadCell(f"{column} = {value!r} is not true or false")
        return bool(value)
    return str(value)


def _normalise(row: dict) -> dict:
    return {c: _typed(c, row.get(c)) for c in BATCH_COLUMNS}


def _checked_row(raw: Any) -> dict:
    """A row read back from a table or journal, typed; :class:`_BadCell` when it is not a
    row of this table (no valid key, no file, an unknown status, a cell of the wrong type)."""
    if not isinstance(raw, dict):
        raise _BadCell(f"a {type(raw).__name__}, not a row")
    row = {c: _typed(c, raw.get(c), strict=True) for c in BATCH_COLUMNS}
    key = raw.get("key")
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        raise _BadCell(f"key {key!r} is not a problem key")
    if not row["file"]:
        raise _BadCell("no file")
    if row["status"] not in ROW_STATUSES:
        raise _BadCell(f"status {raw.get('status')!r} is not a status")
    return row


def _merge(rows: Iterable[dict], into: dict[str, dict] | None = None) -> dict[str, dict]:
    """Rows by key, later rows first, except that an error never replaces another status."""
    done = {} if into is None else into
    for row in rows:
        old = done.get(row["key"])
        if old is not None and row["status"] == "error" and old["status"] != "error":
            continue
        done[row["key"]] = row
    return done


# --- the table ---------------------------------------------------------------------------------
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


@dataclass
class _Loaded:
    """What was read from a table or journal: the rows that parse, and what did not."""

    rows: list = field(default_factory=list)
    damage: list = field(default_factory=list)  # one phrase per problem found
    cut_tail: bool = False  # the last line had no line end (a write cut short)

    def read(self, name: str) -> bytes | None:
        """The bytes of the file ``name``, or ``None`` with why not recorded as damage."""
        try:
            return read_input_file(name, MAX_RESULTS_BYTES)
        except InputError as exc:
            self.damage.append(str(exc))
            return None


def _not_results(name: str) -> InputError:
    return InputError(
        f"{name!r} is not a results table of privopt batch (no 'key' column); choose another --out",
        "--out",
    )


def _load_table(name: str) -> _Loaded:
    """The rows of a results table and the damage found (an absent table has neither).

    Raises
    ------
    InputError
        When the file is not a results table at all (no ``key`` column): it is the user's,
        not set aside.
    """
    loaded = _Loaded()
    if not os.path.lexists(name):
        return loaded
    data = loaded.read(name)
    if data is None:
        return loaded
    if name.lower().endswith(".parquet"):
        _, pq = _parquet()
        try:
            import io

            table = pq.read_table(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 - any unreadable Parquet file is damage
            loaded.damage.append(f"not a readable Parquet file ({type(exc).__name__}: {exc})")
            return loaded
        if "key" not in table.column_names:
            raise _not_results(name)
        raw_rows = table.to_pylist()
        for number, raw in enumerate(raw_rows, start=1):
            try:
                loaded.rows.append(_checked_row(raw))
            except _BadCell as exc:
                loaded.damage.append(f"row {number}: {exc}")
        return loaded
    if not data:
        return loaded
    text = data.decode("utf-8", errors="surrogateescape")  # bad bytes stay visible, per cell
    if not text.endswith("\n"):
        loaded.cut_tail = True
    reader = csv.reader(_io_text(text))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        loaded.damage.append("no header row")
        return loaded
    if "key" not in header:
        raise _not_results(name)
    records: list[list[str]] = []
    try:
        records.extend(reader)
    except csv.Error as exc:
        loaded.damage.append(f"line {reader.line_num}: {exc}; the rest is not read")
        loaded.cut_tail = False
    if loaded.cut_tail and records:
        records.pop()
        loaded.damage.append("the last row is cut off: no line end")
    for number, record in enumerate(records, start=2):
        if not record:
            continue
        if len(record) != len(header):
            loaded.damage.append(f"row {number}: {len(record)} cells for {len(header)} columns")
            continue
        if any(_SURROGATE.search(cell) for cell in record):
            loaded.damage.append(f"row {number}: not UTF-8")
            continue
        try:
            loaded.rows.append(_checked_row(dict(zip(header, record, strict=True))))
        except _BadCell as exc:
            loaded.damage.append(f"row {number}: {exc}")
    return loaded


_SURROGATE = re.compile("[\udc80-\udcff]")


def _io_text(text: str):
    """``text`` as a file for :mod:`csv` (newlines kept as written)."""
    import io

    return io.StringIO(text, newline="")


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
        If the file cannot be read as a results table, or any of it is damaged (a row that
        does not parse, a cut-off last row, bytes that are not UTF-8): field ``--out``.
    """
    name = os.fspath(path)
    loaded = _load_table(name)
    if loaded.damage:
        raise InputError(
            f"cannot read the results {name!r}: {'; '.join(loaded.damage[:3])}", "--out"
        )
    return loaded.rows


def read_results_frame(path: str | os.PathLike):
    """The results table of a batch (``privopt batch --out``) as a pandas DataFrame.

    Needs pandas (the ``[frames]`` extra). The rows of :func:`read_results`, typed as in
    :data:`BATCH_COLUMNS`, in the columns' order; empty (with those columns) when the file
    does not exist yet.

    Parameters
    ----------
    path : str or path-like
        The ``.csv`` or ``.parquet`` table.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InputError
        As :func:`read_results`.
    """
    from privopt._frames import frame

    rows = read_results(path)
    table = frame(rows, "read_results_frame", list(BATCH_COLUMNS))
    if not rows:
        table = table.reindex(columns=list(BATCH_COLUMNS))
    return table


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


# --- the journal -------------------------------------------------------------------------------
def _load_journal(name: str) -> _Loaded:
    """The rows of a journal (JSON lines) and the damage found; a journal that is not a
    regular file is all damage (nothing is opened: a FIFO never blocks)."""
    loaded = _Loaded()
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return loaded
    except OSError as exc:
        loaded.damage.append(f"cannot be read: {exc.strerror or exc}")
        return loaded
    if not stat.S_ISREG(info.st_mode):
        loaded.damage.append(f"{file_kind(info.st_mode)}, not a regular file")
        return loaded
    data = loaded.read(name)
    if data is None:
        return loaded
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last line end: empty unless a write was cut short
    numbered = list(enumerate(lines, start=1))
    if tail:
        numbered.append((len(lines) + 1, tail))
    for number, line in numbered:
        if not line.strip():
            continue
        try:
            raw = json.loads(line.decode("utf-8"))
            loaded.rows.append(_checked_row(raw))
        except (UnicodeDecodeError, ValueError) as exc:
            if line is tail:
                loaded.cut_tail = True  # a crash mid-write: the line is dropped, not damage
                continue
            what = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else _line_problem(exc)
            loaded.damage.append(f"line {number}: {what}")
    return loaded


def _line_problem(exc: ValueError) -> str:
    return str(exc) if isinstance(exc, _BadCell) else "not a JSON object"


def _set_aside(name: str) -> str:
    """Rename ``name`` to ``name.damaged-<time>`` (a free name) and return the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(1000):
        target = f"{name}.damaged-{stamp}" + (f"-{attempt}" if attempt else "")
        if not os.path.lexists(target):
            os.rename(name, target)
            return target
    raise InputError(f"cannot set aside the damaged {name!r}: too many damaged copies", "--out")


class _Lock:
    """Exclusive turns on an output, with ``fcntl.flock`` on ``OUT.lock`` (no-op without
    ``fcntl``). The lock file is never removed (removing it would let two runs lock two
    different files)."""

    def __init__(self, name: str):
        self.name = name
        self.fd: int | None = None
        if fcntl is None:
            return
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
        flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(name, flags, 0o666)
        except OSError as exc:
            raise InputError(
                f"cannot open the lock file {name!r}: {exc.strerror or exc}; remove it if it "
                "is not a regular file",
                "--out",
            ) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(f"the lock file {name!r} is not a regular file: remove it", "--out")
        self.fd = fd

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock (waits for any other run's turn)."""
        if self.fd is None:
            yield
            return
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _Journal:
    """The shared journal ``OUT.partial``: rows appended in turns (each line written whole,
    then synced), held open with a shared ``flock`` while the run lives, so that a run that
    finishes removes it only when no other run is using it."""

    def __init__(self, name: str, lock: _Lock):
        self.name = name
        self.lock = lock
        self.fd: int | None = None
        self.identity: tuple[int, int] | None = None

    def _open(self) -> None:  # with the lock held
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        flags |= getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.name, flags, 0o666)
        except OSError as exc:
            raise InputError(
                f"cannot write the journal {self.name!r}: {exc.strerror or exc}", "--out"
            ) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise InputError(f"the journal {self.name!r} is not a regular file", "--out")
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)
        self.fd, self.identity = fd, (info.st_dev, info.st_ino)

    def _current(self) -> None:  # with the lock held: follow a journal replaced by another run
        try:
            info = os.stat(self.name)
            same = (info.st_dev, info.st_ino) == self.identity
        except FileNotFoundError:
            same = False
        if self.fd is not None and same:
            return
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self._open()

    def start(self) -> None:
        """Open (create) the journal; call with the lock held."""
        self._current()

    def append(self, rows: list[dict]) -> None:
        """Append rows, whole lines, synced, in this run's turn."""
        with self.lock.held():
            self.append_held(rows)

    def append_held(self, rows: list[dict]) -> None:
        """Append rows, whole lines, synced; call with the lock held."""
        data = b"".join(
            (json.dumps(_normalise(r), allow_nan=True) + "\n").encode("utf-8") for r in rows
        )
        self._current()
        self._end_last_line()
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]
        os.fsync(self.fd)

    def _end_last_line(self) -> None:
        """Make the journal end with a line end before a row is appended (with the lock
        held): a run killed in the middle of its append leaves a cut-off line, which is
        dropped (or, when it is a whole row short of its line end only, ended)."""
        size = os.fstat(self.fd).st_size
        if size == 0:
            return
        if self._read_at(size - 1, 1) == b"\n":
            return
        start, tail = size, b""
        while start > 0:  # back to the last line end
            step = min(start, 1 << 16)
            chunk = self._read_at(start - step, step)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                tail = chunk[cut + 1 :] + tail
                start = start - step + cut + 1
                break
            tail = chunk + tail
            start -= step
        try:
            _checked_row(json.loads(tail.decode("utf-8")))
        except (UnicodeDecodeError, ValueError):
            os.ftruncate(self.fd, start)  # a cut-off row: that problem is solved again
            return
        os.write(self.fd, b"\n")

    def _read_at(self, offset: int, length: int) -> bytes:
        """Bytes of the journal (the file :meth:`_current` checked is ours)."""
        with open(self.name, "rb") as fh:
            fh.seek(offset)
            return fh.read(length)

    def finish(self) -> bool:
        """Remove the journal if no other run holds it (call with the lock held, once its
        rows are in the table); close it either way. Returns whether it was removed."""
        if self.fd is None:
            return False
        removed = False
        try:
            if fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            info = os.stat(self.name)
            if (info.st_dev, info.st_ino) == self.identity:
                os.unlink(self.name)
                removed = True
        except OSError:  # another run holds it (or it is gone): it stays for that run
            pass
        finally:
            self.close()
        return removed

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


@dataclass
class _Damage:
    """A damaged table or journal, set aside."""

    name: str
    moved_to: str | None
    problems: list
    kept: int


def _read_output(out: str, journal: _Journal) -> tuple[dict[str, dict], list[_Damage], list[str]]:
    """With the lock held: every row of the table and the journal by key, damaged files set
    aside (their good rows written to the journal), and notes of cut-off journal lines."""
    damaged: list[_Damage] = []
    notes: list[str] = []
    table = _load_table(out)
    salvage: list[dict] = []
    if table.damage:
        moved = _set_aside(out) if os.path.lexists(out) else None
        damaged.append(_Damage(out, moved, table.damage, len(table.rows)))
        salvage = table.rows  # the table is gone: its rows go to the journal
    log = _load_journal(journal.name)
    if log.damage:
        moved = _set_aside(journal.name)
        damaged.append(_Damage(journal.name, moved, log.damage, len(log.rows)))
    if log.damage or log.cut_tail:
        if log.cut_tail:
            notes.append(
                f"{journal.name}: its last line was cut off (a run stopped while writing "
                "it): that problem is solved again"
            )
        rows = log.rows
        if os.path.lexists(journal.name):  # cut off only: rewrite it without that line
            atomic_write(
                journal.name,
                lambda fh: fh.writelines(json.dumps(r, allow_nan=True) + "\n" for r in rows),
                option="--out",
            )
        elif rows:
            salvage = rows + salvage
    journal.start()
    if salvage:
        journal.append_held(salvage)
    done = _merge(table.rows)
    _merge(log.rows, done)
    return done, damaged, notes


# --- the workers ---------------------------------------------------------------------------------
#: Seconds between two looks of a pool worker at the run's process (without ``pidfd``).
PARENT_POLL_SECONDS = 0.5


def _worker_init(parent: int) -> None:
    """Process-pool initializer: Ctrl-C is handled by the parent only, and the worker ends
    when the run's process ``parent`` does (even killed with SIGKILL), instead of waiting
    forever for work with the pool's forkserver and resource tracker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import threading

    threading.Thread(
        target=_watch_parent, args=(parent,), daemon=True, name="privopt-parent-watch"
    ).start()


def _watch_parent(parent: int) -> None:
    """End this process as soon as process ``parent`` has ended."""
    pidfd = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(parent)  # Linux ≥ 5.3: readable once the process has ended
    if pidfd is not None:
        import select

        select.select([pidfd], [], [])
    else:
        while True:
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                break
            except PermissionError:  # alive, owned by someone else (cannot happen here)
                pass
            time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _new_pool(workers: int) -> cf.ProcessPoolExecutor:
    import multiprocessing

    # not fork: this process may hold threads (a solver's time-limit worker, a progress bar)
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(),),
    )


def _stop_pool(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a pool now: running tasks are abandoned."""
    for process in list(getattr(pool, "_processes", {}).values()):
        with contextlib.suppress(Exception):
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


@contextlib.contextmanager
def _client(scheduler: str) -> Iterator[Any]:
    """A Dask client of ``scheduler``, closed on the way out."""
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


#: Times a problem may be running when its process pool breaks before it is recorded as an
#: error (a problem that kills its worker, e.g. by running out of memory, is not retried
#: forever; one that only shared a pool with it is solved again).
MAX_POOL_BREAKS = 2


def _solve_in_pool(
    tasks: list[tuple],
    workers: int,
    record: Callable[[dict], None],
    say: Callable[[str], None],
) -> None:
    """Solve ``tasks`` (``(path, key, data, files, solver, time_limit)``) in a process pool,
    recording each row.

    A pool whose worker dies is replaced and its unfinished problems resubmitted; the
    problems that may have been running then (the first ``workers`` unfinished ones, in the
    order the pool runs them) are charged one break, and a problem charged
    :data:`MAX_POOL_BREAKS` times is recorded as an error.
    """
    breaks = [0] * len(tasks)
    queue = list(range(len(tasks)))  # unfinished tasks, in submission order
    while queue:
        pool = _new_pool(workers)
        futures: dict[cf.Future, int] = {}
        finished: set[int] = set()
        broken = False
        try:
            for index in queue:
                path, key, data, files, solver, time_limit = tasks[index]
                future = pool.submit(solve_problem_data, data, path, key, solver, time_limit, files)
                futures[future] = index
            for future in cf.as_completed(futures):
                index = futures[future]
                try:
                    row = future.result()
                except cf.BrokenExecutor:
                    broken = True
                    continue
                except Exception as exc:  # noqa: BLE001 - a row that could not come back
                    path, key = tasks[index][:2]
                    row = _error_row(key, path, exc)
                record(row)
                finished.add(index)
        except BaseException:
            _stop_pool(pool)
            raise
        queue = [i for i in queue if i not in finished]
        if not broken:
            pool.shutdown(wait=True)
            return
        _stop_pool(pool)
        say(f"a worker process died: a new pool solves the {len(queue)} unfinished problem(s)")
        for index in queue[:workers]:  # those that may have been running
            breaks[index] += 1
            if breaks[index] >= MAX_POOL_BREAKS:
                path, key = tasks[index][:2]
                lost = RuntimeError(
                    f"its worker process died each of the {breaks[index]} times it ran "
                    "(killed, or out of memory?)"
                )
                record(_error_row(key, path, lost, "worker lost"))
        queue = [i for i in queue if breaks[i] < MAX_POOL_BREAKS]


def _solve_on(
    executor: Any,
    tasks: list[tuple],
    record: Callable[[dict], None],
) -> None:
    """Solve ``tasks`` on a Dask client (or any executor), recording each row; a task whose
    worker was lost (after the scheduler's retries) is recorded as an error."""
    from privopt.solve.executors import resolve_executor

    pool = resolve_executor(executor)
    futures = {}
    try:
        for task in tasks:
            path, key, data, files, solver, time_limit = task
            futures[pool.submit(solve_problem_data, data, path, key, solver, time_limit, files)] = (
                path,
                key,
            )
        for future in cf.as_completed(futures):
            path, key = futures[future]
            try:
                row = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker (KilledWorker), say
                row = _error_row(key, path, exc, "worker lost")
            record(row)
    finally:
        for future in futures:
            future.cancel()


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
    set_aside : list of dict
        Each damaged table or journal found: ``name``, ``moved_to`` (its new name, or
        ``None`` when it could not be kept), ``problems`` (what was wrong) and ``kept`` (how
        many of its rows were read and kept).
    journal_kept : bool
        Whether ``OUT.partial`` was left for another run still using it.
    """

    out: str
    files: int = 0
    skipped: int = 0
    solved: int = 0
    errors: list = field(default_factory=list)
    interrupted: bool = False
    statuses: dict = field(default_factory=dict)
    set_aside: list = field(default_factory=list)
    journal_kept: bool = False


def _report_damage(damaged: list[_Damage], summary: BatchSummary, say) -> None:
    for d in damaged:
        summary.set_aside.append(
            {"name": d.name, "moved_to": d.moved_to, "problems": list(d.problems), "kept": d.kept}
        )
        where = f"set aside as {d.moved_to}" if d.moved_to else "left out"
        more = f" (and {len(d.problems) - 3} more)" if len(d.problems) > 3 else ""
        say(
            f"{d.name} is damaged ({'; '.join(d.problems[:3])}{more}): {where}; "
            f"its {d.kept} readable row(s) are kept"
        )


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
        Receives one line of progress per finished problem, and a line for each damaged
        table or journal set aside (the CLI prints them on stderr).

    Returns
    -------
    BatchSummary

    Raises
    ------
    InputError
        A bad output path or option, a missing input path, an output that is not a results
        table.
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
    summary = BatchSummary(out=out, files=len(files))
    say = report or (lambda line: None)

    todo: list[tuple[str, str, Any, Any]] = []  # (path, key, data or the read error, files)
    cache: dict = {}
    for path in files:
        try:
            data = read_toml(path)
            referenced = read_referenced_files(data, path, cache)
            key = problem_key(data, referenced)
        except InputError as exc:
            digest = hashlib.sha256(f"{path}\n{exc}".encode()).hexdigest()[:9]
            data, referenced, key = exc, None, f"unreadable-{digest}"
        todo.append((path, key, data, referenced))

    real = os.path.realpath(out)
    lock = _Lock(real + ".lock")
    journal = _Journal(real + ".partial", lock)
    try:
        with lock.held():
            done, damaged, notes = _read_output(out, journal)
        _report_damage(damaged, summary, say)
        for note in notes:
            say(note)
        if retry_errors:
            done = {k: r for k, r in done.items() if r.get("status") != "error"}
        queued: set[str] = set()
        pending = []
        for path, key, data, referenced in todo:
            if key in done or key in queued:
                summary.skipped += 1
                continue
            queued.add(key)
            pending.append((path, key, data, referenced))
        if summary.skipped:
            say(f"{summary.skipped} of {len(files)} problem(s) already in the results: skipped")
        _solve_all(pending, journal, summary, say, workers, scheduler, solver, time_limit)
        with lock.held():
            table = _load_table(out)
            damaged = []
            if table.damage:  # damaged since the start: set aside, its rows kept
                moved = _set_aside(out) if os.path.lexists(out) else None
                damaged.append(_Damage(out, moved, table.damage, len(table.rows)))
            log = _load_journal(journal.name)
            if log.damage:  # damaged by something else meanwhile: kept aside, not removed
                damaged.append(
                    _Damage(journal.name, _set_aside(journal.name), log.damage, len(log.rows))
                )
            rows = _merge(log.rows, _merge(table.rows)).values()
            _write_table(out, sorted(rows, key=lambda r: (r.get("file") or "", r["key"])))
            summary.journal_kept = not journal.finish()
        _report_damage(damaged, summary, say)
    except KeyboardInterrupt:
        summary.interrupted = True
        raise
    finally:
        journal.close()
        lock.close()
    return summary


def _solve_all(
    pending: list[tuple],
    journal: _Journal,
    summary: BatchSummary,
    say: Callable[[str], None],
    workers: int,
    scheduler: str | None,
    solver: str | None,
    time_limit: float | None,
) -> None:
    """Solve the pending problems, appending each row to the journal as it finishes."""
    total = len(pending)

    def record(row: dict) -> None:
        journal.append([row])
        summary.solved += 1
        status = row.get("status") or "error"
        summary.statuses[status] = summary.statuses.get(status, 0) + 1
        if status == "error":
            summary.errors.append(row)
        seconds = row.get("wall_time_s")
        timing = f" in {seconds:.2f} s" if isinstance(seconds, float) else ""
        detail = f": {row.get('message')}" if status == "error" else ""
        say(f"[{summary.solved}/{total}] {row['file']}: {status}{timing}{detail}")

    for path, key, data, _ in pending:
        if isinstance(data, InputError):
            record(_error_row(key, path, data))
    tasks = [
        (path, key, data, referenced, solver, time_limit)
        for path, key, data, referenced in pending
        if not isinstance(data, InputError)
    ]
    if not tasks:
        return
    if scheduler:
        with _client(scheduler) as client:
            _solve_on(client, tasks, record)
    elif workers > 1:
        _solve_in_pool(tasks, workers, record, say)
    else:
        for path, key, data, referenced, solver_, limit in tasks:
            record(solve_problem_data(data, path, key, solver_, limit, referenced))


def print_line(line: str) -> None:
    """Write one progress line to stderr (flushed).

    Parameters
    ----------
    line : str
    """
    print(f"privopt batch: {line}", file=sys.stderr, flush=True)
