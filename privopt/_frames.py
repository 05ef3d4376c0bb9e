"""Results as tables: pandas imported when a frame is asked for, and HTML for notebooks.

pandas is optional (the ``[frames]`` extra, pulled in by ``[test]``): ``import privopt`` never
imports it, and every ``to_frame()`` imports it through :func:`pandas` when called, which says
how to install it when it is missing. The ``_repr_html_`` methods of the results (what Jupyter
shows for a value at the end of a cell) build their small tables with :func:`html_table`,
without pandas.
"""

from __future__ import annotations

__all__ = ["pandas", "frame", "html_table", "html_value"]

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any


def pandas(what: str):
    """The pandas module, imported now.

    Parameters
    ----------
    what : str
        What needs it, for the message (e.g. ``"DesignResult.to_frame"``).

    Returns
    -------
    module
        :mod:`pandas`.

    Raises
    ------
    ImportError
        When pandas is not installed, saying how to install it.
    """
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{what} needs pandas: pip install pandas (or the [frames] extra)"
        ) from exc
    return pd


def frame(records: Sequence[dict], what: str, columns: Sequence[str] | None = None):
    """A DataFrame of ``records``, one row per record.

    Parameters
    ----------
    records : sequence of dict
        The rows; a key missing from a row is a missing value (``NaN`` / ``None``).
    what : str
        The caller, for the message when pandas is missing.
    columns : sequence of str, optional
        These columns first, in this order (those no record has are left out); the other keys
        follow in the order they first appear.

    Returns
    -------
    pandas.DataFrame
    """
    pd = pandas(what)
    table = pd.DataFrame.from_records(list(records))
    if columns is not None:
        first = [c for c in columns if c in table.columns]
        table = table[first + [c for c in table.columns if c not in first]]
    return table


def html_value(value: Any) -> str:
    """One cell of an HTML table: numbers to 6 significant digits, text escaped.

    Parameters
    ----------
    value : object
        The cell: ``None`` (shown ``—``), a bool (``yes``/``no``), a number or anything
        shown by its ``str``.

    Returns
    -------
    str
        The cell's HTML text.
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "inf" if math.isinf(value) else ("—" if math.isnan(value) else f"{value:.6g}")
    return html.escape(str(value))


def html_table(
    rows: Iterable[Sequence[Any]],
    header: Sequence[str] | None = None,
    caption: str | None = None,
) -> str:
    """A small HTML table (for ``_repr_html_``), every cell escaped.

    Parameters
    ----------
    rows : iterable of sequences
        The cells of each row (formatted by :func:`html_value`).
    header : sequence of str, optional
        Column headings.
    caption : str, optional
        A caption above the table.

    Returns
    -------
    str
    """
    parts = ['<table class="privopt">']
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    if header:
        cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
        parts.append(f"<thead><tr>{cells}</tr></thead>")
    parts.append("<tbody>")
    for row in rows:
        cells = "".join(f"<td>{html_value(v)}</td>" for v in row)
        parts.append(f"<tr>{cells}</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)
