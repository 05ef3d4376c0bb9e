"""Problem files: TOML in, a validated :class:`ProblemSpec` out (README: "Problem files").

A problem file says what the designer knows (``[prior]``, ``[distortion]``), what they ask
for (``[privacy]``: a notion and either ``epsilon`` or ``max_distortion``) and optionally how
to solve it (``[solver]``), what the answer must be (``[reference]``) and, for
``privopt audit``, a mechanism to measure (``[mechanism]``). Files are parsed with
:mod:`tomllib` only: no code is executed and nothing is unpickled.

Every problem with a file is an :class:`~privopt.errors.InputError` whose message starts
with the file name and the key at fault, e.g.
``problems/x.toml: prior.probs: sums to 0.9, off by -0.1: …``. The parser checks the shape
and types of what it reads; the values are checked by the same validation as the Python API
(:mod:`privopt.validation`, :func:`privopt.request.prepare_request`), so a mistake gets the
same message in a file and in Python.

Optional keys beyond the basic format (all documented in README.md, "Problem files by example"):

``[prior.database] symbols``
    names of the ``m`` row values (database labels join them).
``[privacy] <option> = …``
    a notion's own options, declared by the notion (e.g. ``priors = [[…], …]``, the finite
    prior class of ``robust_pml``); ``privopt notions`` lists them.
``[privacy] delta = …``
    the δ of the tail and event audits of ``privopt audit`` ((ε,δ)-PML, (ε,δ)-EML,
    δ-approximate max-information, probabilistic DP); with ``epsilon`` the audit also reports
    the least δ at that ε. A design refuses δ > 0: those guarantees are not convex.
``[privacy] observe_secret = true``
    joint priors only: the mechanism sees ``(Y, S)`` (Calmon–Fawaz Remarks 3–4).
``[[distortion.extra]]``
    further budgets ``E[d_k] ≤ budget`` (Calmon–Fawaz Remark 1); each has ``budget`` and a
    distortion given like the main one (``kind``, ``values``, ``matrix``).
``[solver] time_limit``
    seconds for the whole solve, ``≥ 0`` (status ``time_limit`` when reached; ``inf`` or a
    huge number: no limit).
``[mechanism] output_labels``
    names of the mechanism's outputs (audit files).
``[reference] status, least_achievable, leakage, pml_per_output``
    expected outcome of an infeasible request, expected leakage values of the answer (a table
    ``notion = value``), expected PML per output (audit files).
"""

from __future__ import annotations

import csv
import io
import math
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any

try:  # Python ≥ 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

import numpy as np

from privopt._io import check_toml_text, decode_text, max_file_bytes, read_input_file
from privopt.errors import InputError, close_matches
from privopt.model import DatabasePrior, Distortion, JointPrior, Mechanism, Prior
from privopt.model._validate import normalised_weights
from privopt.notions import NOTIONS, get_notion, notion_names, option_owners
from privopt.validation import (
    as_labels,
    as_pmf,
    check_mode,
    check_time_limit,
    check_tolerance,
    neighbor_pairs,
    resolve_neighbors,
)

__all__ = [
    "ProblemSpec",
    "load_problem",
    "parse_problem",
    "check_reference",
    "load_mechanism",
    "read_referenced_files",
    "referenced_files",
    "ReferencedFile",
    "FILE_KEYS",
    "VALID_KEYS",
    "PRIOR_FILE_HEADERS",
]

#: Names of the last column that make the first line of a ``[prior] file`` a header
#: (``label,weight``; case does not matter).
PRIOR_FILE_HEADERS = (
    "weight",
    "weights",
    "count",
    "counts",
    "probability",
    "probabilities",
    "prob",
    "p",
)

#: Keys of the outputs of a map (``[prior.grid.outputs]``, ``[prior.points.outputs]``).
OUTPUT_KEYS = ("rows", "cols", "cell_size", "origin", "points", "points_file")

#: Valid keys of every table (``None``: a sub-table, validated on its own).
VALID_KEYS: dict[str, tuple[str, ...]] = {
    "": (
        "title",
        "source",
        "prior",
        "distortion",
        "privacy",
        "solver",
        "reference",
        "mechanism",
        "composition",
    ),
    "composition": ("first", "adaptive", "then", "parallel"),
    "prior": (
        "probs",
        "labels",
        "joint",
        "secret_labels",
        "database",
        "file",
        "counts",
        "grid",
        "points",
    ),
    "prior.database": ("m", "n", "row_probs", "probs", "symbols"),
    "prior.grid": (
        "rows",
        "cols",
        "cell_size",
        "counts",
        "counts_file",
        "origin",
        "checkins_file",
        "coordinates",
        "columns",
        "bounds",
        "outputs",
    ),
    "prior.grid.outputs": OUTPUT_KEYS,
    "prior.points": ("file", "points", "weights", "coordinates", "columns", "labels", "outputs"),
    "prior.points.outputs": OUTPUT_KEYS,
    "distortion": (
        "kind",
        "values",
        "matrix",
        "output_labels",
        "extra",
        "query",
        "loss",
        "match",
        "metric",
        "power",
    ),
    "distortion.extra": (
        "kind",
        "values",
        "matrix",
        "budget",
        "query",
        "loss",
        "match",
        "metric",
        "power",
    ),
    "privacy": ("notion", "epsilon", "max_distortion", "neighbors", "observe_secret", "delta"),
    "solver": ("name", "tolerance", "time_limit"),
    "reference": (
        "distortion",
        "epsilon",
        "tolerance",
        "what",
        "status",
        "least_achievable",
        "leakage",
        "pml_per_output",
    ),
    "mechanism": ("matrix", "output_labels"),
}

DISTORTION_KINDS = ("hamming", "absolute", "squared", "matrix", "query", "metric")


def notion_option_keys() -> tuple[str, ...]:
    """The ``[privacy]`` keys that some notion declares as an option.

    Returns
    -------
    tuple of str
        The option names of every registered notion, sorted, without repeats.
    """
    return tuple(sorted({o.name for n in NOTIONS.values() for o in n.options}))


#: Default tolerance of a ``[reference]`` comparison.
DEFAULT_REFERENCE_TOLERANCE = 1e-6


@dataclass
class ProblemSpec:
    """A validated problem file.

    Attributes
    ----------
    path : str
        The file as named by the user (used in every message).
    prior : Prior, JointPrior or DatabasePrior
    distortion : Distortion or None
        ``None`` only in audit files without ``[distortion]``.
    notion : str or None
        Canonical notion name (aliases resolved); ``None`` only in audit files.
    epsilon, max_distortion : float or None
        Exactly one is set in a problem file.
    neighbors : str, NeighborRelation or None
        ``"hamming"`` or ``"all"`` as written, or the relation of an edge list, adjacency
        matrix or CSV file; ``None`` = the default of the prior.
    options : dict
        The notion's own options, validated (e.g. ``priors`` of ``robust_pml``).
    delta : float or None
        ``[privacy] delta``: the δ of the tail and event audits ((ε,δ)-PML, (ε,δ)-EML,
        δ-approximate max-information, probabilistic DP); a design refuses δ > 0 (not convex).
    observe_secret : bool
    extra_distortions : list of (Distortion, float)
    solver : str or None
    tolerance : float or None
    time_limit : float or None
        Seconds (``[solver] time_limit``).
    reference : dict
    mechanism : Mechanism or None
    title, source : str or None
    grid : LocationGrid or None
        The map of ``[prior.grid]``.
    location : LocationGrid, LocationPoints or None
        The map of ``[prior.grid]`` or ``[prior.points]`` (its places, prior and outputs).
    composition : dict or None
        ``[composition]`` of an audit file: ``kind`` (``"adaptive"``, ``"then"`` or
        ``"parallel"``), ``first`` (a Mechanism) and ``second`` (the second stage); the
        composed release is :attr:`mechanism`.
    """

    path: str
    prior: Any
    distortion: Distortion | None = None
    notion: str | None = None
    epsilon: float | None = None
    max_distortion: float | None = None
    neighbors: Any = None
    options: dict = field(default_factory=dict)
    delta: float | None = None
    observe_secret: bool = False
    extra_distortions: list = field(default_factory=list)
    solver: str | None = None
    tolerance: float | None = None
    time_limit: float | None = None
    reference: dict = field(default_factory=dict)
    mechanism: Mechanism | None = None
    title: str | None = None
    source: str | None = None
    grid: Any = None
    location: Any = None
    composition: dict | None = None

    @property
    def priors(self) -> list | None:
        """The prior class of ``robust_pml`` (``[privacy] priors``): a list, or ``None`` when
        not given."""
        return self.options.get("priors")

    @property
    def mode(self) -> str | None:
        """What the file asks for: ``"epsilon"`` or ``"max_distortion"`` (a ``str``), or
        ``None`` when it sets neither (an audit file)."""
        if self.epsilon is not None:
            return "epsilon"
        if self.max_distortion is not None:
            return "max_distortion"
        return None

    def neighbors_for(self, notion: str):
        """The neighbour relation to pass for ``notion`` (only dp / identifiability take one).

        Parameters
        ----------
        notion : str
            A notion name or alias.

        Returns
        -------
        str, NeighborRelation or None
            :attr:`neighbors` when the notion uses a neighbour relation, else ``None``.
        """
        return self.neighbors if get_notion(notion).uses_neighbors else None

    def design_kwargs(self, notion: str | None = None) -> dict:
        """Keyword arguments of :func:`privopt.design` / :func:`privopt.sweep` for ``notion``
        (default: the file's), without the level / budget.

        Parameters
        ----------
        notion : str, optional

        Returns
        -------
        dict
        """
        notion = get_notion(notion or self.notion)
        kwargs: dict[str, Any] = {
            "neighbors": self.neighbors_for(notion.name),
            "observe_secret": self.observe_secret,
            "extra_distortions": self.extra_distortions,
        }
        declared = {o.name for o in notion.options}
        kwargs.update({k: v for k, v in self.options.items() if k in declared})
        if self.tolerance is not None:
            kwargs["tol"] = self.tolerance
        if self.delta is not None:
            kwargs["delta"] = self.delta  # refused by the design unless 0 (not convex)
        return kwargs

    def solve(
        self,
        solver: str | None = None,
        raise_on_infeasible: bool = False,
        time_limit: float | None = None,
        on_progress=None,
    ):
        """Solve the file's request with :func:`privopt.design`.

        Parameters
        ----------
        solver : str, optional
            Overrides ``[solver] name``.
        raise_on_infeasible : bool
            Raise instead of returning a result with status ``"infeasible"``.
        time_limit : float, optional
            Overrides ``[solver] time_limit`` (seconds).
        on_progress : callable, optional
            Receives progress events.

        Returns
        -------
        DesignResult
        """
        from privopt.solve import design

        if self.notion is None or self.mode is None or self.distortion is None:
            raise InputError(
                f"{self.path}: privacy: the file has no design request (needs [distortion] and "
                "[privacy] with a notion and epsilon or max_distortion)"
            )
        return design(
            self.prior,
            self.distortion,
            self.notion,
            epsilon=self.epsilon,
            max_distortion=self.max_distortion,
            solver=solver or self.solver,
            raise_on_infeasible=raise_on_infeasible,
            time_limit=time_limit if time_limit is not None else self.time_limit,
            on_progress=on_progress,
            **self.design_kwargs(),
        )


class _CoveringGrid:
    """An output grid given by its cell size alone, made to cover a map whose bounds are known
    only once the map is built (check-ins, places)."""

    def __init__(self, cell_size: float, field: str):
        self.cell_size, self.field = cell_size, field


# --- errors ----------------------------------------------------------------------------------
def _error(
    path: str,
    key: str | None,
    message: str,
    code: str | None = None,
    suggestions: tuple[str, ...] = (),
) -> InputError:
    text = f"{path}: {key}: {message}" if key else f"{path}: {message}"
    err = InputError(text, code=code, suggestions=suggestions)
    err.field = key
    return err


def _rewrap(path: str, exc: InputError) -> InputError:
    """Prefix a model-layer :class:`InputError` (``"field: message"``) with the file name."""
    text = str(exc)
    if text.startswith(f"{path}:"):
        return exc
    err = InputError(f"{path}: {text}", code=exc.code)
    err.field = exc.field
    err.suggestions = exc.suggestions
    return err


# --- parsing ---------------------------------------------------------------------------------
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
                '(tables such as [prior] with probs = [0.5, 0.5]): see "Problem files by '
                'example" in the README (docs/problem-files.md), or `privopt demo`',
            ) from None
        raise _error(name, None, f"invalid TOML: {exc}") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise _error(name, None, f"invalid TOML: {exc}") from None
    except (RecursionError, MemoryError):  # the pre-scan should make these unreachable
        raise _error(name, None, "the document is too deeply nested or too large") from None


#: Keys whose string value names another file that a problem file reads (a CSV file, read
#: relative to the problem file's folder): ``[prior] file``, ``[prior.grid] counts_file``,
#: ``metric = { file = … }`` and ``neighbors = { file = … }``.
FILE_KEYS = ("file", "counts_file")


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
    """

    text: str | None
    error: str | None
    digest: str


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
            content = ReferencedFile(None, message, digest)
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


class _Parser:
    def __init__(self, path: str, purpose: str, files: dict | None = None):
        self.path = path
        self.purpose = purpose
        self.files = files
        self.base = os.path.dirname(os.path.abspath(path)) if not path.startswith("<") else "."
        self.grid = None
        self.location = None
        self.privacy_table: dict | None = None

    # --- files named in a problem file ---------------------------------------------------
    def csv_rows(self, value, key: str) -> list[list[str]]:
        """The rows of a CSV file named by ``key`` (a path relative to the problem file);
        blank lines and lines starting with ``#`` are skipped."""
        if not isinstance(value, str) or not value:
            raise self.err(key, f"expected a path to a CSV file, got {_kind(value)}")
        if self.files is not None:  # read already (a batch): never from disk here
            content = self.files.get(value)
            if content is None:
                raise self.err(key, f"{value}: not among the files read with the problem")
            if content.error is not None:
                raise self.err(key, content.error)
            text = content.text
        else:
            name = value if os.path.isabs(value) else os.path.join(self.base, value)
            try:
                text = decode_text(read_input_file(name), name)
            except InputError as exc:
                raise self.err(key, str(exc)) from None
        try:
            rows = [
                [cell.strip() for cell in row]
                for row in csv.reader(io.StringIO(text, newline=""))
                if row and any(c.strip() for c in row) and not row[0].lstrip().startswith("#")
            ]
        except csv.Error as exc:
            raise self.err(key, f"{value}: not a CSV file: {exc}") from None
        if not rows:
            raise self.err(key, f"{value}: the file holds no rows")
        return rows

    def csv_matrix(self, value, key: str) -> list[list[float]]:
        """A CSV file of numbers (one row per line) as a matrix."""
        rows = self.csv_rows(value, key)
        out = []
        for i, row in enumerate(rows):
            try:
                out.append([csv_number(c) for c in row])
            except ValueError:
                raise self.err(
                    key, f"{value}: line {i + 1} holds {row!r}, expected numbers only"
                ) from None
        if len({len(r) for r in out}) != 1:
            raise self.err(key, f"{value}: rows have different lengths")
        return out

    def err(
        self,
        key: str | None,
        message: str,
        code: str | None = None,
        suggestions: tuple[str, ...] = (),
    ) -> InputError:
        return _error(self.path, key, message, code, suggestions)

    # --- generic checks ----------------------------------------------------------------------
    def check_keys(self, table: dict, section: str) -> None:
        valid = VALID_KEYS[section]
        if section == "privacy":
            valid = valid + notion_option_keys()
        for key in table:
            if key not in valid:
                where = f"{section}.{key}" if section else key
                what = "section" if isinstance(table[key], dict) else "key"
                place = f"[{section}]" if section else "the top level"
                raise self.err(
                    where,
                    f"unknown {what}; valid keys in {place}: {', '.join(valid)}",
                    suggestions=close_matches(key, valid),
                )

    def table(self, data: dict, key: str, section: str) -> dict | None:
        value = data.get(key)
        if value is None:
            return None
        full = f"{section}.{key}" if section else key
        if not isinstance(value, dict):
            raise self.err(full, f"expected a table [{full}], got {_kind(value)}")
        self.check_keys(value, full)
        return value

    def string(self, table: dict, key: str, section: str) -> str | None:
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            raise self.err(
                f"{section}.{key}" if section else key, f"expected a string, got {_kind(value)}"
            )
        return value

    def number(self, table: dict, key: str, section: str, allow_inf: bool = False) -> float | None:
        value = table.get(key)
        full = f"{section}.{key}"
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.err(full, f"expected a number, got {_kind(value)}")
        value = float(value)
        if math.isnan(value) or value < 0 or (math.isinf(value) and not allow_inf):
            raise self.err(
                full, f"must be a {'' if allow_inf else 'finite '}number >= 0, got {value}"
            )
        return value

    def labels(self, table: dict, key: str, section: str, size: int) -> tuple[str, ...] | None:
        value = table.get(key)
        if value is None:
            return None
        full = f"{section}.{key}"
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
            raise self.err(full, f"expected a list of strings, got {_kind(value)}")
        return as_labels(value, size, full)

    def matrix(self, table: dict, key: str, section: str) -> list:
        return self.matrix_value(table[key], f"{section}.{key}")

    def matrix_value(self, value, full: str) -> list:
        if not isinstance(value, list) or not value or not all(isinstance(r, list) for r in value):
            raise self.err(
                full,
                f"expected a matrix (a list of rows, e.g. [[0, 1], [1, 0]]), got {_kind(value)}",
            )
        lengths = {len(r) for r in value}
        if len(lengths) != 1:
            raise self.err(
                full,
                f"rows have different lengths {sorted(lengths)}: every row needs the same "
                "number of entries",
            )
        for i, row in enumerate(value):
            for j, v in enumerate(row):
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise self.err(full, f"entry ({i}, {j}) is {_kind(v)}, expected a number")
        return value

    def vector(self, table: dict, key: str, section: str) -> list:
        return self.vector_value(table[key], f"{section}.{key}")

    def vector_value(self, value, full: str) -> list:
        if not isinstance(value, list) or not value:
            raise self.err(full, f"expected a non-empty list of numbers, got {_kind(value)}")
        for i, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise self.err(full, f"entry {i} is {_kind(v)}, expected a number")
        return value

    # --- sections ----------------------------------------------------------------------------
    def parse(self, data: dict) -> ProblemSpec:
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

        mech_t = self.table(data, "mechanism", "")
        comp_t = self.table(data, "composition", "")
        if mech_t is not None and comp_t is not None:
            raise self.err(
                "composition", "give [mechanism] or [composition] (the composed release), not both"
            )
        if mech_t is not None:
            spec.mechanism = self.mechanism(mech_t, prior, spec.distortion)
        elif comp_t is not None:
            spec.composition = self.composition(comp_t, prior)
            spec.mechanism = spec.composition["mechanism"]
            if (
                spec.distortion is not None
                and spec.distortion.n_outputs != spec.mechanism.n_outputs
            ):
                raise self.err(
                    "composition",
                    f"the composed release has {spec.mechanism.n_outputs} outputs but the "
                    f"distortion has {spec.distortion.n_outputs}",
                )
        elif self.purpose == "audit":
            raise self.err(
                "mechanism",
                "missing section [mechanism] with matrix = [[…]] (rows = inputs), or [composition]",
            )

        ref_t = self.table(data, "reference", "")
        if ref_t is not None:
            spec.reference = self.reference(ref_t)
        self.request(spec)
        return spec

    def prior(self, t: dict):
        forms = [k for k in ("probs", "joint", "database", "file", "grid", "points") if k in t]
        if len(forms) != 1:
            found = f"found {' and '.join(forms)}" if forms else "found none"
            raise self.err(
                "prior",
                "give exactly one prior form: probs = […] (a single secret), joint = [[…]] "
                f"(secret S × observed Y), [prior.database] (m, n, row_probs or probs), "
                f'file = "prior.csv", [prior.grid] (map cells) or [prior.points] (places); '
                f"{found}",
            )
        form = forms[0]
        if "counts" in t and form != "file":
            raise self.err("prior.counts", 'only used with file = "…" (normalise counts)')
        if form == "file":
            return self.prior_file(t)
        if form == "grid":
            return self.prior_grid(t)
        if form == "points":
            return self.prior_points(t)
        if form == "probs":
            if "secret_labels" in t:
                raise self.err(
                    "prior.secret_labels", "only used with a joint prior (joint = [[…]])"
                )
            probs = self.vector(t, "probs", "prior")
            pmf = as_pmf(probs, "prior.probs")
            return Prior(pmf, self.labels(t, "labels", "prior", pmf.size))
        if form == "joint":
            joint = self.matrix(t, "joint", "prior")
            n_s, n_y = len(joint), len(joint[0])
            return JointPrior(
                joint,
                secret_labels=self.labels(t, "secret_labels", "prior", n_s),
                labels=self.labels(t, "labels", "prior", n_y),
            )
        for bad in ("labels", "secret_labels"):
            if bad in t:
                raise self.err(
                    f"prior.{bad}",
                    "not used with [prior.database]: databases are labelled by their rows; name "
                    "the row values with prior.database.symbols",
                )
        db = self.table(t, "database", "prior")
        for key in ("m", "n"):
            if key not in db:
                raise self.err(
                    f"prior.database.{key}",
                    "missing: give the row alphabet size m and the number of rows n",
                )
        has = [k for k in ("row_probs", "probs") if k in db]
        if len(has) != 1:
            raise self.err(
                "prior.database",
                "give exactly one of row_probs (i.i.d. rows) and probs (a pmf over all m^n "
                f"databases in lexicographic order); found {' and '.join(has) or 'none'}",
            )
        kwargs = {has[0]: self.vector(db, has[0], "prior.database")}
        m = db["m"]
        symbols = None
        if "symbols" in db:
            value = db["symbols"]
            if not isinstance(value, list):
                raise self.err(
                    "prior.database.symbols", f"expected a list of strings, got {_kind(value)}"
                )
            symbols = value
        return DatabasePrior(m, db["n"], symbols=symbols, **kwargs)

    def prior_file(self, t: dict) -> Prior:
        """``[prior] file``: a CSV of ``label,probability`` or ``probability`` lines, after an
        optional header line whose last field names the column (:data:`PRIOR_FILE_HEADERS`,
        e.g. ``label,weight``); ``counts = true``: weights, normalised."""
        for bad in ("secret_labels",):
            if bad in t:
                raise self.err(f"prior.{bad}", "only used with a joint prior (joint = [[…]])")
        counts = t.get("counts", False)
        if not isinstance(counts, bool):
            raise self.err("prior.counts", f"expected true or false, got {_kind(counts)}")
        rows = self.csv_rows(t["file"], "prior.file")
        if len(rows) > 1 and rows[0][-1].strip().lower() in PRIOR_FILE_HEADERS:
            rows = rows[1:]  # a header line, e.g. "label,weight"
        widths = {len(r) for r in rows}
        if widths not in ({1}, {2}):
            raise self.err(
                "prior.file",
                "expected one column (probability) or two (label, probability) on every line",
            )
        labels = [r[0] for r in rows] if widths == {2} else None
        try:
            values = [csv_number(r[-1]) for r in rows]
        except ValueError:
            bad = next(r for r in rows if not _is_number(r[-1]))
            header = ""
            if bad is rows[0]:
                header = (
                    " (a header line is read as such when its last column is named one of "
                    f"{', '.join(PRIOR_FILE_HEADERS)})"
                )
            raise self.err(
                "prior.file", f"{t['file']}: {bad[-1]!r} is not a number{header}"
            ) from None
        if labels is not None and "labels" in t:
            raise self.err("prior.labels", "the file names the labels already (first column)")
        if counts:
            arr = np.asarray(values, dtype=float)
            if not np.isfinite(arr).all() or (arr < 0).any() or not (arr > 0).any():
                raise self.err("prior.file", "counts must be finite, non-negative and not all zero")
            values = list(normalised_weights(arr))  # no overflow: 1e308, 1e308 is ½, ½
        pmf = as_pmf(values, "prior.file")
        if labels is None:
            labels = self.labels(t, "labels", "prior", pmf.size)
        return Prior(pmf, labels)

    def prior_grid(self, t: dict) -> Prior:
        """``[prior.grid]``: map cells with counts (matrix or CSV), normalised, or check-ins
        binned into cells (``checkins_file``); optional ``[prior.grid.outputs]``."""
        from privopt.model.location import LocationGrid

        for bad in ("labels", "secret_labels"):
            if bad in t:
                raise self.err(f"prior.{bad}", 'grid cells are labelled "row,col"')
        g = self.table(t, "grid", "prior")
        if "checkins_file" in g:
            for key in ("rows", "cols", "counts", "counts_file", "origin"):
                if key in g:
                    raise self.err(
                        f"prior.grid.{key}",
                        "not used with checkins_file: the cells cover the check-ins (or bounds) "
                        "from their south-west corner, cell_size apart",
                    )
            if "cell_size" not in g:
                raise self.err(
                    "prior.grid.cell_size", "missing: the side of a cell (km for lat/lon)"
                )
            cell = self.positive(g, "cell_size", "prior.grid")
            table = self.location_table(g, "checkins_file", "prior.grid")
            bounds = None
            if "bounds" in g:
                bounds = self.vector(g, "bounds", "prior.grid")
            outputs = self.outputs(g, "prior.grid", table.coordinates)
            self.grid = self.with_outputs(
                lambda given: LocationGrid.from_checkins(
                    table, cell, bounds=bounds, outputs=given, field="prior.grid"
                ),
                outputs,
            )
            self.location = self.grid
            return self.grid.prior()
        for key in ("coordinates", "columns", "bounds"):
            if key in g:
                raise self.err(f"prior.grid.{key}", "only used with checkins_file")
        for key in ("rows", "cols"):
            if key not in g:
                raise self.err(f"prior.grid.{key}", "missing: give rows and cols")
        if "counts" in g and "counts_file" in g:
            raise self.err("prior.grid", "give counts or counts_file, not both")
        counts = None
        if "counts" in g:
            counts = self.matrix(g, "counts", "prior.grid")
        elif "counts_file" in g:
            counts = self.csv_matrix(g["counts_file"], "prior.grid.counts_file")
        cell = g.get("cell_size", 1.0)
        if isinstance(cell, bool) or not isinstance(cell, (int, float)):
            raise self.err("prior.grid.cell_size", f"expected a number, got {_kind(cell)}")
        origin = (0.0, 0.0)
        if "origin" in g:
            origin = self.vector(g, "origin", "prior.grid")
        outputs = self.outputs(g, "prior.grid", "xy")
        self.grid = self.with_outputs(
            lambda given: LocationGrid(
                g["rows"], g["cols"], cell, counts, field="prior.grid", origin=origin, outputs=given
            ),
            outputs,
        )
        self.location = self.grid
        return self.grid.prior()

    def prior_points(self, t: dict) -> Prior:
        """``[prior.points]``: given places (a CSV file or a list) with weights, as the
        secrets; optional ``[prior.points.outputs]``."""
        from privopt.model.location import LocationPoints

        for bad in ("labels", "secret_labels"):
            if bad in t:
                raise self.err(f"prior.{bad}", "name the places with prior.points.labels")
        pt = self.table(t, "points", "prior")
        forms = [key for key in ("file", "points") if key in pt]
        if len(forms) != 1:
            raise self.err(
                "prior.points",
                'give the places as file = "places.csv" or points = [[x, y], …], not both',
            )
        if "file" in pt:
            for key in ("weights", "labels"):
                if key in pt:
                    raise self.err(
                        f"prior.points.{key}", "with a file, weights and labels are its columns"
                    )
            table = self.location_table(pt, "file", "prior.points")
            points, weights, labels = table.points, table.weights, table.labels
            coordinates = table.coordinates
        else:
            if "columns" in pt:
                raise self.err("prior.points.columns", "only used with file")
            points = self.matrix(pt, "points", "prior.points")
            weights = self.vector(pt, "weights", "prior.points") if "weights" in pt else None
            coordinates = pt.get("coordinates", "xy")
            if coordinates not in ("latlon", "xy"):
                raise self.err(
                    "prior.points.coordinates", f'"latlon" or "xy", got {_kind(coordinates)}'
                )
            labels = None
            if "labels" in pt:
                labels = self.labels(pt, "labels", "prior.points", len(points))
        outputs = self.outputs(pt, "prior.points", coordinates)
        self.location = self.with_outputs(
            lambda given: LocationPoints(
                points,
                weights,
                coordinates=coordinates,
                labels=labels,
                outputs=given,
                field="prior.points",
            ),
            outputs,
        )
        return self.location.prior()

    def with_outputs(self, build, outputs):
        """``build(outputs)``, naming this file in its errors; an output grid given by its
        cell size alone is made to cover the map once the map's bounds are known."""
        from privopt.model.location import OutputGrid

        if isinstance(outputs, _CoveringGrid):
            bare = self.located(lambda: build(None))
            cover = OutputGrid.covering(bare.bounds, outputs.cell_size, outputs.field)
            return self.located(lambda: build(cover))
        return self.located(lambda: build(outputs))

    def located(self, build):
        """Run a map constructor, naming this file in its errors (field and code kept)."""
        try:
            return build()
        except InputError as exc:
            raise _rewrap(self.path, exc) from None

    def positive(self, table: dict, key: str, section: str) -> float:
        value = table.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise self.err(f"{section}.{key}", f"expected a positive number, got {_kind(value)}")
        return float(value)

    def location_table(self, table: dict, key: str, section: str):
        """Places from the CSV file named by ``key`` (read relative to the problem file)."""
        from privopt.model.location_csv import read_location_csv

        value = table[key]
        full = f"{section}.{key}"
        if not isinstance(value, str) or not value:
            raise self.err(full, f"expected a path to a CSV file, got {_kind(value)}")
        coordinates = table.get("coordinates")
        if coordinates is not None and coordinates not in ("latlon", "xy"):
            raise self.err(f"{section}.coordinates", f'"latlon" or "xy", got {_kind(coordinates)}')
        columns = table.get("columns")
        if columns is not None:
            if not isinstance(columns, list) or not all(
                isinstance(c, (int, str)) and not isinstance(c, bool) for c in columns
            ):
                raise self.err(
                    f"{section}.columns",
                    "a list of 2 or 3 column indices (from 0) or header names",
                )
            columns = tuple(columns)
        name = value if os.path.isabs(value) else os.path.join(self.base, value)
        try:
            return read_location_csv(name, coordinates=coordinates, columns=columns, source=full)
        except InputError as exc:
            where = exc.field if exc.field and exc.field.startswith(full) else full
            if exc.field in ("coordinates", "columns"):
                where = f"{section}.{exc.field}"
            text = str(exc)
            if exc.field and text.startswith(f"{exc.field}: "):
                text = text[len(exc.field) + 2 :]
            raise self.err(where, f"{value}: {text}", exc.code) from None

    def outputs(self, table: dict, section: str, coordinates: str):
        """``[{section}.outputs]``: an output grid (rows, cols, cell_size, origin; or only
        cell_size: the fewest cells that cover the map) or output points (points or
        points_file, in the map's coordinates). ``None`` when absent."""
        from privopt.model.location import OutputGrid

        out = self.table(table, "outputs", section)
        if out is None:
            return None
        full = f"{section}.outputs"
        has_points = [key for key in ("points", "points_file") if key in out]
        has_grid = [key for key in ("rows", "cols", "cell_size", "origin") if key in out]
        if has_points and has_grid:
            raise self.err(full, "give output points or an output grid, not both")
        if len(has_points) > 1:
            raise self.err(full, "give points or points_file, not both")
        if has_points:
            if "points" in out:
                return self.matrix(out, "points", full)
            return self.location_table(
                {"points_file": out["points_file"], "coordinates": coordinates}, "points_file", full
            ).points
        if "cell_size" not in out:
            raise self.err(f"{full}.cell_size", "missing: the side of an output cell")
        cell = self.positive(out, "cell_size", full)
        if "rows" not in out and "cols" not in out and "origin" not in out:
            return _CoveringGrid(cell, full)
        for key in ("rows", "cols"):
            if key not in out:
                raise self.err(f"{full}.{key}", "missing: give rows and cols (or cell_size alone)")
        origin = self.vector(out, "origin", full) if "origin" in out else None
        return self.located(lambda: OutputGrid(out["rows"], out["cols"], cell, origin, full))

    def metric_value(self, value, key: str):
        """A ``metric`` value with file paths read and grid points filled in."""
        if isinstance(value, dict):
            value = dict(value)
            if "file" in value:
                if set(value) != {"file"}:
                    raise self.err(key, 'a metric file stands alone: metric = { file = "…" }')
                return self.csv_matrix(value["file"], f"{key}.file")
            if "points" not in value and "edges" not in value and "matrix" not in value:
                if self.location is None:
                    raise self.err(
                        key,
                        "give points (with norm), edges, matrix or file; a norm alone needs "
                        "[prior.grid] or [prior.points]",
                    )
                if set(value) - {"norm"}:
                    raise self.err(key, "a map's metric takes norm alone")
                norm = value.get("norm")
                if norm is not None and not isinstance(norm, str):
                    raise self.err(f"{key}.norm", f"expected a string, got {_kind(norm)}")
                return self.located(lambda: self.location.metric(norm))
        return value

    def distortion(self, t: dict, section: str, prior) -> Distortion:
        kind = t.get("kind")
        if kind is None:
            raise self.err(f"{section}.kind", f"missing; one of {', '.join(DISTORTION_KINDS)}")
        if kind not in DISTORTION_KINDS:
            raise self.err(
                f"{section}.kind",
                f"unknown distortion kind {kind!r}; valid: {', '.join(DISTORTION_KINDS)}",
                suggestions=close_matches(kind, DISTORTION_KINDS),
            )
        n_in = prior.n_inputs
        if "values" in t and kind not in ("absolute", "squared", "query"):
            raise self.err(
                f"{section}.values", 'only used with kind = "absolute", "squared" or "query"'
            )
        if "matrix" in t and kind != "matrix":
            raise self.err(f"{section}.matrix", 'only used with kind = "matrix"')
        for key in ("query", "loss", "match"):
            if key in t and kind != "query":
                raise self.err(f"{section}.{key}", 'only used with kind = "query"')
        for key in ("metric", "power"):
            if key in t and kind != "metric":
                raise self.err(f"{section}.{key}", 'only used with kind = "metric"')
        if kind == "query":
            return self.query_distortion(t, section, prior)
        if kind == "metric":
            return self.metric_distortion(t, section, prior)
        if kind == "hamming":
            if prior.is_database:
                d = Distortion.database_hamming(prior.m, prior.n)
            else:
                d = Distortion.hamming(n_in)
        elif kind in ("absolute", "squared"):
            values = None
            if "values" in t:
                values = self.vector(t, "values", section)
                if len(values) != n_in:
                    raise self.err(
                        f"{section}.values",
                        f"has {len(values)} values but the prior has {n_in} inputs: give one "
                        "value per input symbol",
                    )
            maker = Distortion.absolute if kind == "absolute" else Distortion.squared
            d = maker(n_in, values)
        else:
            if "matrix" not in t:
                raise self.err(
                    f"{section}.matrix",
                    'missing: kind = "matrix" needs matrix = [[…]] (rows = inputs y, '
                    "columns = outputs u)",
                )
            rows = self.matrix(t, "matrix", section)
            if len(rows) != n_in:
                raise self.err(
                    f"{section}.matrix",
                    f"has {len(rows)} rows but the prior has {n_in} inputs: one row per input "
                    "symbol "
                    "(rows = inputs y, columns = outputs u)",
                )
            try:
                d = Distortion.from_matrix(rows)
            except InputError as exc:
                raise self.err(f"{section}.matrix", str(exc).split(": ", 1)[-1]) from None
        if section == "distortion" and "output_labels" in t:
            d.output_labels = self.labels(t, "output_labels", section, d.n_outputs)
        return d

    def query_distortion(self, t: dict, section: str, prior) -> Distortion:
        """``kind = "query"``: ``d(x, u) = loss(q(x), u)`` on a database prior."""
        from privopt.model.queries import query_distortion

        if not prior.is_database:
            raise self.err(
                f"{section}.kind",
                'kind = "query" needs a database prior ([prior.database] with m and n)',
            )
        query = t.get("query")
        if query is None:
            raise self.err(f"{section}.query", 'missing: one of "count", "sum", "histogram"')
        if not isinstance(query, str):
            raise self.err(f"{section}.query", f"expected a string, got {_kind(query)}")
        loss = self.string(t, "loss", section) or "absolute"
        match = t.get("match")
        if match is not None and not isinstance(match, list):
            raise self.err(f"{section}.match", f"expected a list of row values, got {_kind(match)}")
        values = self.vector(t, "values", section) if "values" in t else None
        return query_distortion(
            prior.m,
            prior.n,
            query,
            loss,
            match=match,
            values=values,
            symbols=prior.symbols,
            field=section,
        )

    def metric_distortion(self, t: dict, section: str, prior) -> Distortion:
        """``kind = "metric"``: ``d(y, u) = dist(y, u)^power`` between inputs (outputs =
        inputs), from ``metric`` here or the ``[privacy]`` metric."""
        from privopt.notions.metric_dp import validate_metric

        if "metric" in t:
            raw, key = t["metric"], f"{section}.metric"
        elif self.privacy_table is not None and "metric" in self.privacy_table:
            raw, key = self.privacy_table["metric"], "privacy.metric"
        elif self.location is not None:
            raw, key = {}, f"{section}.metric"
        else:
            raise self.err(
                f"{section}.metric",
                'kind = "metric" needs a metric: here, in [privacy] metric, or a map '
                "([prior.grid] or [prior.points])",
            )
        power = t.get("power", 1.0)
        if isinstance(power, bool) or not isinstance(power, (int, float)) or not power > 0:
            raise self.err(f"{section}.power", f"expected a positive number, got {_kind(power)}")
        if self.location is not None and isinstance(raw, dict) and set(raw) <= {"norm"}:
            # a map: from each place to each output (the outputs may differ from the places)
            norm = raw.get("norm")
            if norm is not None and not isinstance(norm, str):
                raise self.err(f"{key}.norm", f"expected a string, got {_kind(norm)}")
            return self.located(lambda: self.location.distortion(norm, float(power)))
        if self.location is not None and not self.location.outputs_are_secrets:
            raise self.err(
                key,
                "the map's outputs are not its places: the distortion is the distance from "
                "each place to each output, so give the metric as { norm = … } only",
            )

        class _Inputs:  # the metric is on the inputs Y, not on the secret
            n_secrets = prior.n_inputs
            secret_labels = prior.input_labels

        metric = validate_metric(self.metric_value(raw, key), _Inputs, key)
        if not np.isfinite(metric.matrix).all():
            raise self.err(key, "a distortion needs finite distances (the graph is disconnected)")
        return Distortion(metric.matrix ** float(power), output_labels=prior.input_labels)

    def neighbors(self, value, prior):
        """``[privacy] neighbors``: a name, an edge list, ``{edges}``, ``{adjacency}`` or
        ``{file}`` (a CSV edge list); symbols or indices of the secret alphabet."""

        key = "privacy.neighbors"
        if isinstance(value, str):
            resolve_neighbors(prior, value)  # a known relation for this prior
            return value
        if isinstance(value, list):
            value = {"edges": value}
        if not isinstance(value, dict):
            raise self.err(
                key,
                'expected "hamming", "all", an edge list [[a, b], …], { adjacency = [[…]] } '
                f'or {{ file = "edges.csv" }}, got {_kind(value)}',
            )
        if len(value) != 1 or next(iter(value)) not in ("edges", "adjacency", "file"):
            raise self.err(key, "give exactly one of edges, adjacency, file")
        if "file" in value:  # a CSV edge list: its rows are the pairs
            return neighbor_pairs(prior, self.csv_rows(value["file"], f"{key}.file"), f"{key}.file")
        return neighbor_pairs(prior, value, key)  # the one reading of pairs (the API's too)

    def extras(self, t: dict, main: Distortion, prior) -> list:
        raw = t.get("extra")
        if raw is None:
            return []
        if isinstance(raw, dict):
            raw = [raw]
        if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
            raise self.err(
                "distortion.extra", "expected [[distortion.extra]] tables with kind and budget"
            )
        out = []
        for i, item in enumerate(raw):
            section = f"distortion.extra[{i}]"
            for key in item:
                if key not in VALID_KEYS["distortion.extra"]:
                    raise self.err(
                        f"{section}.{key}",
                        f"unknown key; valid keys: {', '.join(VALID_KEYS['distortion.extra'])}",
                        suggestions=close_matches(key, VALID_KEYS["distortion.extra"]),
                    )
            if "budget" not in item:
                raise self.err(
                    f"{section}.budget",
                    "missing: every extra distortion needs a budget E[d] <= budget",
                )
            budget = self.number(item, "budget", section)
            d = self.distortion(item, section, prior)
            if d.shape != main.shape:
                raise self.err(
                    section, f"has shape {d.shape} but the main distortion has {main.shape}"
                )
            out.append((d, budget))
        return out

    def privacy(self, t: dict, spec: ProblemSpec) -> None:
        name = t.get("notion")
        if name is None:
            if self.purpose == "solve":
                raise self.err(
                    "privacy.notion", f"missing; give one of: {', '.join(notion_names())}"
                )
        else:
            if not isinstance(name, str):
                raise self.err("privacy.notion", f"expected a string, got {_kind(name)}")
            spec.notion = get_notion(name).name
        eps = self.number(t, "epsilon", "privacy", allow_inf=True)
        budget = self.number(t, "max_distortion", "privacy")
        if eps is not None or budget is not None or self.purpose == "solve":
            _mode, spec.epsilon, spec.max_distortion = check_mode(eps, budget)
        delta = self.number(t, "delta", "privacy")
        if delta is not None and delta > 1:
            raise self.err("privacy.delta", f"must lie in [0, 1], got {delta}")
        spec.delta = delta
        neighbors = t.get("neighbors")
        if neighbors is not None:
            spec.neighbors = self.neighbors(neighbors, spec.prior)
        observe = t.get("observe_secret")
        if observe is not None:
            if not isinstance(observe, bool):
                raise self.err(
                    "privacy.observe_secret", f"expected true or false, got {_kind(observe)}"
                )
            spec.observe_secret = observe
        raw = {k: v for k, v in t.items() if k in notion_option_keys()}
        if "metric" in raw:
            raw["metric"] = self.metric_value(raw["metric"], "privacy.metric")
        elif self.location is not None and spec.notion == "metric_dp":
            raw["metric"] = self.located(self.location.metric)  # the map's own distance
        if spec.notion is not None:
            spec.options = get_notion(spec.notion).validate_options(spec.prior, raw)
        else:  # an audit file without a notion: the options checked by the notion that has them
            by_owner: dict[str, dict] = {}
            for key, value in raw.items():
                by_owner.setdefault(option_owners(key)[0], {})[key] = value
            for owner, given in by_owner.items():
                spec.options.update(get_notion(owner).validate_options(spec.prior, given))

    def solver(self, t: dict, spec: ProblemSpec) -> None:
        name = self.string(t, "name", "solver")
        if name is not None:
            from privopt.methods import lookup, method_names

            if lookup(name) is None:
                raise self.err(
                    "solver.name",
                    f"unknown or uninstalled solver {name!r}; available: "
                    f"{', '.join(method_names())}",
                    suggestions=close_matches(name, method_names()),
                )
        spec.solver = name
        tol = self.number(t, "tolerance", "solver")
        spec.tolerance = None if tol is None else check_tolerance(tol, "solver.tolerance")
        limit = t.get("time_limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))):
            raise self.err("solver.time_limit", f"expected a number >= 0, got {_kind(limit)}")
        spec.time_limit = check_time_limit(limit, "solver.time_limit")  # >= 0 (inf: no limit)

    def request(self, spec: ProblemSpec) -> None:
        """Validate the whole design request as the Python API would (same messages)."""
        from privopt.request import prepare_request

        if spec.notion is None or spec.distortion is None or spec.mode is None:
            return
        kwargs = spec.design_kwargs()
        kwargs.pop("tol", None)
        if self.purpose == "solve":
            # as written, so that a relation on a notion that takes none is refused as in Python
            kwargs["neighbors"] = spec.neighbors
        else:
            kwargs.pop("delta", None)  # an audit's δ: the tail audits, no design
            # an audit's relation also serves the DP lines of the leakage report
        prepare_request(
            spec.prior,
            spec.distortion,
            spec.notion,
            epsilon=spec.epsilon,
            max_distortion=spec.max_distortion,
            **kwargs,
        )

    def mechanism(self, t: dict, prior, distortion: Distortion | None) -> Mechanism:
        if "matrix" not in t:
            raise self.err(
                "mechanism.matrix", "missing: give matrix = [[…]] (rows = inputs, entries p(u|y))"
            )
        rows = self.matrix(t, "matrix", "mechanism")
        if len(rows) != prior.n_inputs:
            raise self.err(
                "mechanism.matrix",
                f"has {len(rows)} rows but the prior has {prior.n_inputs} inputs: one row per "
                "input symbol",
            )
        n_out = len(rows[0])
        if distortion is not None and distortion.n_outputs != n_out:
            raise self.err(
                "mechanism.matrix",
                f"has {n_out} columns but the distortion has {distortion.n_outputs} outputs",
            )
        labels = self.labels(t, "output_labels", "mechanism", n_out)
        if labels is None and distortion is not None and distortion.output_labels is not None:
            labels = distortion.output_labels
        if labels is None and n_out == prior.n_inputs:
            labels = prior.input_labels
        return Mechanism(rows, prior.input_labels, labels)

    def composition(self, t: dict, prior) -> dict:
        """``[composition]``: ``first`` (rows = inputs) and exactly one of ``adaptive`` (one
        matrix p(z|x, y) per output y of ``first``), ``then`` (post-processing p(z|y)) and
        ``parallel`` (an independent p(z|x))."""
        if "first" not in t:
            raise self.err("composition.first", "missing: the first stage p(y|x) = [[…]]")
        first_rows = self.matrix(t, "first", "composition")
        if len(first_rows) != prior.n_inputs:
            raise self.err(
                "composition.first",
                f"has {len(first_rows)} rows but the prior has {prior.n_inputs} inputs",
            )
        first = Mechanism(first_rows, prior.input_labels)
        kinds = [k for k in ("adaptive", "then", "parallel") if k in t]
        if len(kinds) != 1:
            raise self.err(
                "composition",
                "give exactly one second stage: adaptive = [[[…]], …] (p(z|x, y), one matrix "
                "per output y), then = [[…]] (p(z|y)) or parallel = [[…]] (p(z|x))",
            )
        kind = kinds[0]
        key = f"composition.{kind}"
        if kind == "adaptive":
            raw = t["adaptive"]
            if not isinstance(raw, list) or len(raw) != first.n_outputs:
                raise self.err(
                    key,
                    f"expected {first.n_outputs} matrices p(z|x, y), one per output y of first",
                )
            second = []
            for y, rows in enumerate(raw):
                rows = self.matrix_value(rows, f"{key}[{y}]")
                if len(rows) != prior.n_inputs:
                    raise self.err(
                        f"{key}[{y}]", f"has {len(rows)} rows; one per input ({prior.n_inputs})"
                    )
                second.append(Mechanism(rows))
            try:
                composed = first.compose_adaptive(second)
            except InputError as exc:
                raise self.err(key, str(exc).split(": ", 1)[-1]) from None
        else:
            rows = self.matrix(t, kind, "composition")
            second = Mechanism(rows)
            try:
                composed = first.then(second) if kind == "then" else first.parallel(second)
            except InputError as exc:
                raise self.err(key, str(exc).split(": ", 1)[-1]) from None
        return {"kind": kind, "first": first, "second": second, "mechanism": composed}

    def reference(self, t: dict) -> dict:
        out: dict[str, Any] = {}
        for key in ("distortion", "epsilon", "least_achievable"):
            if key in t:
                out[key] = self.number(t, key, "reference", allow_inf=True)
        if "tolerance" in t:
            tol = self.number(t, "tolerance", "reference")
            if tol <= 0:
                raise self.err("reference.tolerance", f"must be > 0, got {tol}")
            out["tolerance"] = tol
        for key in ("what", "status"):
            value = self.string(t, key, "reference")
            if value is not None:
                out[key] = value
        if out.get("status") not in (None, "optimal", "infeasible"):
            raise self.err("reference.status", 'expected "optimal" or "infeasible"')
        if "pml_per_output" in t:
            out["pml_per_output"] = [
                float(v) for v in self.vector(t, "pml_per_output", "reference")
            ]
        if "leakage" in t:
            leak = t["leakage"]
            if not isinstance(leak, dict):
                raise self.err("reference.leakage", "expected a table notion = value")
            out["leakage"] = {}
            for key in leak:
                try:
                    canonical = get_notion(key).name
                except InputError as exc:
                    message = str(exc).split(": ", 1)[-1]
                    raise self.err(f"reference.leakage.{key}", message) from None
                out["leakage"][canonical] = self.number(
                    leak, key, "reference.leakage", allow_inf=True
                )
        return out


def csv_number(text: str) -> float:
    """A number read from a CSV cell, as strictly as a file format should read it.

    Python's :func:`float` accepts the digit separators of Python source (``"0_5"`` reads
    as 5): a cell with an underscore is refused instead. Everything else is read by
    :func:`float` (decimal and exponent forms, ``inf``, surrounding blanks).

    Parameters
    ----------
    text : str
        The cell.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the cell is not a number (an underscore included).
    """
    if "_" in text:
        raise ValueError(f"{text!r}: '_' is not part of a number in a CSV file")
    return float(text)


def _is_number(text: str) -> bool:
    try:
        csv_number(text)
    except ValueError:
        return False
    return True


def _kind(value) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return f"{type(value).__name__} {value!r}"


# --- reference checks ------------------------------------------------------------------------
def check_reference(reference: dict, result: dict) -> list[dict]:
    """Compare a result (the JSON object of ``solve`` or ``audit``) with a ``[reference]``.

    Parameters
    ----------
    reference : dict
        The ``[reference]`` table (:attr:`ProblemSpec.reference`).
    result : dict
        The JSON object of the result.

    Returns
    -------
    list of dict
        One record ``{"key", "expected", "got", "ok"}`` per quantity the reference gives:
        ``status`` (when the result has one) and ``least_achievable``; ``distortion``,
        ``epsilon``, ``leakage.<notion>`` and ``pml_per_output`` only when the result has an
        answer (or no status). Numbers agree when their absolute difference is within
        ``reference.tolerance`` (default 1e-6).
    """
    tol = reference.get("tolerance", DEFAULT_REFERENCE_TOLERANCE)
    checks: list[dict] = []

    def close(expected, got) -> bool:
        if got is None or expected is None:
            return got is None and expected is None
        if math.isinf(expected) or math.isinf(got):
            return expected == got
        return abs(got - expected) <= tol

    def add(key, expected, got, ok=None):
        checks.append(
            {
                "key": key,
                "expected": expected,
                "got": got,
                "ok": bool(close(expected, got) if ok is None else ok),
            }
        )

    status = result.get("status")
    if "status" in reference and status is not None:
        add("status", reference["status"], status, reference["status"] == status)
    if "least_achievable" in reference:
        add("least_achievable", reference["least_achievable"], result.get("least_achievable"))
    if status in (None, "optimal", "optimal_inaccurate"):
        for key in ("distortion", "epsilon"):
            if key in reference:
                add(key, reference[key], result.get(key))
        for key, value in reference.get("leakage", {}).items():
            got = result.get("leakage", {}).get(key)
            add(f"leakage.{key}", value, math.inf if got is None and value == math.inf else got)
        if "pml_per_output" in reference:
            expected = reference["pml_per_output"]
            got = result.get("pml_per_output")
            ok = (
                got is not None
                and len(got) == len(expected)
                and all(close(e, g) for e, g in zip(expected, got, strict=True))
            )
            add("pml_per_output", expected, got, ok)
    return checks


# --- mechanisms from files -------------------------------------------------------------------
def _structured_from_json(text: str):
    """The structured mechanism of a ``solve --out`` JSON object without a dense matrix, or
    ``None``."""
    import json

    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("mechanism") is not None:
        return None
    if not isinstance(data.get("structured_mechanism"), dict):
        return None
    from privopt.methods.structured import from_description

    return from_description(data["structured_mechanism"])


def load_mechanism(path: str | os.PathLike):
    """Read a mechanism written by ``privopt solve --out`` (``.json``, ``.csv`` or ``.npz``).

    A ``.json`` object whose mechanism is held in structured form (no dense matrix; the
    ``structured_mechanism`` key) gives the structured mechanism
    (:mod:`privopt.methods.structured`).

    The file is read like a problem file (a regular file of at most
    ``PRIVOPT_MAX_FILE_BYTES`` bytes); ``.npz`` archives are read without pickle and refused
    when their arrays would unpack to more than that size.

    Parameters
    ----------
    path : str or path-like
        The mechanism file; the format follows the extension.

    Returns
    -------
    Mechanism or structured mechanism
        With the input and output labels of the file.

    Raises
    ------
    InputError
        ``"<path>: …"`` naming what is wrong.
    """
    name = os.fspath(path)
    ext = os.path.splitext(name)[1].lower()
    if ext not in (".json", ".csv", ".npz"):
        raise _error(name, None, f"unknown extension {ext!r}: use .json, .csv or .npz")
    limit = max_file_bytes()
    raw = read_input_file(name, limit)
    try:
        if ext == ".json":
            text = decode_text(raw, name)
            structured = _structured_from_json(text)
            return structured if structured is not None else Mechanism.from_json(text)
        if ext == ".csv":
            rows = list(csv.reader(io.StringIO(decode_text(raw, name), newline="")))
            if len(rows) < 2:
                raise _error(name, None, "expected a header row and one row per input")
            outputs = rows[0][1:]
            inputs = [r[0] for r in rows[1:]]
            matrix = [[csv_number(v) for v in r[1:]] for r in rows[1:]]
            return Mechanism(matrix, inputs, outputs)
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked > limit:
            raise _error(
                name,
                None,
                f"the archive unpacks to {unpacked} bytes, more than the limit of {limit} "
                "(PRIVOPT_MAX_FILE_BYTES)",
            )
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            inputs = data["inputs"].tolist() if "inputs" in data else None
            outputs = data["outputs"].tolist() if "outputs" in data else None
            return Mechanism(data["mechanism"], inputs, outputs)
    except InputError as exc:
        raise _rewrap(name, exc) from None
    except RecursionError:
        raise _error(name, None, "cannot read the mechanism: nested too deeply") from None
    except (OSError, ValueError, KeyError, csv.Error, zipfile.BadZipFile) as exc:
        raise _error(name, None, f"cannot read the mechanism: {exc}") from None
