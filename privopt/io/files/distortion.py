"""``[distortion]`` and ``[[distortion.extra]]``: a named kind (``hamming``, ``absolute``,
``squared``), a matrix, the loss of a query, or a power of a metric."""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from privopt.errors import InputError, close_matches
from privopt.model import Distortion

from ._reader import VALID_KEYS, _kind, _Reader, csv_number

DISTORTION_KINDS = ("hamming", "absolute", "squared", "matrix", "query", "metric")
#: The columns of a metric's ``edges_file`` (the names in an error's field).
EDGE_FILE_COLUMNS = ("from", "to", "weight")
#: Names of the last column that make the first line of an ``edges_file`` a header
#: (``from,to,length``; case does not matter).
EDGE_FILE_HEADERS = ("weight", "length", "distance", "cost")
#: The keys of a distortion table that belong to some kinds only (checked in this order).
_KIND_KEYS = {
    "values": ("absolute", "squared", "query"),
    "matrix": ("matrix",),
    "query": ("query",),
    "loss": ("query",),
    "match": ("query",),
    "metric": ("metric",),
    "power": ("metric",),
}


class _DistortionSection(_Reader):
    """``[distortion]`` and ``[[distortion.extra]]``: a named kind, a matrix, a query's loss or
    a metric."""

    def distortion(self, t: dict, section: str, prior) -> Distortion:
        """A distortion table (``[distortion]`` or one ``[[distortion.extra]]``)."""
        kind = self.distortion_kind(t, section)
        if kind == "query":
            return self.query_distortion(t, section, prior)
        if kind == "metric":
            return self.metric_distortion(t, section, prior)
        if kind == "matrix":
            d = self.matrix_distortion(t, section, prior.n_inputs)
        elif kind == "hamming":
            if prior.is_database:
                d = Distortion.database_hamming(prior.m, prior.n)
            else:
                d = Distortion.hamming(prior.n_inputs)
        else:
            d = self.value_distortion(t, section, kind, prior.n_inputs)
        if section == "distortion" and "output_labels" in t:
            d.output_labels = self.labels(t, "output_labels", section, d.n_outputs)
        return d

    def distortion_kind(self, t: dict, section: str) -> str:
        """The ``kind`` of a distortion table, with no key of another kind beside it."""
        kind = t.get("kind")
        if kind is None:
            raise self.err(f"{section}.kind", f"missing; one of {', '.join(DISTORTION_KINDS)}")
        if kind not in DISTORTION_KINDS:
            raise self.err(
                f"{section}.kind",
                f"unknown distortion kind {kind!r}; valid: {', '.join(DISTORTION_KINDS)}",
                suggestions=close_matches(kind, DISTORTION_KINDS),
            )
        for key, kinds in _KIND_KEYS.items():
            if key in t and kind not in kinds:
                named = [f'"{k}"' for k in kinds]
                allowed = " or ".join([", ".join(named[:-1]), named[-1]] if named[:-1] else named)
                raise self.err(f"{section}.{key}", f"only used with kind = {allowed}")
        return kind

    def value_distortion(self, t: dict, section: str, kind: str, n_in: int) -> Distortion:
        """``kind = "absolute"`` or ``"squared"``: between the inputs' ``values`` (default
        their indices)."""
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
        return maker(n_in, values)

    def matrix_distortion(self, t: dict, section: str, n_in: int) -> Distortion:
        """``kind = "matrix"``: ``matrix = [[…]]``, one row per input."""
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
            return Distortion.from_matrix(rows)
        except InputError as exc:
            raise self.err(f"{section}.matrix", str(exc).split(": ", 1)[-1]) from None

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

        raw, key = self.distortion_metric(t, section)
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

        metric = validate_metric(self.metric_value(raw, key, _Inputs), _Inputs, key)
        if not np.isfinite(metric.matrix).all():
            raise self.err(key, "a distortion needs finite distances (the graph is disconnected)")
        return Distortion(metric.matrix ** float(power), output_labels=prior.input_labels)

    def distortion_metric(self, t: dict, section: str) -> tuple[Any, str]:
        """The metric of ``kind = "metric"`` as written, and the key that gives it: this
        table's ``metric``, else ``[privacy] metric``, else the map's own (``{}``)."""
        if "metric" in t:
            return t["metric"], f"{section}.metric"
        if self.privacy_table is not None and "metric" in self.privacy_table:
            return self.privacy_table["metric"], "privacy.metric"
        if self.location is not None:
            return {}, f"{section}.metric"
        raise self.err(
            f"{section}.metric",
            'kind = "metric" needs a metric: here, in [privacy] metric, or a map '
            "([prior.grid] or [prior.points])",
        )

    def metric_value(self, value, key: str, secrets):
        """A ``metric`` value with file paths read and grid points filled in.

        Parameters
        ----------
        value : object
            The ``metric`` as written.
        key : str
            The key that gives it (``privacy.metric`` or ``distortion.metric``).
        secrets : prior-like
            What the metric is on: its ``n_secrets`` and ``secret_labels`` (the symbols that
            an edges file names).

        Returns
        -------
        object
            A value for :func:`privopt.notions.metric_dp.validate_metric` (a
            :class:`~privopt.model.Metric` for an edges file, already validated).
        """
        if isinstance(value, dict):
            value = dict(value)
            if "file" in value:
                if set(value) != {"file"}:
                    raise self.err(key, 'a metric file stands alone: metric = { file = "…" }')
                return self.csv_matrix(value["file"], f"{key}.file")
            if "edges_file" in value:
                return self.metric_edges_file(value, key, secrets)
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

    def metric_edges_file(self, value: dict, key: str, secrets):
        """``metric = { edges_file = "roads.csv" }``: the shortest-path metric of the graph
        whose edges a CSV file lists, one ``from,to,weight`` (or ``from,to``: weight 1) per
        line, the ends as symbols of ``secrets`` or 0-based indices, as inline ``edges``.

        The file is read as every CSV file of a problem (:meth:`csv_numbered_rows`) and the
        graph checked by the same code as inline ``edges`` (the same metric); an error names
        ``{key}.edges_file[line N].{from|to|weight}`` (the row alone for a self-loop, the
        key for a disconnected graph) with a code of :data:`privopt.errors.INPUT_ERROR_CODES`.

        Parameters
        ----------
        value : dict
            The ``metric`` table: ``edges_file`` and optionally ``allow_disconnected``.
        key : str
            The key that gives it (``privacy.metric`` or ``distortion.metric``).
        secrets : prior-like
            The alphabet the ends name (``n_secrets``, ``secret_labels``).

        Returns
        -------
        Metric
            The graph's shortest-path metric on ``secrets``.

        Raises
        ------
        InputError
            Codes ``missing_value``, ``extra_value``, ``not_a_number``, ``unknown_symbol``,
            ``index_out_of_range``, ``self_loop``, ``bad_edge_weight`` (negative, zero, NaN,
            infinite) or ``disconnected_graph``.
        """
        from privopt.notions.metric_dp import validate_metric
        from privopt.validation import secret_index

        extra = set(value) - {"edges_file", "allow_disconnected"}
        if extra:
            raise self.err(
                key,
                "an edges file takes allow_disconnected alone beside it: "
                f'metric = {{ edges_file = "…" }}; found {", ".join(sorted(extra))}',
            )
        file, full = value["edges_file"], f"{key}.edges_file"
        rows = self.csv_numbered_rows(file, full)
        first = rows[0][1]
        width = len(first)
        if width == 3 and first[-1].lower() in EDGE_FILE_HEADERS:
            rows = rows[1:]  # a header line, e.g. "from,to,length"
            if not rows:
                raise self.err(full, f"{file}: a header line but no edges", code="missing_value")
        else:
            width = min(max(width, 2), 3)  # a row of 1 cell lacks its "to"; of 4, has one extra
        labels = list(secrets.secret_labels)
        columns = EDGE_FILE_COLUMNS[:width]
        edges, lines = [], []
        for line, cells in rows:
            at = f"{full}[line {line}]"
            if len(cells) > width:
                raise self.err(
                    at,
                    f"{file}: line {line} has {len(cells)} values; every line of this file is "
                    f"{','.join(columns)}",
                    code="extra_value",
                )
            edge: list = []
            for column, cell in itertools.zip_longest(columns, cells[:width], fillvalue=""):
                if cell == "":
                    raise self.err(
                        f"{at}.{column}",
                        f"{file}: line {line} has no {column} value",
                        "missing_value",
                    )
                if column == "weight":
                    try:
                        edge.append(csv_number(cell))
                    except ValueError:
                        raise self.err(
                            f"{at}.weight",
                            f"{file}: line {line}: the weight {cell!r} is not a number",
                            "not_a_number",
                        ) from None
                else:
                    try:
                        edge.append(secret_index(cell, labels, f"{at}.{column}"))
                    except InputError as exc:
                        raise self.err(
                            exc.field, f"{file}: line {line}: {_detail(exc)}", exc.code
                        ) from None
            edges.append(edge)
            lines.append((line, cells))
        graph = {"edges": edges}
        if "allow_disconnected" in value:
            graph["allow_disconnected"] = value["allow_disconnected"]
        try:  # the checks of inline edges: weights, self-loops, connectedness
            return validate_metric(graph, secrets, key)
        except InputError as exc:
            raise self.edge_file_error(exc, key, file, lines) from None

    def edge_file_error(self, exc: InputError, key: str, file: str, lines: list) -> InputError:
        """An error of the graph check on the edges of ``{key}.edges_file``, named by the line
        and column of the file instead of the index of the edge."""
        inline = f"{key}.edges"
        if exc.field == inline:  # the graph as a whole (disconnected)
            return self.err(f"{key}.edges_file", f"{file}: {_detail(exc)}", exc.code)
        match = re.fullmatch(re.escape(inline) + r"\[(\d+)\]", exc.field or "")
        if match is None:
            return self.err(exc.field, _detail(exc), exc.code)
        line, cells = lines[int(match.group(1))]
        at = f"{key}.edges_file[line {line}]"
        if exc.code == "self_loop":
            return self.err(at, f"{file}: line {line} joins {cells[0]!r} to itself", exc.code)
        if exc.code == "bad_edge_weight":
            return self.err(
                f"{at}.weight",
                f"{file}: line {line}: the weight {cells[2]!r} must be a positive finite number",
                exc.code,
            )
        return self.err(at, f"{file}: line {line}: {_detail(exc)}", exc.code)

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


def _detail(exc: InputError) -> str:
    """The message of ``exc`` without its field prefix."""
    text = str(exc)
    prefix = f"{exc.field}: " if exc.field else ""
    return text[len(prefix) :] if prefix and text.startswith(prefix) else text
