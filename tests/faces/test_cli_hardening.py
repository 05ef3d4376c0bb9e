"""Extremes, faults and hostile input (GitHub issue "Extremes, faults and hostile input").

Every test reproduces one reported failure and checks its fix:

* writes are atomic: a full disk or an error half-way through ``--out``, ``--csv``, ``--plot``
  leaves the existing file intact; outputs are checked before any solving;
* input files: FIFOs and devices are refused without blocking, sizes are capped, a UTF-8 BOM
  is accepted, and pathological TOML (dotted keys that make tomllib quadratic, deep nesting,
  too many keys) is refused quickly with a clear message;
* Ctrl-C prints ``privopt: interrupted`` and exits 130, also during start-up, never a
  traceback; an interrupted ``curve --csv`` keeps its rows in ``PATH.partial``;
* ``curve`` refuses absurd point counts; control characters from files are escaped in
  human-readable output; infinite levels print as ``inf``;
* ``Mechanism.sample(labels=True)``.
"""

from __future__ import annotations

import csv
import errno
import json
import math
import os
import signal
import stat
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import privopt._io as pio
from privopt import InputError, Mechanism
from privopt.cli import main
from privopt.io.files import load_mechanism, load_problem

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "problems" / "maximal_leakage.toml"  # single alphabet, 3 symbols: fast
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

GOOD = """
title = "a small PML problem"
[prior]
probs = [0.5, 0.3, 0.2]

[distortion]
kind = "hamming"

[privacy]
notion = "pml"
epsilon = 0.5
"""


def run(capsys, *argv) -> tuple[int, str, str]:
    """Run the CLI in-process; never a traceback on stderr."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return code, captured.out, captured.err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def leftovers(folder: Path, keep: set[str]) -> list[str]:
    """Files in ``folder`` other than ``keep`` (temporary files must not linger)."""
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


class _DiskFull:
    """A file object that accepts ``budget`` bytes, writes part of the next chunk, then fails
    with ENOSPC like a full disk."""

    def __init__(self, fh, budget: int):
        self._fh = fh
        self._left = budget

    def write(self, data):
        if len(data) > self._left:
            self._fh.write(data[: self._left])
            self._left = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self._left -= len(data)
        return self._fh.write(data)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


@pytest.fixture
def disk_full(monkeypatch):
    """Every temporary output file fills the disk after 20 bytes."""
    real_fdopen = os.fdopen

    def fdopen(fd, *args, **kwargs):
        return _DiskFull(real_fdopen(fd, *args, **kwargs), 20)

    monkeypatch.setattr(pio.os, "fdopen", fdopen)


# --- atomic writes ---------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [".json", ".csv", ".npz"])
def test_out_on_a_full_disk_keeps_the_existing_file(tmp_path, capsys, disk_full, ext):
    target = tmp_path / f"mech{ext}"
    target.write_bytes(b"the good old mechanism\n" * 20)
    before = target.read_bytes()
    code, out, err = run(capsys, "solve", SMALL, "--out", target)
    assert code == 2, err
    assert "--out" in err and "no space left" in err and "unchanged" in err
    assert target.read_bytes() == before  # was truncated to a partial file before the fix
    assert leftovers(tmp_path, {target.name}) == []


def test_out_crash_while_writing_keeps_the_existing_file(tmp_path, capsys, monkeypatch):
    """A crash after the output was opened used to leave it truncated to 0 bytes."""
    target = tmp_path / "mech.csv"
    target.write_text("input,a,b\nx,1,0\n", encoding="utf-8")
    calls = []

    real_writer = csv.writer

    class Boom:
        def __init__(self, fh):
            self.writer = real_writer(fh)

        def writerow(self, row):
            calls.append(row)
            if len(calls) == 2:
                raise RuntimeError("crash half-way")
            self.writer.writerow(row)

    # the writer of `solve --out x.csv` (privopt.cli.solve._write_mechanism)
    monkeypatch.setattr("privopt.cli.solve.csv.writer", Boom)
    code, out, err = run(capsys, "solve", SMALL, "--out", target)
    assert code == 3 and "crash half-way" in err
    assert target.read_text(encoding="utf-8") == "input,a,b\nx,1,0\n"
    assert leftovers(tmp_path, {target.name}) == []


def test_plot_on_a_full_disk_keeps_the_existing_figure(tmp_path, capsys, disk_full):
    target = tmp_path / "curve.png"
    target.write_bytes(PNG_MAGIC + b"old figure" * 100)
    before = target.read_bytes()
    code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:3", "--plot", target)
    assert code == 2 and "--plot" in err and "no space left" in err
    assert target.read_bytes() == before
    assert leftovers(tmp_path, {target.name}) == []


def test_curve_csv_on_a_full_disk_keeps_the_existing_table(tmp_path, capsys, disk_full):
    target = tmp_path / "curve.csv"
    target.write_text("old,table\n1,2\n", encoding="utf-8")
    code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:5", "--csv", target)
    assert code == 2 and "--csv" in err and "unchanged" in err
    assert target.read_text(encoding="utf-8") == "old,table\n1,2\n"


def test_outputs_are_checked_before_solving(tmp_path, capsys, monkeypatch):
    from privopt.io.files import ProblemSpec

    def no_solving(*args, **kwargs):
        raise AssertionError("solved before the output was checked")

    monkeypatch.setattr(ProblemSpec, "solve", no_solving)
    monkeypatch.setattr("privopt.solve.sweep", no_solving)
    missing = tmp_path / "no" / "such" / "folder"
    cases = [
        (["solve", SMALL, "--out", missing / "m.json"], "--out", "does not exist"),
        (["solve", SMALL, "--out", tmp_path], "--out", "extension"),
        (["solve", SMALL, "--out", "/dev/null.json"], "--out", "permission"),
        (["curve", SMALL, "--epsilon", "0:1:3", "--csv", missing / "c.csv"], "--csv", "exist"),
        (["curve", SMALL, "--epsilon", "0:1:3", "--csv", tmp_path], "--csv", "directory"),
        (["curve", SMALL, "--epsilon", "0:1:3", "--csv", "/dev/null"], "--csv", "device"),
        (["curve", SMALL, "--epsilon", "0:1:3", "--plot", missing / "c.png"], "--plot", "exist"),
    ]
    if getattr(os, "geteuid", lambda: -1)() == 0:  # root may write in /dev
        cases.pop(2)
    for argv, option, words in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert option in err and words in err, (argv, err)


def test_unwritable_folder_is_refused_before_solving(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if getattr(os, "geteuid", lambda: -1)() == 0:  # root writes anywhere: deny it as for others
        real_access = os.access
        monkeypatch.setattr(
            pio.os, "access", lambda p, mode: False if Path(p) == folder else real_access(p, mode)
        )
    try:
        code, out, err = run(capsys, "solve", SMALL, "--out", folder / "m.json")
        assert code == 2 and "permission denied" in err and out == ""
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


def test_same_path_for_csv_and_plot_is_an_input_error(tmp_path, capsys):
    both = tmp_path / "x.png"
    code, out, err = run(
        capsys, "curve", SMALL, "--epsilon", "0:1:3", "--csv", both, "--plot", both
    )
    assert code == 2 and "--csv" in err and "--plot" in err
    assert not both.exists()


def test_an_output_may_not_overwrite_the_problem_file(tmp_path, capsys):
    problem = write(tmp_path, "p.toml", GOOD)
    code, out, err = run(capsys, "curve", problem, "--epsilon", "0:1:3", "--csv", problem)
    assert code == 2 and "input" in err
    assert problem.read_text(encoding="utf-8") == GOOD


def test_replacing_keeps_permissions_and_links(tmp_path, capsys):
    real = tmp_path / "real.json"
    real.write_text("{}", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, out, err = run(capsys, "solve", SMALL, "--out", link)
    assert code == 0, err
    assert link.is_symlink() and json.loads(real.read_text())["notion"] == "maximal_leakage"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc (Linux)")
def test_stream_paths_are_refused_before_solving(tmp_path, capsys, monkeypatch):
    """``/dev/stdout``, ``/dev/fd/N``, ``/proc/*/fd/N`` and links to them name a stream of the
    process, not a file: refused up front (the atomic rename would replace the file that
    stdout is redirected to, or fail late on a pipe)."""
    from privopt.io.files import ProblemSpec

    def no_solving(*args, **kwargs):
        raise AssertionError("solved before the output was checked")

    monkeypatch.setattr(ProblemSpec, "solve", no_solving)
    monkeypatch.setattr("privopt.solve.sweep", no_solving)
    link = tmp_path / "link.csv"
    link.symlink_to("/dev/stdout")
    folder_link = tmp_path / "fds"
    folder_link.symlink_to("/proc/self/fd")
    curve = ["curve", SMALL, "--epsilon", "0:1:3"]
    cases = [
        ([*curve, "--csv", "/dev/stdout"], "--csv"),
        ([*curve, "--csv", "/dev/stderr"], "--csv"),
        ([*curve, "--csv", "/dev/fd/1"], "--csv"),
        ([*curve, "--csv", "/proc/self/fd/1"], "--csv"),
        ([*curve, "--csv", f"/proc/{os.getpid()}/fd/2"], "--csv"),
        ([*curve, "--csv", link], "--csv"),
        ([*curve, "--csv", folder_link / "1"], "--csv"),
        ([*curve, "--plot", "/dev/fd/1.png"], "--plot"),
        (["solve", SMALL, "--out", "/proc/self/fd/1.json"], "--out"),
    ]
    for argv, option in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert f"privopt: error: {option}: " in err and "file descriptor path" in err, err
        assert "privopt writes only regular files" in err
    with pytest.raises(InputError, match="file descriptor path"):
        pio.check_output_path("/dev/stdout", "path")


@pytest.mark.skipif(os.name != "posix", reason="POSIX redirections")
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_the_file_a_standard_stream_goes_to_is_never_replaced(tmp_path, stream):
    """``privopt curve … --csv out.txt >> out.txt``: out.txt is this process's stdout; it is
    refused (exit 2) instead of being silently replaced by the table."""
    target = tmp_path / "out.txt"
    target.write_text("KEEP\n", encoding="utf-8")
    for name in (target, f"/dev/{stream}"):
        with open(target, "a", encoding="utf-8") as fh:
            proc = subprocess.run(
                [sys.executable, "-c", ENTRY, "curve", str(SMALL), "--epsilon", "0:1:2"]
                + ["--csv", str(name)],
                stdout=fh if stream == "stdout" else subprocess.PIPE,
                stderr=fh if stream == "stderr" else subprocess.PIPE,
                text=True,
                env=_env(),
                timeout=120,
            )
        assert proc.returncode == 2, (name, proc.stderr)
        text = target.read_text(encoding="utf-8")
        assert text.startswith("KEEP\n") and "notion,requested_epsilon" not in text
        err = text if stream == "stderr" else proc.stderr
        if name == target:
            assert f"this process's standard {'output' if stream == 'stdout' else 'error'}" in err
        else:
            assert "file descriptor path" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_atomic_write_helper_removes_its_temporary_file_on_error(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old", encoding="utf-8")

    def writer(fh):
        fh.write("new and half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pio.atomic_write(target, writer)
    assert target.read_text(encoding="utf-8") == "old"
    assert leftovers(tmp_path, {"t.txt"}) == []
    assert pio.atomic_write(target, lambda fh: fh.write("new")) == str(target)
    assert target.read_text(encoding="utf-8") == "new"


# --- hostile input files ---------------------------------------------------------------------
@pytest.fixture
def alarm():
    """Fail instead of hanging if a read blocks (POSIX)."""
    if not hasattr(signal, "SIGALRM"):
        pytest.skip("needs SIGALRM")

    def timeout(signum, frame):
        raise TimeoutError("blocked")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path, capsys, alarm):
    fifo = tmp_path / "problem.toml"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "solve", fifo)  # the alarm fixture ends a blocked read
    assert code == 2 and "named pipe" in err and str(fifo) in err
    code, out, err = run(capsys, "audit", SMALL, "--mechanism", tmp_path / "problem.toml")
    assert code == 2
    fifo_json = tmp_path / "m.json"
    os.mkfifo(fifo_json)
    with pytest.raises(InputError, match="named pipe"):
        load_mechanism(fifo_json)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_and_directories_are_refused(tmp_path, capsys, alarm):
    code, out, err = run(capsys, "solve", "/dev/zero")
    assert code == 2 and "character device" in err
    code, out, err = run(capsys, "solve", tmp_path)
    assert code == 2 and "directory" in err


def test_file_size_limit_and_its_environment_variable(tmp_path, capsys, monkeypatch):
    problem = write(tmp_path, "p.toml", GOOD)
    assert pio.max_file_bytes() == pio.DEFAULT_MAX_FILE_BYTES == 16 * 2**20
    monkeypatch.setenv("PRIVOPT_MAX_FILE_BYTES", "100")
    code, out, err = run(capsys, "solve", problem)
    assert code == 2 and "limit of 100 bytes" in err and "PRIVOPT_MAX_FILE_BYTES" in err
    monkeypatch.setenv("PRIVOPT_MAX_FILE_BYTES", "1_000_000")
    code, out, err = run(capsys, "solve", problem)
    assert code == 0, err
    monkeypatch.setenv("PRIVOPT_MAX_FILE_BYTES", "lots")
    code, out, err = run(capsys, "solve", problem)
    assert code == 2 and "PRIVOPT_MAX_FILE_BYTES" in err and "lots" in err


def test_a_utf8_byte_order_mark_is_accepted(tmp_path, capsys):
    problem = tmp_path / "bom.toml"
    problem.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode("utf-8"))
    code, out, err = run(capsys, "solve", problem, "--json")
    assert code == 0, err  # was "invalid TOML: Invalid statement (at line 1, column 1)"
    assert json.loads(out)["title"] == "a small PML problem"


def test_not_utf8_names_the_line(tmp_path, capsys):
    problem = tmp_path / "latin1.toml"
    problem.write_bytes(GOOD.replace("small", "sm\xe4ll").encode("latin-1"))
    code, out, err = run(capsys, "solve", problem)
    assert code == 2 and "not UTF-8" in err and "line 2" in err


def _dotted(parts: int) -> str:
    return ".".join(["a"] * parts) + " = 1\n"


def test_tomllib_is_quadratic_on_dotted_keys():
    """Why the pre-scan exists: tomllib keeps every prefix of a dotted key, so memory grows as
    the square of its length (measured here on small keys; a 60 KB key of 30,000 parts took
    22 s and 3.5 GB on the development machine)."""
    import tomllib

    peaks = []
    for parts in (1000, 2000):
        tracemalloc.start()
        tomllib.loads(_dotted(parts))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] > 3.0 * peaks[0]  # twice the text, about four times the memory


def test_the_60kb_dotted_key_file_is_refused_quickly(tmp_path, capsys, monkeypatch):
    import privopt.io.files.loader

    problem = write(tmp_path, "dotted.toml", _dotted(30_000))
    assert 59_000 < problem.stat().st_size < 61_000
    parsed = []  # refused before the parser sees it (before the fix: 22 s and 3.5 GB in it)
    real_loads = privopt.io.files.loader.tomllib.loads  # the parser read_toml calls
    monkeypatch.setattr(
        privopt.io.files.loader.tomllib,
        "loads",
        lambda text: parsed.append(len(text)) or real_loads(text),
    )
    small = write(tmp_path, "small.toml", "[prior]\nprobs = [0.5, 0.5]\n")
    load_problem(small, "any")
    assert len(parsed) == 1  # the patch sees every parse
    parsed.clear()
    code, out, err = run(capsys, "solve", problem)
    assert code == 2 and "30000 parts" in err and "limit is 16" in err and str(problem) in err
    assert parsed == []
    monkeypatch.undo()
    # many medium keys, each under the part limit, are capped by the key count
    many = "".join(f"k{i}.{'.'.join(['a'] * 15)} = 1\n" for i in range(10_001))
    with pytest.raises(InputError, match="more than 10000 keys"):
        load_problem(write(tmp_path, "many.toml", many))


@pytest.mark.parametrize(
    "text, words",
    [
        ("x = " + "[" * 2000 + "]" * 2000 + "\n", "nested more than 32"),
        ("x = " + "{a = " * 2000 + "1" + "}" * 2000 + "\n", "nested more than 32"),
        ("[" + ".".join(["t"] * 100) + "]\n", "100 parts"),
        ("".join(f"[t{i}]\n" for i in range(10_001)), "more than 10000 keys"),
        ("x = " + "1" * 5000 + "\n", "invalid TOML"),  # a ValueError inside tomllib
    ],
    ids=["arrays", "inline_tables", "header", "tables", "huge_integer"],
)
def test_pathological_toml_is_an_input_error(tmp_path, capsys, text, words):
    problem = write(tmp_path, "bad.toml", text)
    code, out, err = run(capsys, "solve", problem)
    assert code == 2, err  # was exit 3 "internal error: RecursionError" for deep nesting
    assert words in err and "internal error" not in err


def test_the_pre_scan_ignores_strings_and_comments():
    text = (
        'title = "' + "a." * 40 + "[[[[" * 20 + '"\n'
        "# " + "b." * 40 + "{{{{" * 20 + "\n"
        "what = '''\n" + "c." * 40 + "\n'''\n"
        'labels = ["[0,1)", "[1,2)"]\n' * 40
    )
    pio.check_toml_text(text, "fine.toml")  # no false alarm
    for path in sorted((ROOT / "problems").rglob("*.toml")):
        load_problem(path, "any")


def test_mechanism_files_are_read_safely(tmp_path, monkeypatch):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(InputError, match="deep.json"):
        load_mechanism(deep)
    wide = tmp_path / "wide.csv"
    wide.write_text("input,a\n" + "x," + "1" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="wide.csv"):
        load_mechanism(wide)  # csv.Error (field larger than field limit) was an internal error
    bomb = tmp_path / "bomb.npz"
    np.savez_compressed(bomb, mechanism=np.zeros((1000, 1000)))
    monkeypatch.setenv("PRIVOPT_MAX_FILE_BYTES", "1000000")
    assert bomb.stat().st_size < 1_000_000
    with pytest.raises(InputError, match="unpacks to"):
        load_mechanism(bomb)


# --- Ctrl-C ----------------------------------------------------------------------------------
ENTRY = "import sys; from privopt._entry import main; sys.exit(main())"  # the console script


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")


def _default_sigint() -> None:
    """In the child: Ctrl-C with its default meaning. A test run started as a background job
    of a non-interactive shell inherits SIGINT ignored, and so would every child (Python
    then installs no KeyboardInterrupt handler), which is not what these tests are about."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def sigint_delivered():
    """Ctrl-C delivered in this process too, for the in-process tests (restored after)."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _start(*argv, module: bool = False) -> subprocess.Popen:
    """The console script (``-c ENTRY`` mirrors its wrapper) or ``python -m privopt``."""
    head = ["-m", "privopt"] if module else ["-c", ENTRY]
    return subprocess.Popen(
        [sys.executable, *head, *map(str, argv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=ROOT,
        preexec_fn=_default_sigint,
    )


def _importing_numpy(pid: int) -> bool:
    """Whether the process has loaded numpy's extension: privopt's entry point is then
    importing the command line, its Ctrl-C handler already in place (a Ctrl-C inside the
    interpreter's own start-up, before any privopt code runs, is Python's, not ours)."""
    try:
        with open(f"/proc/{pid}/maps") as fh:
            return "_multiarray_umath" in fh.read()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/maps")
def test_ctrl_c_during_start_up_and_solving_exits_130_without_traceback():
    delays = (0.0, 0.02, 0.05, 0.1, 0.3, 0.8, 2.0)  # importing scipy/cvxpy, then solving
    for i, delay in enumerate(delays):
        proc = _start("curve", SMALL, "--epsilon", "0:2:10000", module=bool(i % 2))
        while not _importing_numpy(proc.pid) and proc.poll() is None:
            time.sleep(0.002)  # no clock: wait for the imports to have begun
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, (delay, proc.returncode, err)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (delay, err)
        assert err.strip().endswith("privopt: interrupted"), (delay, err)


def test_python_dash_m_goes_through_the_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "privopt", "notions", "--json"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'privopt = "privopt._entry:main"' in pyproject


def test_ctrl_c_during_curve_keeps_the_rows_in_a_partial_file(tmp_path):
    target = tmp_path / "curve.csv"
    target.write_text("an older table\n", encoding="utf-8")
    partial = tmp_path / "curve.csv.partial"
    proc = _start("curve", SMALL, "--epsilon", "0:2:10000", "--csv", target)
    deadline = time.monotonic() + 120
    while not partial.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the first checkpoint has written rows
    assert partial.exists(), proc.communicate()
    rows_seen = len(partial.read_text(encoding="utf-8").splitlines()) - 1
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "privopt: interrupted" in err
    assert target.read_text(encoding="utf-8") == "an older table\n"  # never half-written
    with open(partial, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= max(rows_seen, 1) and f"kept the {len(rows)} row(s)" in err
    expected = np.linspace(0, 2, 10000)
    assert [float(r["requested_epsilon"]) for r in rows] == pytest.approx(expected[: len(rows)])
    assert all(r["status"] == "optimal" for r in rows)


def _checkpoint_every_point(monkeypatch) -> None:
    # where the checkpoint gate reads them (privopt.cli only re-exports copies)
    monkeypatch.setattr("privopt.cli.curve.CHECKPOINT_SECONDS", 0.0)
    monkeypatch.setattr("privopt.cli.curve.CHECKPOINT_SETUP_FACTOR", 0.0)


def _sweep_with(monkeypatch, action, at: int) -> None:
    """Patch the sweep so that ``action()`` runs when point number ``at`` is handed out."""
    import privopt.solve

    real = privopt.solve.sweep
    handed = [0]

    def sweep(*args, progress=None, **kwargs):
        def wrapped(values):
            for value in progress(values) if progress else values:
                if handed[0] == at:
                    action()
                handed[0] += 1
                yield value

        return real(*args, progress=wrapped, **kwargs)

    monkeypatch.setattr(privopt.solve, "sweep", sweep)


def test_curve_rows_are_streamed_and_kept_when_the_run_fails(tmp_path, capsys, monkeypatch):
    _checkpoint_every_point(monkeypatch)

    def crash():
        raise RuntimeError("the machine fell over")

    _sweep_with(monkeypatch, crash, at=3)
    target = tmp_path / "curve.csv"
    code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:6", "--csv", target)
    assert code == 3 and "the machine fell over" in err
    assert not target.exists()
    with open(tmp_path / "curve.csv.partial", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["requested_epsilon"]) for r in rows] == pytest.approx([0, 0.2, 0.4])
    assert "kept the 3 row(s)" in err and "curve.csv.partial" in err


def test_first_ctrl_c_finishes_the_point_and_keeps_every_row(
    tmp_path, capsys, monkeypatch, sigint_delivered
):
    _sweep_with(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGINT), at=2)
    target = tmp_path / "curve.csv"
    code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:6", "--csv", target)
    assert code == 130 and "privopt: interrupted" in err
    assert "stopping after the current point" in err
    with open(tmp_path / "curve.csv.partial", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3  # points 0 and 1, and point 2 that was running at the Ctrl-C
    assert not target.exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_complete_curve_renames_the_partial_file(tmp_path, capsys, monkeypatch):
    import privopt.solve

    _checkpoint_every_point(monkeypatch)  # every point its own sweep: same answers
    real, sweeps = privopt.solve.sweep, []
    monkeypatch.setattr(privopt.solve, "sweep", lambda *a, **k: sweeps.append(1) or real(*a, **k))
    target = tmp_path / "curve.csv"
    code, out, err = run(
        capsys, "curve", SMALL, "--epsilon", "0:2:6", "--notions", "pml,ldp", "--csv", target
    )
    assert code == 0, err
    assert len(sweeps) == 12  # one sweep a point: the checkpoints took effect
    assert leftovers(tmp_path, {"curve.csv"}) == []
    with open(target, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["notion"] for r in rows] == ["pml"] * 6 + ["ldp"] * 6
    assert "requested_max_distortion" not in rows[0]
    code, ref, _ = run(
        capsys, "curve", SMALL, "--epsilon", "0:2:6", "--notions", "pml,ldp", "--json"
    )
    for row, record in zip(rows, json.loads(ref), strict=True):
        assert float(row["distortion"]) == pytest.approx(record["distortion"], abs=1e-8)


# --- limits on points ------------------------------------------------------------------------
def test_absurd_point_counts_are_refused_at_once(capsys, monkeypatch):
    import tracemalloc

    import privopt.solve.sweeps

    solved = []  # refused before any point is solved, and before the 10⁷ points are listed
    real = privopt.solve.sweeps.solve_request
    monkeypatch.setattr(
        privopt.solve.sweeps, "solve_request", lambda *a, **k: solved.append(1) or real(*a, **k)
    )
    tracemalloc.start()
    try:
        code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:10000000")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and "--epsilon" in err and "--max-points" in err and "10000000" in err
    assert solved == [] and peak < 16 * 2**20  # 10⁷ points alone would be 80 MB
    monkeypatch.undo()
    code, out, err = run(
        capsys,
        "curve",
        SMALL,
        "--max-distortion",
        "0:1:4",
        "--notions",
        "pml,dp",
        "--max-points",
        "7",
    )
    assert code == 2 and "8 points" in err and "--max-distortion" in err
    code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:3", "--max-points", "0")
    assert code == 2 and "--max-points" in err
    code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:3", "--max-points", "3")
    assert code == 0, err


# --- messages --------------------------------------------------------------------------------
HOSTILE = """
title  = "clear\\u001b[2J\\u001b[H screen\\rstatus      optimal, verified: yes"
source = "bidi \\u202eevil\\u202c"
[prior]
probs  = [0.5, 0.5]
labels = ["a\\u001b[31m", "b\\n"]
[distortion]
kind = "hamming"
[privacy]
notion = "pml"
epsilon = 0.5
"""


def test_control_characters_are_escaped_in_human_output(tmp_path, capsys):
    problem = write(tmp_path, "hostile.toml", HOSTILE)
    code, out, err = run(capsys, "solve", problem)
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "clear\\x1b[2J\\x1b[H screen\\rstatus" in out
    assert "a\\x1b[31m" in out and "b\\n" in out and "\\u202eevil" in out
    assert len([line for line in out.splitlines() if line.startswith("status ")]) == 1
    code, out, err = run(capsys, "solve", problem, "--json")
    data = json.loads(out)
    assert data["title"].startswith("clear\x1b[2J")  # JSON stays exact (escaped by JSON)
    assert data["inputs"] == ["a\x1b[31m", "b\n"]
    code, out, err = run(capsys, "curve", problem, "--epsilon", "0:1:2")
    assert code == 0 and "\x1b" not in out


def test_control_characters_are_escaped_in_error_messages(tmp_path, capsys):
    problem = write(tmp_path, "bad.toml", GOOD + '"\\u001b[2Jkey" = 1\n')
    code, out, err = run(capsys, "solve", problem)
    assert code == 2 and "\x1b" not in err and "\\x1b[2Jkey" in err
    code, out, err = run(capsys, "solve", problem, "--json")
    assert "\x1b[2Jkey" in json.loads(out)["message"]


def test_infinite_levels_print_as_inf_in_solve_and_audit(capsys):
    path = ROOT / "problems" / "pml_uniform_ternary.toml"
    code, out, err = run(capsys, "solve", path)
    assert code == 0
    leak = out[out.index("leakage of this mechanism") :].splitlines()
    ldp = next(line for line in leak if line.strip().startswith("ldp"))
    assert ldp.split()[-1] == "inf"  # was "—", which now only means "missing"
    code, out, err = run(capsys, "solve", path, "--json")
    assert json.loads(out)["leakage"]["ldp"] is None  # JSON has no infinity
    code, out, err = run(capsys, "audit", ROOT / "problems" / "audit" / "pml_example5.toml")
    assert " inf" in out and "—" not in out


def test_plot_needs_a_known_extension(tmp_path, capsys):
    for name, words in (("fig", "no extension"), ("fig.jpg", "'.jpg'"), ("fig.gif", "'.gif'")):
        code, out, err = run(
            capsys, "curve", SMALL, "--epsilon", "0:1:3", "--plot", tmp_path / name
        )
        assert code == 2 and words in err and ".png, .pdf or .svg" in err, err
    assert list(tmp_path.iterdir()) == []
    for ext, magic in ((".png", PNG_MAGIC), (".pdf", b"%PDF"), (".svg", b"<?xml")):
        target = tmp_path / f"fig{ext.upper()}"
        code, out, err = run(capsys, "curve", SMALL, "--epsilon", "0:1:3", "--plot", target)
        assert code == 0, err
        assert target.read_bytes().startswith(magic) and f"wrote the figure to {target}" in out


# --- sampling --------------------------------------------------------------------------------
def test_sample_returns_labels_on_request():
    mech = Mechanism([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], ["x", "y"], ["lo", "mid", "hi"])
    idx = mech.sample(["x", "y", "x"], rng=3)
    assert idx.tolist() == [1, 2, 1] and idx.dtype.kind == "i"
    labels = mech.sample(["x", "y", "x"], rng=3, labels=True)
    assert labels.tolist() == ["mid", "hi", "mid"] and labels.dtype.kind == "U"
    rr = Mechanism([[0.75, 0.25], [0.25, 0.75]], output_labels=["no", "yes"])
    draws = rr.sample(np.zeros(4000, dtype=int), rng=1, labels=True)
    assert set(draws) == {"no", "yes"}
    assert math.isclose((draws == "no").mean(), 0.75, abs_tol=0.03)
    same = rr.sample(np.zeros(10, dtype=int), rng=7)
    assert rr.sample(np.zeros(10, dtype=int), rng=7, labels=True).tolist() == [
        rr.output_labels[i] for i in same
    ]


def test_ctrl_c_swallowed_inside_the_run_still_ends_it_with_130(
    monkeypatch, capsys, sigint_delivered
):
    """A KeyboardInterrupt that Python only reports (raised in an import-system callback)
    must not let the command end with 0: the entry point notes every Ctrl-C."""
    import privopt.cli
    from privopt._entry import main as entry_main

    def swallowing(argv):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
        except KeyboardInterrupt:  # what an "Exception ignored in ..." callback amounts to
            pass
        return 0

    monkeypatch.setattr(privopt.cli, "main", swallowing)
    assert entry_main([]) == 130
    assert capsys.readouterr().err.strip().endswith("privopt: interrupted")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_ctrl_c_reported_by_python_as_unraisable_prints_no_traceback(monkeypatch, capsys):
    """A KeyboardInterrupt raised in a weakref callback (as in the import system's module
    locks) reaches ``sys.unraisablehook``, whose default prints "Exception ignored in" and a
    traceback: the entry point notes it as a Ctrl-C instead, and reports other unraisable
    exceptions as before."""
    import weakref

    import privopt.cli
    from privopt._entry import main as entry_main

    def interrupted_in_a_callback(argv):
        class Thing:
            pass

        def callback(reference):
            raise KeyboardInterrupt

        thing = Thing()
        reference = weakref.ref(thing, callback)
        del thing  # the callback runs here; Python reports what it raised
        assert reference() is None
        return 0

    default_hook = sys.unraisablehook
    monkeypatch.setattr(privopt.cli, "main", interrupted_in_a_callback)
    assert entry_main([]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert err.strip() == "privopt: interrupted"
    assert sys.unraisablehook is default_hook  # restored

    def other_error_in_a_callback(argv):
        class Thing:
            pass

        def callback(reference):
            raise ValueError("not an interrupt")

        thing = Thing()
        reference = weakref.ref(thing, callback)
        del thing
        assert reference() is None
        return 0

    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    monkeypatch.setattr(privopt.cli, "main", other_error_in_a_callback)
    assert entry_main([]) == 0
    assert [type(u.exc_value) for u in reported] == [ValueError]
    assert capsys.readouterr().err == ""
