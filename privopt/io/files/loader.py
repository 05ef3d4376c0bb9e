"""Reading a problem file: the TOML document read safely (:func:`read_toml`), the other files
it names read once (:func:`read_referenced_files`), and its sections validated in turn
(:func:`parse_problem`, :func:`load_problem`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

try:  # Python ≥ 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


from privopt._io import check_toml_text, decode_text, read_input_file
from privopt.errors import InputError

from ._reader import _error, _rewrap
from .distortion import _DistortionSection
from .mechanism import _MechanismSection
from .prior import _PriorSection
from .privacy import _PrivacySection
from .reference import _ReferenceSection
from .spec import ProblemSpec


def load_problem(path: str | os.PathLike, purpose: str = "solve") -> ProblemSpec:
    """Read and validate a problem file.

    Parameters
    ----------
    path : str or path-like
        The TOML file.
    purpose : {"solve", "audit", "any"}
        ``"solve"`` (also ``privopt curve``) needs ``[distortion]`` and ``[privacy]`` with a
        notion and exactly one of ``epsilon`` / ``max_distortion``; ``"audit"`` needs
        ``[mechanism]``, while ``[distortion]`` and ``[privacy]`` are optional; ``"any"`` needs
        only ``[prior]`` (e.g. ``privopt audit FILE --mechanism M``). Whatever is present is
        validated in full in every case.

    Returns
    -------
    ProblemSpec
        The validated contents of the file.

    Raises
    ------
    InputError
        Naming the file, the key and what is wrong.
    """
    name = os.fspath(path)
    data = read_toml(name)
    return parse_problem(data, name, purpose)


def read_toml(path: str | os.PathLike) -> dict:
    """Read a TOML file safely: a regular file of bounded size, checked before parsing.

    Only regular files are read (a FIFO, ``/dev/zero`` or a directory is refused without
    blocking), at most ``PRIVOPT_MAX_FILE_BYTES`` bytes (default 16 MiB); a UTF-8 byte-order
    mark is accepted; documents that would make :mod:`tomllib` swell or overflow its stack
    (dotted keys of more than 16 parts, more than 32 nested arrays, more than 10,000 keys)
    are refused. The limits are the constants of :mod:`privopt._io`.

    Parameters
    ----------
    path : str or path-like
        The TOML file.

    Returns
    -------
    dict
        The parsed document.

    Raises
    ------
    InputError
        ``"<path>: …"``: unreadable, not a regular file, too large, not UTF-8, over a limit,
        or invalid TOML (with the line and column).
    """
    name = os.fspath(path)
    text = decode_text(read_input_file(name), name)
    check_toml_text(text, name)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if name.lower().endswith(".json") or text.lstrip("\ufeff \t\r\n").startswith("{"):
            raise _error(
                name,
                None,
                f"invalid TOML: {exc}. This looks like JSON, but problem files are TOML "
                "(tables such as [prior] with probs = [0.5, 0.5]): see the examples in "
                "docs/problem-files.md, or `privopt demo`",
            ) from None
        raise _error(name, None, f"invalid TOML: {exc}") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise _error(name, None, f"invalid TOML: {exc}") from None
    except (RecursionError, MemoryError):  # the pre-scan should make these unreachable
        raise _error(name, None, "the document is too deeply nested or too large") from None


#: Keys whose string value names another file that a problem file reads (a CSV file, read
#: relative to the problem file's folder): ``[prior] file``, ``[prior.grid] counts_file``,
#: ``[prior.grid] checkins_file``, ``[prior.points] file``, ``points_file`` of
#: ``[prior.grid.outputs]`` and ``[prior.points.outputs]``, ``metric = { file = … }``,
#: ``metric = { edges_file = … }`` and ``neighbors = { file = … }``. The parser reads every
#: one through its ``referenced_text`` (from the files read with the problem when given), so
#: that a batch reads it once, keys the problem by its content and sends that content to the
#: workers.
FILE_KEYS = ("file", "counts_file", "checkins_file", "points_file", "edges_file")


@dataclass(frozen=True)
class ReferencedFile:
    """The content of a file that a problem file names, read once (see
    :func:`read_referenced_files`).

    Attributes
    ----------
    text : str or None
        The file's text (UTF-8, decoded as the parser reads it); ``None`` when it could not
        be read.
    error : str or None
        Why it could not be read (the message a direct read gives), else ``None``.
    digest : str
        SHA-256 of the file's bytes (of the error for an unreadable file): its identity.
    code : str or None
        The error's code (:data:`privopt.errors.INPUT_ERROR_CODES`, as a direct read gives
        it), else ``None``.
    """

    text: str | None
    error: str | None
    digest: str
    code: str | None = None


def referenced_files(data: dict) -> list[str]:
    """The other files a parsed problem file names, as written (sorted, without repeats).

    Every string value of a key of :data:`FILE_KEYS`, at any depth of the document (tables,
    inline tables and arrays of tables).

    Parameters
    ----------
    data : dict
        The parsed TOML document.

    Returns
    -------
    list of str
    """
    found: set[str] = set()
    stack: list[Any] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in FILE_KEYS and isinstance(value, str):
                    found.add(value)
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return sorted(found)


def read_referenced_files(
    data: dict, path: str, cache: dict | None = None
) -> dict[str, ReferencedFile]:
    """Read every file a problem file names, once, into values that travel with it.

    A batch reads the files here and sends their content with the problem (a worker never
    reads a path, and the problem is solved with exactly the content it is keyed by).

    Parameters
    ----------
    data : dict
        The parsed TOML document.
    path : str
        The problem file (relative names are read from its folder, or from the working
        directory when it starts with ``<``).
    cache : dict, optional
        Shared between calls: a file met again (same path, size, modification time) is not
        read again.

    Returns
    -------
    dict
        The name as written → its :class:`ReferencedFile` (an unreadable file is recorded
        with its error, which the parser reports under the key that names it).
    """
    import hashlib

    base = os.path.dirname(os.path.abspath(path)) if not path.startswith("<") else "."
    out: dict[str, ReferencedFile] = {}
    for value in referenced_files(data):
        name = value if os.path.isabs(value) else os.path.join(base, value)
        try:
            info = os.stat(name)
            stamp = (os.path.realpath(name), info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            stamp = None
        if cache is not None and stamp is not None and stamp in cache:
            out[value] = cache[stamp]
            continue
        try:
            raw = read_input_file(name)
            content = ReferencedFile(decode_text(raw, name), None, hashlib.sha256(raw).hexdigest())
        except InputError as exc:
            message = str(exc)
            digest = hashlib.sha256(f"error: {message}".encode()).hexdigest()
            content = ReferencedFile(None, message, digest, exc.code)
        if cache is not None and stamp is not None and content.error is None:
            cache[stamp] = content
        out[value] = content
    return out


def parse_problem(
    data: dict,
    path: str = "<problem>",
    purpose: str = "solve",
    files: dict[str, ReferencedFile] | None = None,
) -> ProblemSpec:
    """Validate an already parsed TOML document (see :func:`load_problem`).

    Parameters
    ----------
    data : dict
        The parsed document.
    path : str
        The name used in messages; relative paths in the document (CSV files) are read from
        its folder, or from the working directory when it starts with ``<``.
    purpose : {"solve", "audit", "any"}
        What the document must contain, as for :func:`load_problem`.
    files : dict, optional
        The files the document names, already read (:func:`read_referenced_files`): then
        nothing is read from disk, and a name missing from ``files`` is an error.

    Returns
    -------
    ProblemSpec
        The validated problem.

    Raises
    ------
    InputError
        Naming ``path``, the key and what is wrong.
    """
    if purpose not in ("solve", "audit", "any"):
        raise ValueError(f"purpose must be 'solve', 'audit' or 'any', got {purpose!r}")
    try:
        return _Parser(path, purpose, files).parse(data)
    except InputError as exc:
        raise _rewrap(path, exc) from None


class _Parser(
    _PriorSection, _DistortionSection, _PrivacySection, _MechanismSection, _ReferenceSection
):
    """A problem file read section by section."""

    def parse(self, data: dict) -> ProblemSpec:
        """The validated problem of a parsed TOML document, section by section."""
        self.check_keys(data, "")
        title = self.string(data, "title", "")
        source = self.string(data, "source", "")
        prior_t = self.table(data, "prior", "")
        if prior_t is None:
            raise self.err(
                "prior", "missing section [prior] (give probs, joint or [prior.database])"
            )
        prior = self.prior(prior_t)
        spec = ProblemSpec(path=self.path, prior=prior, title=title, source=source)
        spec.grid = self.grid
        spec.location = self.location

        priv_raw = data.get("privacy")
        self.privacy_table = priv_raw if isinstance(priv_raw, dict) else None
        dist_t = self.table(data, "distortion", "")
        if dist_t is not None:
            spec.distortion = self.distortion(dist_t, "distortion", prior)
            spec.extra_distortions = self.extras(dist_t, spec.distortion, prior)
        elif self.purpose == "solve":
            raise self.err(
                "distortion",
                'missing section [distortion] (e.g. kind = "hamming"); a design request '
                "needs a distortion to minimise or to bound",
            )

        priv_t = self.table(data, "privacy", "")
        if priv_t is not None:
            self.privacy(priv_t, spec)
        elif self.purpose == "solve":
            raise self.err(
                "privacy", "missing section [privacy] (notion and epsilon or max_distortion)"
            )

        solver_t = self.table(data, "solver", "")
        if solver_t is not None:
            self.solver(solver_t, spec)

        self.audited(data, spec)

        ref_t = self.table(data, "reference", "")
        if ref_t is not None:
            spec.reference = self.reference(ref_t)
        self.request(spec)
        return spec
