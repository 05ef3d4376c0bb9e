"""What every section of a problem file is read with: the valid keys of each table, errors
that name the file and the key, and the checks of strings, numbers, lists, matrices and the
CSV files a problem file names."""

from __future__ import annotations

import csv
import io
import math
import os

from privopt._io import decode_text, read_input_file
from privopt.errors import InputError, close_matches
from privopt.notions import NOTIONS
from privopt.validation import (
    as_labels,
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


def notion_option_keys() -> tuple[str, ...]:
    """The ``[privacy]`` keys that some notion declares as an option.

    Returns
    -------
    tuple of str
        The option names of every registered notion, sorted, without repeats.
    """
    return tuple(sorted({o.name for n in NOTIONS.values() for o in n.options}))


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


class _Reader:
    """The checks every section of a problem file is read with (the sections are mixins of
    :class:`privopt.io.files.loader._Parser`; one may use another's methods through ``self``)."""

    def __init__(self, path: str, purpose: str, files: dict | None = None):
        self.path = path
        self.purpose = purpose
        self.files = files
        self.base = os.path.dirname(os.path.abspath(path)) if not path.startswith("<") else "."
        self.grid = None
        self.location = None
        self.privacy_table: dict | None = None

    def err(
        self,
        key: str | None,
        message: str,
        code: str | None = None,
        suggestions: tuple[str, ...] = (),
    ) -> InputError:
        return _error(self.path, key, message, code, suggestions)

    def csv_rows(self, value, key: str) -> list[list[str]]:
        """The rows of a CSV file named by ``key`` (a path relative to the problem file);
        blank lines and lines starting with ``#`` are skipped."""
        return [cells for _line, cells in self.csv_numbered_rows(value, key)]

    def csv_numbered_rows(self, value, key: str) -> list[tuple[int, list[str]]]:
        """The rows of a CSV file named by ``key``, each with the line of the file it starts
        on (1-based, for messages): as :meth:`csv_rows`, whose reading this is."""
        if not isinstance(value, str) or not value:
            raise self.err(key, f"expected a path to a CSV file, got {_kind(value)}")
        text = self.referenced_text(value, key)
        reader = csv.reader(io.StringIO(text, newline=""))
        rows = []
        try:
            start = 1
            for row in reader:  # a blank line is a record too, so every line is counted
                if row and any(c.strip() for c in row) and not row[0].lstrip().startswith("#"):
                    rows.append((start, [cell.strip() for cell in row]))
                start = reader.line_num + 1
        except csv.Error as exc:
            raise self.err(key, f"{value}: not a CSV file: {exc}") from None
        if not rows:
            raise self.err(key, f"{value}: the file holds no rows", code="missing_value")
        return rows

    def referenced_text(self, value: str, key: str) -> str:
        """The text of the file named ``value`` by ``key``: from the files read with the
        problem (a batch: never from disk here), else read relative to the problem file."""
        if self.files is not None:
            content = self.files.get(value)
            if content is None:
                raise self.err(key, f"{value}: not among the files read with the problem")
            if content.error is not None:
                raise self.err(key, content.error, content.code)
            return content.text
        name = value if os.path.isabs(value) else os.path.join(self.base, value)
        try:
            return decode_text(read_input_file(name), name)
        except InputError as exc:
            raise self.err(key, str(exc), exc.code) from None

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

    def located(self, build):
        """Run a map constructor, naming this file in its errors (field and code kept)."""
        try:
            return build()
        except InputError as exc:
            raise _rewrap(self.path, exc) from None

    def positive(self, table: dict, key: str, section: str) -> float:
        """``table[key]``, a positive finite number (code ``"not_a_number"`` for anything
        that is not a finite number, ``"not_positive"`` for zero or a negative number)."""
        value = table.get(key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        finite = number and (isinstance(value, int) or math.isfinite(value))
        if not finite or not value > 0:
            raise self.err(
                f"{section}.{key}",
                f"expected a positive number, got {_kind(value)}",
                "not_positive" if finite else "not_a_number",
            )
        return float(value)


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
