"""Places from a CSV file: latitude/longitude or x/y, with an optional weight and label.

A header row names the columns (case-insensitive): ``latitude``/``lat`` and
``longitude``/``lon``/``lng``/``long`` for geographic places, ``x`` and ``y`` for planar ones,
and optionally ``weight``/``count``/``visits`` and ``label``/``name``/``id``. Without a header,
say which columns hold the coordinates (``columns``, default the first two) and what they are
(``coordinates``). Commas, tabs or semicolons separate the cells (the first data line
decides); blank lines and lines starting with ``#`` are skipped. Raw check-in logs (e.g. a
tab-separated ``user, time, latitude, longitude, place id`` per visit) are read with
``columns=(2, 3)`` and binned with :meth:`privopt.model.location.LocationGrid.from_checkins`.

Every bad row is an :class:`~privopt.errors.InputError` named
``{source}[line N].{column}`` (the line of the file) with a code: ``"missing_value"`` (an
empty cell or a short row), ``"not_a_number"`` (text, NaN or infinity), ``"latitude_range"``
(outside ±90°), ``"longitude_range"`` (outside ±180°) or ``"negative_weight"``. A file
that cannot be read is named by ``source`` (default: its path), with the code of
:func:`privopt._io.read_input_file` (``"missing_file"``, …).
"""

from __future__ import annotations

__all__ = ["LocationTable", "read_location_csv", "parse_location_csv", "COLUMN_NAMES"]

import csv
import io
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from privopt._io import decode_text, read_input_file
from privopt.errors import InputError

#: Accepted header names of each role (lower case).
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "latitude": ("latitude", "lat"),
    "longitude": ("longitude", "lon", "lng", "long"),
    "x": ("x",),
    "y": ("y",),
    "weight": ("weight", "weights", "count", "counts", "visits", "checkins"),
    "label": ("label", "name", "id"),
}


@dataclass
class LocationTable:
    """Places read from a CSV file.

    Attributes
    ----------
    points : numpy.ndarray
        ``n × 2``: ``[latitude, longitude]`` in degrees, or ``[x, y]``.
    coordinates : str
        ``"latlon"`` or ``"xy"``.
    weights : numpy.ndarray or None
        One non-negative weight per row, when the file has a weight column.
    labels : list of str or None
        One name per row, when the file has a label column.
    lines : numpy.ndarray
        The line of the file of each row (1-based), for messages.
    source : str
        The name used in messages.
    """

    points: np.ndarray
    coordinates: str
    weights: np.ndarray | None
    labels: list[str] | None
    lines: np.ndarray
    source: str


def read_location_csv(
    path: str | os.PathLike,
    *,
    coordinates: str | None = None,
    columns: tuple[Any, ...] | None = None,
    source: str | None = None,
) -> LocationTable:
    """Read places from a CSV file (see the module docstring).

    Parameters
    ----------
    path : str or path-like
        The file (at most ``PRIVOPT_MAX_FILE_BYTES``, default 16 MiB).
    coordinates : {"latlon", "xy"}, optional
        What the two coordinate columns hold; required without a header that says it.
    columns : tuple, optional
        The coordinate columns ``(first, second)`` — latitude then longitude, or x then y —
        and optionally a weight column third: 0-based indices or header names.
    source : str, optional
        The name used in messages (default: ``path``).

    Returns
    -------
    LocationTable

    Raises
    ------
    InputError
        For a file that cannot be read, named ``source`` (default: the path) with a code
        (``"missing_file"``, ``"unreadable_file"``, ``"not_a_regular_file"``,
        ``"file_too_large"``, ``"not_utf8"``), or a bad row (codes in the module docstring).
    """
    name = os.fspath(path)
    try:
        text = decode_text(read_input_file(name), name)
    except InputError as exc:
        raise _named(exc, source or name, name) from None
    return parse_location_csv(text, coordinates=coordinates, columns=columns, source=source or name)


def _named(exc: InputError, field: str, name: str) -> InputError:
    """A file error (``"<name>: …"``, no field) named ``field``, its code kept; the path
    stays in the message when ``field`` is another key."""
    text = str(exc)
    if field == name and text.startswith(f"{name}: "):
        text = text[len(name) + 2 :]
    return InputError(text, field, code=exc.code)


def _delimiter(line: str) -> str:
    for delimiter in ("\t", ";", ","):
        if delimiter in line:
            return delimiter
    return ","


def _cells(line: str, delimiter: str) -> list[str]:
    return next(csv.reader(io.StringIO(line), delimiter=delimiter))


def _number(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_location_csv(
    text: str,
    *,
    coordinates: str | None = None,
    columns: tuple[Any, ...] | None = None,
    source: str = "<csv>",
) -> LocationTable:
    """Places from the text of a CSV file (see :func:`read_location_csv`).

    Parameters
    ----------
    text : str
        The file's content.
    coordinates : {"latlon", "xy"}, optional
    columns : tuple, optional
    source : str
        The name used in messages.

    Returns
    -------
    LocationTable
    """
    if coordinates is not None and coordinates not in ("latlon", "xy"):
        raise InputError(
            f"coordinates are 'latlon' (degrees) or 'xy' (planar), got {coordinates!r}",
            "coordinates",
        )
    rows = _rows(text, source)
    header = _Header(rows[0][1], columns)
    data = rows[1:] if header.present else rows
    if not data:
        raise InputError("the file holds a header but no rows of data", source, "missing_value")
    if columns is not None:
        chosen = _given_columns(header, columns, coordinates)
    elif header.present:
        chosen = _named_columns(header, coordinates)
    else:
        chosen = _unnamed_columns(coordinates)
    first, second, roles, coordinates, weight_col, label_col = chosen

    points = np.empty((len(data), 2))
    weights = None if weight_col is None else np.empty(len(data))
    labels = None if label_col is None else []
    lines = np.array([number for number, _ in data], dtype=np.int64)
    for row_index, (number, cells) in enumerate(data):
        for slot, col, role in ((0, first, roles[0]), (1, second, roles[1])):
            points[row_index, slot] = _coordinate(cells, col, role, number, source)
        if weights is not None:
            weights[row_index] = _weight(cells, weight_col, number, source)
        if labels is not None:
            labels.append(cells[label_col] if label_col < len(cells) else "")
    return LocationTable(points, coordinates, weights, labels, lines, source)


def _rows(text: str, source: str) -> list[tuple[int, list[str]]]:
    """The file's non-empty, non-comment lines as (line number, stripped cells)."""
    numbered = [
        (number, line)
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not numbered:
        raise InputError("the file holds no rows", source, code="missing_value")
    delimiter = _delimiter(numbered[0][1])
    try:
        return [
            (number, [cell.strip() for cell in _cells(line, delimiter)])
            for number, line in numbered
        ]
    except (csv.Error, StopIteration) as exc:
        raise InputError(f"not a CSV file: {exc}", source) from None


class _Header:
    """The first row, read as a header when it names a known column or a given one."""

    def __init__(self, first_row: list[str], columns: tuple[Any, ...] | None):
        self.row = first_row
        self.lowered = [cell.lower() for cell in first_row]
        known = {alias for names in COLUMN_NAMES.values() for alias in names}
        wanted = [c for c in (columns or ()) if isinstance(c, str)]
        self.present = any(cell in known for cell in self.lowered) or any(
            c.lower() in self.lowered for c in wanted
        )

    def find(self, role: str) -> int | None:
        """The column of a role (its first known name in the header), if any."""
        for alias in COLUMN_NAMES[role]:
            if alias in self.lowered:
                return self.lowered.index(alias)
        return None

    def resolve(self, column: Any) -> int:
        """A column given by name or 0-based index."""
        if isinstance(column, str):
            if not self.present or column.lower() not in self.lowered:
                raise InputError(
                    f"no column named {column!r} (the header is {self.row})", "columns"
                )
            return self.lowered.index(column.lower())
        if isinstance(column, bool) or not isinstance(column, (int, np.integer)) or column < 0:
            raise InputError(f"columns are 0-based indices or names, got {column!r}", "columns")
        return int(column)


def _roles(coordinates: str) -> tuple[str, str]:
    return ("latitude", "longitude") if coordinates == "latlon" else ("x", "y")


def _given_columns(header: _Header, columns: Any, coordinates: str | None) -> tuple:
    """``columns=(first, second[, weight])``, and the coordinates they hold."""
    if not isinstance(columns, (tuple, list)) or len(columns) not in (2, 3):
        raise InputError(
            "columns are (first, second) or (first, second, weight): indices or names",
            "columns",
        )
    first, second = header.resolve(columns[0]), header.resolve(columns[1])
    weight_col = header.resolve(columns[2]) if len(columns) == 3 else None
    if coordinates is None and header.present:
        pair = tuple(header.lowered[i] if i < len(header.lowered) else "" for i in (first, second))
        if pair[0] in COLUMN_NAMES["latitude"] and pair[1] in COLUMN_NAMES["longitude"]:
            coordinates = "latlon"
        elif pair == ("x", "y"):
            coordinates = "xy"
    if coordinates is None:
        raise InputError(
            "say what the coordinate columns hold: coordinates = 'latlon' (latitude, "
            "longitude in degrees) or 'xy' (planar)",
            "coordinates",
        )
    return first, second, _roles(coordinates), coordinates, weight_col, None


def _named_columns(header: _Header, coordinates: str | None) -> tuple:
    """The coordinate, weight and label columns found by their names in the header."""
    lat, lon = header.find("latitude"), header.find("longitude")
    x, y = header.find("x"), header.find("y")
    if lat is not None and lon is not None and coordinates != "xy":
        first, second, coordinates = lat, lon, "latlon"
    elif x is not None and y is not None and coordinates != "latlon":
        first, second, coordinates = x, y, "xy"
    else:
        want = {"latlon": "latitude and longitude", "xy": "x and y"}.get(
            coordinates, "latitude and longitude, or x and y"
        )
        raise InputError(
            f"the header {header.row} names no {want} columns (or give columns=)", "columns"
        )
    return (
        first,
        second,
        _roles(coordinates),
        coordinates,
        header.find("weight"),
        header.find("label"),
    )


def _unnamed_columns(coordinates: str | None) -> tuple:
    """A file without a header: the first two columns, as ``coordinates`` says."""
    if coordinates is None:
        raise InputError(
            "the file has no header: say what the first two columns hold, coordinates = "
            "'latlon' (latitude, longitude in degrees) or 'xy' (planar), or add a header "
            "such as lat,lon",
            "coordinates",
        )
    return 0, 1, _roles(coordinates), coordinates, None, None


def _coordinate(cells: list[str], col: int, role: str, number: int, source: str) -> float:
    """One coordinate of a row, checked (a finite number; latitudes and longitudes in range)."""
    at = f"{source}[line {number}].{role}"
    if col >= len(cells) or cells[col] == "":
        raise InputError(
            f"line {number} has no {role} value (column {col + 1})", at, "missing_value"
        )
    value = _number(cells[col])
    if value is None:
        raise InputError(
            f"line {number}: the {role} {cells[col]!r} is not a finite number", at, "not_a_number"
        )
    if role == "latitude" and abs(value) > 90:
        raise InputError(
            f"line {number}: latitude {value:g} lies outside [-90, 90] degrees (are the "
            "columns swapped?)",
            at,
            "latitude_range",
        )
    if role == "longitude" and abs(value) > 180:
        raise InputError(
            f"line {number}: longitude {value:g} lies outside [-180, 180] degrees",
            at,
            "longitude_range",
        )
    return value


def _weight(cells: list[str], col: int, number: int, source: str) -> float:
    """A row's weight, checked (a finite non-negative number)."""
    at = f"{source}[line {number}].weight"
    if col >= len(cells) or cells[col] == "":
        raise InputError(f"line {number} has no weight", at, "missing_value")
    value = _number(cells[col])
    if value is None:
        raise InputError(
            f"line {number}: the weight {cells[col]!r} is not a finite number", at, "not_a_number"
        )
    if value < 0:
        raise InputError(f"line {number}: the weight {value:g} is negative", at, "negative_weight")
    return value
