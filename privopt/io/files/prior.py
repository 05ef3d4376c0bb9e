"""``[prior]``: the secret's prior as probabilities, a joint prior, a database, a CSV file of
weights, or a map (``[prior.grid]``, ``[prior.points]``) with its outputs."""

from __future__ import annotations

import numpy as np

from privopt.errors import InputError
from privopt.model import DatabasePrior, JointPrior, Prior
from privopt.model._validate import normalised_weights
from privopt.validation import (
    as_pmf,
)

from ._reader import _is_number, _kind, _Reader, csv_number

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


class _CoveringGrid:
    """An output grid given by its cell size alone, made to cover a map whose bounds are known
    only once the map is built (check-ins, places)."""

    def __init__(self, cell_size: float, field: str):
        self.cell_size, self.field = cell_size, field


class _PriorSection(_Reader):
    """``[prior]``: probabilities, a joint prior, a database, a CSV file, a map's grid or places
    (with their outputs)."""

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
        if "counts" in t and forms[0] != "file":
            raise self.err("prior.counts", 'only used with file = "…" (normalise counts)')
        read = {
            "probs": self.prior_probs,
            "joint": self.prior_joint,
            "database": self.prior_database,
            "file": self.prior_file,
            "grid": self.prior_grid,
            "points": self.prior_points,
        }
        return read[forms[0]](t)

    def prior_probs(self, t: dict) -> Prior:
        """``[prior] probs``: the pmf of a single secret (with optional ``labels``)."""
        if "secret_labels" in t:
            raise self.err("prior.secret_labels", "only used with a joint prior (joint = [[…]])")
        probs = self.vector(t, "probs", "prior")
        pmf = as_pmf(probs, "prior.probs")
        return Prior(pmf, self.labels(t, "labels", "prior", pmf.size))

    def prior_joint(self, t: dict) -> JointPrior:
        """``[prior] joint``: p(s, y), rows = secrets S, columns = observed Y."""
        joint = self.matrix(t, "joint", "prior")
        n_s, n_y = len(joint), len(joint[0])
        return JointPrior(
            joint,
            secret_labels=self.labels(t, "secret_labels", "prior", n_s),
            labels=self.labels(t, "labels", "prior", n_y),
        )

    def prior_database(self, t: dict) -> DatabasePrior:
        """``[prior.database]``: ``n`` rows over an alphabet of ``m`` values, i.i.d.
        (``row_probs``) or with a pmf over all databases (``probs``)."""
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
        values = self.file_weights(rows, t["file"])
        if labels is not None and "labels" in t:
            raise self.err("prior.labels", "the file names the labels already (first column)")
        if counts:
            values = self.normalised_counts(values)
        pmf = as_pmf(values, "prior.file")
        if labels is None:
            labels = self.labels(t, "labels", "prior", pmf.size)
        return Prior(pmf, labels)

    def file_weights(self, rows: list[list[str]], file: str) -> list[float]:
        """The numbers of the last column of a ``[prior] file`` (a first line that is not a
        number is said to be a header not named as one)."""
        try:
            return [csv_number(r[-1]) for r in rows]
        except ValueError:
            bad = next(r for r in rows if not _is_number(r[-1]))
            header = ""
            if bad is rows[0]:
                header = (
                    " (a header line is read as such when its last column is named one of "
                    f"{', '.join(PRIOR_FILE_HEADERS)})"
                )
            raise self.err("prior.file", f"{file}: {bad[-1]!r} is not a number{header}") from None

    def normalised_counts(self, values: list[float]) -> list[float]:
        """``[prior] counts = true``: the file's weights divided by their sum."""
        arr = np.asarray(values, dtype=float)
        if not np.isfinite(arr).all() or (arr < 0).any() or not (arr > 0).any():
            raise self.err("prior.file", "counts must be finite, non-negative and not all zero")
        return list(normalised_weights(arr))  # no overflow: 1e308, 1e308 is ½, ½

    def prior_grid(self, t: dict) -> Prior:
        """``[prior.grid]``: map cells with counts (matrix or CSV), normalised, or check-ins
        binned into cells (``checkins_file``); optional ``[prior.grid.outputs]``."""
        from privopt.model.location import LocationGrid

        for bad in ("labels", "secret_labels"):
            if bad in t:
                raise self.err(f"prior.{bad}", 'grid cells are labelled "row,col"')
        g = self.table(t, "grid", "prior")
        if "checkins_file" in g:
            self.grid = self.grid_from_checkins(g)
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

    def grid_from_checkins(self, g: dict):
        """``[prior.grid] checkins_file``: check-ins binned into cells of ``cell_size`` that
        cover them (or ``bounds``)."""
        from privopt.model.location import LocationGrid

        for key in ("rows", "cols", "counts", "counts_file", "origin"):
            if key in g:
                raise self.err(
                    f"prior.grid.{key}",
                    "not used with checkins_file: the cells cover the check-ins (or bounds) "
                    "from their south-west corner, cell_size apart",
                )
        if "cell_size" not in g:
            raise self.err("prior.grid.cell_size", "missing: the side of a cell (km for lat/lon)")
        cell = self.positive(g, "cell_size", "prior.grid")
        table = self.location_table(g, "checkins_file", "prior.grid")
        bounds = None
        if "bounds" in g:
            bounds = self.vector(g, "bounds", "prior.grid")
        outputs = self.outputs(g, "prior.grid", table.coordinates)
        return self.with_outputs(
            lambda given: LocationGrid.from_checkins(
                table, cell, bounds=bounds, outputs=given, field="prior.grid"
            ),
            outputs,
        )

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

    def location_table(self, table: dict, key: str, section: str):
        """Places from the CSV file named by ``key``: its text from the files read with the
        problem, else read relative to the problem file (:meth:`referenced_text`)."""
        from privopt.model.location_csv import parse_location_csv

        value = table[key]
        full = f"{section}.{key}"
        if not isinstance(value, str) or not value:
            raise self.err(full, f"expected a path to a CSV file, got {_kind(value)}")
        coordinates = table.get("coordinates")
        if coordinates is not None and coordinates not in ("latlon", "xy"):
            raise self.err(f"{section}.coordinates", f'"latlon" or "xy", got {_kind(coordinates)}')
        columns = self.location_columns(table, section)
        content = self.referenced_text(value, full)
        try:
            return parse_location_csv(
                content, coordinates=coordinates, columns=columns, source=full
            )
        except InputError as exc:
            where = exc.field if exc.field and exc.field.startswith(full) else full
            if exc.field in ("coordinates", "columns"):
                where = f"{section}.{exc.field}"
            text = str(exc)
            if exc.field and text.startswith(f"{exc.field}: "):
                text = text[len(exc.field) + 2 :]
            raise self.err(where, f"{value}: {text}", exc.code) from None

    def location_columns(self, table: dict, section: str) -> tuple | None:
        """``columns``: the 2 or 3 columns of a places file to read (indices or names)."""
        columns = table.get("columns")
        if columns is None:
            return None
        if not isinstance(columns, list) or not all(
            isinstance(c, (int, str)) and not isinstance(c, bool) for c in columns
        ):
            raise self.err(
                f"{section}.columns",
                "a list of 2 or 3 column indices (from 0) or header names",
            )
        return tuple(columns)

    def outputs(self, table: dict, section: str, coordinates: str):
        """``[{section}.outputs]``: an output grid (rows, cols, cell_size, origin; or only
        cell_size: the fewest cells that cover the map) or output points (points or
        points_file, in the map's coordinates). ``None`` when absent."""
        out = self.table(table, "outputs", section)
        if out is None:
            return None
        full = f"{section}.outputs"
        has_points = [key for key in ("points", "points_file") if key in out]
        has_grid = [key for key in ("rows", "cols", "cell_size", "origin") if key in out]
        if has_points and has_grid:
            raise self.err(full, "give output points or an output grid, not both")
        if has_points:
            return self.output_points(out, full, coordinates)
        return self.output_grid(out, full)

    def output_grid(self, out: dict, full: str):
        """An output grid: ``rows``, ``cols``, ``cell_size`` (and ``origin``), or ``cell_size``
        alone (the fewest cells that cover the map, made once the map is built)."""
        from privopt.model.location import OutputGrid

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

    def output_points(self, out: dict, full: str, coordinates: str):
        """Output points: ``points = [[x, y], …]`` or a ``points_file`` in the map's
        coordinates."""
        if "points" in out and "points_file" in out:
            raise self.err(full, "give points or points_file, not both")
        if "points" in out:
            return self.matrix(out, "points", full)
        return self.location_table(
            {"points_file": out["points_file"], "coordinates": coordinates}, "points_file", full
        ).points
