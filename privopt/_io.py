"""Safe file input and atomic file output for the command line and the file loaders.

Reading (:func:`read_input_file`, :func:`check_toml_text`)
    Only regular files are read (a FIFO, a device such as ``/dev/zero`` or a directory is
    refused before a byte is read, and a FIFO never blocks the open), at most
    :func:`max_file_bytes` bytes of them (:data:`DEFAULT_MAX_FILE_BYTES`, 16 MiB, unless the
    environment variable ``PRIVOPT_MAX_FILE_BYTES`` says otherwise). TOML text is pre-scanned
    before :mod:`tomllib` sees it, so that pathological documents are refused with a clear
    :class:`~privopt.errors.InputError` instead of a hang, gigabytes of memory or a
    ``RecursionError``: arrays and inline tables nested more than :data:`MAX_TOML_NESTING`
    deep, dotted keys or table headers of more than :data:`MAX_TOML_KEY_PARTS` parts, and
    more than :data:`MAX_TOML_KEYS` keys and table headers in one file. (tomllib keeps every
    prefix of a dotted key: a 60 KB key ``a.a.a…a = 1`` of 30,000 parts costs it 3.5 GB.)

Writing (:func:`atomic_write`, :func:`check_output_path`)
    Every output is written to a temporary file in the folder of its target, flushed to disk
    and renamed over the target with :func:`os.replace`, so that the target is either the old
    file or the complete new one, never a truncated mix (a full disk, an exception or Ctrl-C
    half-way leave the old file as it was and remove the temporary file).

Messages (:func:`escape_text`)
    Control characters (ANSI escapes, ``\\r``, bidirectional overrides…) read from a file are
    shown as Python-style escapes in human-readable output, so that a title cannot clear the
    screen or forge a line of the report.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "MAX_FILE_BYTES_ENV",
    "MAX_TOML_NESTING",
    "MAX_TOML_KEY_PARTS",
    "MAX_TOML_KEYS",
    "max_file_bytes",
    "read_input_file",
    "decode_text",
    "check_toml_text",
    "check_output_path",
    "same_output",
    "atomic_write",
    "atomic_stream",
    "escape_text",
    "json_number",
    "file_kind",
]

import contextlib
import errno
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import numpy as np

from privopt.errors import InputError

#: Largest input file read by default (bytes): 16 MiB, a dense 1000 × 1000 matrix and more.
DEFAULT_MAX_FILE_BYTES = 16 * 2**20
#: Environment variable that overrides :data:`DEFAULT_MAX_FILE_BYTES` (a number of bytes).
MAX_FILE_BYTES_ENV = "PRIVOPT_MAX_FILE_BYTES"
#: Deepest nesting of arrays and inline tables in a TOML file (a matrix needs 2).
MAX_TOML_NESTING = 32
#: Most parts of one dotted key or table header (``[reference.leakage]`` has 2).
MAX_TOML_KEY_PARTS = 16
#: Most keys plus table headers in one TOML file (a problem file has a few dozen).
MAX_TOML_KEYS = 10_000


# --- reading ---------------------------------------------------------------------------------
def max_file_bytes() -> int:
    """The size limit of input files, in bytes.

    Returns
    -------
    int
        ``PRIVOPT_MAX_FILE_BYTES`` when set (a positive integer), else
        :data:`DEFAULT_MAX_FILE_BYTES`.

    Raises
    ------
    InputError
        If the environment variable is set to something other than a positive integer.
    """
    raw = os.environ.get(MAX_FILE_BYTES_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_FILE_BYTES
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise InputError(
            f"expected a positive whole number of bytes, got {raw!r}", MAX_FILE_BYTES_ENV
        )
    return value


#: What a file that is not a regular one is, by its ``st_mode`` test.
_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str | None:
    """What a non-regular file is, for messages.

    Parameters
    ----------
    mode : int
        An ``st_mode`` (of :func:`os.stat`, or of :func:`os.lstat`, which sees links).

    Returns
    -------
    str or None
        ``None`` for a regular file, else e.g. ``"a directory"`` or ``"a named pipe (FIFO)"``.
    """
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _FILE_KINDS if test(mode)), "a special file")


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _too_big(name: str, size: str, limit: int) -> InputError:
    return InputError(
        f"{name}: the file is {size}, more than the limit of {_size_text(limit)}; if it is "
        f"genuine, raise the limit with the environment variable {MAX_FILE_BYTES_ENV}="
        "<bytes>",
        code="file_too_large",
    )


def _unreadable(name: str, exc: OSError) -> InputError:
    """A file that cannot be opened or read: ``missing_file`` when it does not exist."""
    code = "missing_file" if isinstance(exc, FileNotFoundError) else "unreadable_file"
    return InputError(f"{name}: cannot read the file: {exc.strerror or exc}", code=code)


def _not_regular(name: str, kind: str) -> InputError:
    return InputError(
        f"{name}: is {kind}, not a regular file; privopt reads only files",
        code="not_a_regular_file",
    )


def read_input_file(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """Read a whole regular file, refusing anything that could block or never end.

    The file is opened with ``O_NONBLOCK`` (a FIFO opens at once instead of waiting for a
    writer) and checked with ``fstat`` on the open descriptor (no race between the check and
    the read); at most ``limit + 1`` bytes are ever read.

    Parameters
    ----------
    path : str or path-like
        The file.
    limit : int, optional
        Largest accepted size in bytes (default :func:`max_file_bytes`).

    Returns
    -------
    bytes
        The content of the file.

    Raises
    ------
    InputError
        ``"<path>: …"`` when the file is missing (code ``"missing_file"``) or unreadable
        (``"unreadable_file"``), is not a regular file (a directory, a FIFO, a device:
        ``"not_a_regular_file"``), or is larger than ``limit`` (``"file_too_large"``). Its
        ``field`` is ``None``: callers that know the key name it.
    """
    name = os.fspath(path)
    limit = max_file_bytes() if limit is None else int(limit)
    try:
        kind = file_kind(os.stat(name).st_mode)  # refuse devices without opening them
    except OSError as exc:
        raise _unreadable(name, exc) from None
    if kind is not None:
        raise _not_regular(name, kind)
    flags = os.O_RDONLY
    for extra in ("O_NONBLOCK", "O_NOCTTY", "O_BINARY", "O_CLOEXEC"):
        flags |= getattr(os, extra, 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise _unreadable(name, exc) from None
    try:
        info = os.fstat(fd)
        kind = file_kind(info.st_mode)
        if kind is not None:  # replaced between the stat and the open
            raise _not_regular(name, kind)
        if info.st_size > limit:
            raise _too_big(name, _size_text(info.st_size), limit)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:  # the file grew while it was read
            raise _too_big(name, f"more than {_size_text(limit)}", limit)
        return b"".join(chunks)
    except OSError as exc:
        raise _unreadable(name, exc) from None
    finally:
        os.close(fd)


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text of a file, without a leading byte-order mark and with ``\\n`` line ends.

    Parameters
    ----------
    data : bytes
        The content of the file.
    name : str
        The file, for messages.

    Returns
    -------
    str
        The text; a UTF-8 byte-order mark (``EF BB BF``, written by some Windows editors) is
        dropped and ``\\r\\n`` becomes ``\\n``.

    Raises
    ------
    InputError
        If the bytes are not UTF-8 (code ``"not_utf8"``; the message gives the line and
        column).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"{name}: not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, column "
            f"{column} ({exc.reason}); save the file as UTF-8",
            code="not_utf8",
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


# Strings and comments of TOML, in the order tomllib tries them (multi-line delimiters first).
_TOML_SKIP = re.compile(
    r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*""""{0,2}'
    r"|'''.*?''''{0,2}"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\n]*'"
    r"|#[^\n]*",
    re.DOTALL,
)
_BARE = r"[A-Za-z0-9_-]+"
# MAX_TOML_KEY_PARTS + 1 parts or more; each part matched atomically (lookahead + backreference)
# and only from the start of a token, so that the search stays linear on long tokens
_LONG_KEY = re.compile(
    rf"(?<![A-Za-z0-9_-])(?:(?=(?P<part>{_BARE}))(?P=part)[ \t]*\.[ \t]*)"
    rf"{{{MAX_TOML_KEY_PARTS},}}{_BARE}"
)


_LINE_BRACKET = re.compile(r"(?m)^[ \t]*\[")
# classes of the characters of blanked TOML: key characters and blanks (0), '.', other
# structure ('=', ',', line ends…), opening and closing brackets
_KEYCHAR, _DOT, _OTHER, _OPEN, _CLOSE = 0, 1, 2, 3, 4
_CHAR_KIND = np.full(256, _OTHER, dtype=np.uint8)
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_- \t":
    _CHAR_KIND[_c] = _KEYCHAR
_CHAR_KIND[ord(".")] = _DOT
_CHAR_KIND[[ord("["), ord("{")]] = _OPEN
_CHAR_KIND[[ord("]"), ord("}")]] = _CLOSE
del _c


def _blank(match: re.Match) -> str:
    """A string or comment replaced by a bare-key token of the same length (lines kept)."""
    text = match.group()
    if text.startswith("#"):
        return " " * len(text)
    if "\n" not in text:
        return "_" * len(text)
    return re.sub(r"[^\n]", "_", text)


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def check_toml_text(text: str, name: str) -> None:
    """Refuse TOML text that would make :mod:`tomllib` hang, swell or overflow its stack.

    A linear pre-scan: strings and comments are blanked out (with the same lexical rules as
    tomllib), then the nesting depth of ``[``/``{``, the parts of every dotted key and table
    header, and the number of keys and table headers are checked against
    :data:`MAX_TOML_NESTING`, :data:`MAX_TOML_KEY_PARTS` and :data:`MAX_TOML_KEYS`.

    Parameters
    ----------
    text : str
        The document (as given to :func:`tomllib.loads`).
    name : str
        The file, for messages.

    Raises
    ------
    InputError
        ``"<path>: …"`` naming the limit that is exceeded and where.
    """
    bare = _TOML_SKIP.sub(_blank, text)
    code = np.frombuffer(bare.encode("ascii", errors="replace"), dtype=np.uint8)
    kind = _CHAR_KIND[code]

    # dotted keys: a stretch without structural characters that holds too many dots is checked
    # with the exact pattern (floats hold one dot per stretch, so this is rare and cheap)
    breaks = np.flatnonzero(kind == _OTHER)
    dots = np.flatnonzero(kind == _DOT)
    if dots.size >= MAX_TOML_KEY_PARTS:
        stretch = np.searchsorted(breaks, dots)  # dots in the same stretch share this index
        counts = np.bincount(stretch)
        for k in np.flatnonzero(counts >= MAX_TOML_KEY_PARTS):
            lo = int(breaks[k - 1]) + 1 if k > 0 else 0
            hi = int(breaks[k]) if k < breaks.size else len(bare)
            long_key = _LONG_KEY.search(bare, lo, hi)
            if long_key is not None:
                parts = long_key.group().count(".") + 1
                raise InputError(
                    f"{name}: a dotted key or table header of {parts} parts at "
                    f"{_line_col(text, long_key.start())}: the limit is {MAX_TOML_KEY_PARTS} "
                    "parts (problem files need at most 3)"
                )

    # nesting: the running depth over the brackets only
    brackets = np.flatnonzero(kind >= _OPEN)
    depth = np.cumsum(np.where(kind[brackets] == _OPEN, 1, -1), dtype=np.int64)
    if depth.size and depth.max() > MAX_TOML_NESTING:
        pos = int(brackets[np.argmax(depth > MAX_TOML_NESTING)])
        raise InputError(
            f"{name}: arrays or inline tables nested more than {MAX_TOML_NESTING} deep at "
            f"{_line_col(text, pos)}: the limit is {MAX_TOML_NESTING} levels (a matrix "
            "needs 2)"
        )

    # keys (one '=' each) and table headers (a '[' opening a line outside every array)
    n_keys = int(np.count_nonzero(code == ord("=")))
    if n_keys <= MAX_TOML_KEYS:
        heads = np.array([m.end() - 1 for m in _LINE_BRACKET.finditer(bare)], dtype=np.int64)
        if heads.size:
            before = np.searchsorted(brackets, heads)  # brackets strictly before each '['
            outside = np.where(before > 0, depth[np.maximum(before - 1, 0)], 0) == 0
            n_keys += int(np.count_nonzero(outside))
    if n_keys > MAX_TOML_KEYS:
        raise InputError(
            f"{name}: more than {MAX_TOML_KEYS} keys and table headers: the limit is "
            f"{MAX_TOML_KEYS} (a problem file has a few dozen; put long lists of numbers in "
            "arrays)"
        )


# --- writing ---------------------------------------------------------------------------------
def check_output_path(
    path: str | os.PathLike,
    option: str,
    *,
    extensions: Iterable[str] | None = None,
    inputs: Iterable[str | os.PathLike | None] = (),
) -> str:
    """Check, before any work is done, that an output can be written where asked.

    Parameters
    ----------
    path : str or path-like
        The output file.
    option : str
        The option that named it (``"--out"``, ``"--csv"``, ``"--plot"``), for messages.
    extensions : iterable of str, optional
        Accepted extensions, lower case with the dot (e.g. ``(".png", ".pdf", ".svg")``).
    inputs : iterable of str or path-like
        Files the command reads: an output may not overwrite one of them.

    Returns
    -------
    str
        The path as a string.

    Raises
    ------
    InputError
        Naming ``option``: unknown extension, missing folder, folder not writable, the path is
        a directory or a special file (FIFO, device, socket), it names a stream of this
        process (``/dev/stdout``, ``/dev/fd/*``, ``/proc/*/fd/*``, or the file that standard
        output or error is redirected to), or it is one of ``inputs``.
    """
    name = os.fspath(path)
    if extensions is not None:
        allowed = tuple(extensions)
        ext = os.path.splitext(name)[1].lower()
        if ext not in allowed:
            what = f"unknown extension {ext!r}" if ext else f"no extension in {name!r}"
            raise InputError(f"{what}: use {_or_list(allowed)}", option)
    stream = _standard_stream(name)
    if stream is not None:
        hint = "; --json prints the table on stdout" if option == "--csv" else ""
        raise InputError(
            f"{name!r} is {stream}; privopt writes only regular files (they are replaced "
            f"atomically): give a file name{hint}",
            option,
        )
    real = os.path.realpath(name)
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise InputError(
            f"the folder {os.path.dirname(os.path.abspath(name))!r} does not exist", option
        )
    if os.path.isdir(real):
        raise InputError(f"{name!r} is a directory; give a file name", option)
    for candidate in (name, real):  # what the path leads to, links followed
        try:
            kind = file_kind(os.stat(candidate).st_mode)
        except OSError:  # not there yet
            continue
        if kind is not None:
            raise InputError(
                f"{name!r} is {kind}; privopt writes only regular files (they are replaced "
                "atomically)",
                option,
            )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"cannot write in the folder {folder!r} (permission denied)", option)
    for other in inputs:
        if other is not None and _same_file(real, os.fspath(other)):
            raise InputError(
                f"{name!r} is an input of this command; it would be overwritten", option
            )
    return name


#: Paths that name a file descriptor of a process rather than a file (``/dev/stdout``,
#: ``/dev/fd/1``, ``/proc/self/fd/1``, ``/proc/<pid>/fd/<n>``, ``/proc/<pid>/task/<t>/fd/<n>``).
_DESCRIPTOR_PATH = re.compile(
    r"^/(?:dev/(?:fd(?:/|$)|std(?:in|out|err)$)|proc/[^/]+/(?:task/[^/]+/)?fd(?:/|$))"
)
_STREAMS = (
    (1, "this process's standard output"),
    (2, "this process's standard error"),
    (0, "this process's standard input"),
)


def _link_chain(name: str, hops: int = 40) -> list[str]:
    """``name`` (absolute) and every path its symbolic links lead through, each with the
    folders above it resolved (``/dev/stdout`` → ``/proc/self/fd/1`` → the file of fd 1)."""
    path = os.path.abspath(name)
    chain = [path]
    for _ in range(hops):
        resolved = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        if resolved != path:
            chain.append(resolved)
        try:
            target = os.readlink(resolved)
        except OSError:  # not a link (or gone): the end of the chain
            break
        path = os.path.normpath(os.path.join(os.path.dirname(resolved), target))
        chain.append(path)
    return chain


def _standard_stream(name: str) -> str | None:
    """What ``name`` is when it stands for a stream of this process rather than a file (a
    ``/dev/fd``, ``/proc/*/fd`` or ``/dev/std*`` path, or the very file or pipe that is this
    process's standard input, output or error), else ``None``."""
    for path in _link_chain(name):
        if _DESCRIPTOR_PATH.match(path):
            return "a file descriptor path (a stream such as stdout, not a file)"
    try:
        info = os.stat(name)  # links followed: the file the path leads to
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):  # a device, FIFO…: refused for what it is
        return None
    for fd, what in _STREAMS:
        try:
            other = os.fstat(fd)
        except OSError:  # closed
            continue
        if (info.st_dev, info.st_ino) == (other.st_dev, other.st_ino):
            return what
    return None


def _or_list(items: tuple[str, ...]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def same_output(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when two output paths name the same file (after links and ``..``).

    Parameters
    ----------
    a, b : str or path-like
        The paths.

    Returns
    -------
    bool
    """
    return _same_file(os.path.realpath(os.fspath(a)), os.fspath(b))


def _default_mode() -> int:
    """Permissions of a newly created file under the current umask (``0o666 & ~umask``)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_folder(folder: str) -> None:
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_stream(
    path: str | os.PathLike,
    *,
    binary: bool = False,
    newline: str | None = None,
    temp_path: str | os.PathLike | None = None,
    keep_on_error: bool = False,
) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success, flush it and rename it over ``path``.

    Parameters
    ----------
    path : str or path-like
        The target. Links are followed: the file they point to is replaced.
    binary : bool
        Open the temporary file in binary mode (else UTF-8 text).
    newline : str, optional
        As for :func:`open` in text mode (``""`` for :mod:`csv`).
    temp_path : str or path-like, optional
        A fixed name for the temporary file (e.g. ``path + ".partial"``) instead of a unique
        hidden one; it must be in the same folder as ``path``.
    keep_on_error : bool
        On an exception (including ``KeyboardInterrupt``), keep the temporary file (flushed)
        instead of removing it; ``path`` is left untouched either way.

    Yields
    ------
    file object
        The open temporary file.
    """
    target = os.path.realpath(os.fspath(path))
    folder = os.path.dirname(target)
    if temp_path is None:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder
        )
    else:
        tmp = os.fspath(temp_path)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o666)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except OSError:
        mode = _default_mode()
    fh = os.fdopen(
        fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": newline})
    )
    try:
        with contextlib.suppress(OSError):
            os.chmod(tmp, mode)
        yield fh
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(Exception):
            if keep_on_error:
                fh.flush()
            fh.close()
        if not keep_on_error:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    _fsync_folder(folder)


def atomic_write(
    path: str | os.PathLike,
    writer: Callable[[IO[Any]], object],
    *,
    binary: bool = False,
    newline: str | None = None,
    option: str | None = None,
) -> str:
    """Write a file atomically: ``writer(fh)`` fills a temporary file that replaces ``path``.

    Parameters
    ----------
    path : str or path-like
        The target (an existing file is replaced only once the new one is complete).
    writer : callable
        Called with the open temporary file (text, or binary when ``binary``).
    binary : bool
        Binary mode (e.g. :func:`numpy.savez`, :meth:`matplotlib.figure.Figure.savefig`).
    newline : str, optional
        As for :func:`open` in text mode (``""`` for :mod:`csv`).
    option : str, optional
        When given, an :class:`OSError` (e.g. a full disk) becomes an
        :class:`~privopt.errors.InputError` naming this option.

    Returns
    -------
    str
        ``path`` as a string.

    Raises
    ------
    InputError
        If writing fails and ``option`` is given; the old file is intact.
    """
    name = os.fspath(path)
    try:
        with atomic_stream(name, binary=binary, newline=newline) as fh:
            writer(fh)
    except OSError as exc:
        if option is None:
            raise
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            reason = "no space left on the device"
        raise InputError(
            f"cannot write {name!r}: {reason} (an existing file is unchanged)", option
        ) from None
    return name


# --- messages --------------------------------------------------------------------------------
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape_char(match: re.Match) -> str:
    char = match.group()
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(text: object) -> str:
    """``str(text)`` with control characters shown as escapes (``\\x1b``, ``\\n``, ``\\u202e``).

    For human-readable output of text that comes from a file (titles, labels, keys, messages
    that quote them): terminal escape sequences, carriage returns, line breaks and
    bidirectional overrides are made visible instead of acting on the terminal. Other
    characters, including ε, ⊗ and every printable Unicode character, are kept.

    Parameters
    ----------
    text : object
        Anything; ``str`` is applied first.

    Returns
    -------
    str
    """
    text = str(text)
    return _UNSAFE.sub(_escape_char, text) if _UNSAFE.search(text) else text


def json_number(value):
    """Floats for JSON: ``inf`` and ``nan`` become ``None`` (JSON has no infinity).

    Parameters
    ----------
    value : object
        A number (Python or numpy), ``None``, or anything else.

    Returns
    -------
    bool, int, float, None or object
        numpy booleans, integers and floats as Python ones, a non-finite float as ``None``;
        any other value unchanged.
    """
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value
