"""Location problems: maps of places, their prior and the outputs a mechanism may report.

Two kinds of map, both with secrets at points of a plane:

* :class:`LocationGrid`: ``rows × cols`` square cells of side ``cell_size``; the secrets are
  the cells, numbered row by row (cell ``(r, c)`` is ``r·cols + c``, labelled ``"r,c"``), with
  the cell centres as points. The prior comes from counts per cell (e.g. check-ins binned by
  :meth:`LocationGrid.from_checkins`). [Andres-Geo] and
  [Bordenabe-Chatzikokolakis-Palamidessi], Sec. 6 use the same discretisation.
* :class:`LocationPoints`: the secrets are given places (x/y, or latitude/longitude read
  with :func:`privopt.model.location_csv.read_location_csv`) with a weight each.

**Outputs apart from secrets.** The outputs of a mechanism (what it may report) are by
default the secrets themselves; an :class:`OutputGrid` (e.g. coarser cells over the same
map) or a list of output points may be given instead. The distortion is then ``secrets ×
outputs`` (:meth:`distortion`), while the privacy metric stays on the secrets
(:meth:`metric`). An output grid must cover the map, else an :class:`InputError` with code
``"outputs_do_not_cover"``.

**Latitude and longitude.** Geographic places are projected to a plane in kilometres by the
equirectangular projection around the map's centre (:class:`LocalProjection`): ``x = R·Δλ·cos
φ₀``, ``y = R·Δφ`` with ``R`` = :data:`~privopt.model.metric.EARTH_RADIUS_KM`. Its distances
are within a fraction ``tan φ₀ · Δφ`` of the great-circle distance (0.5 % at 50° N across 50
km); ``norm="haversine"`` gives the great-circle distance itself.
"""

from __future__ import annotations

__all__ = [
    "LocationGrid",
    "LocationPoints",
    "OutputGrid",
    "LocalProjection",
    "pairwise_distances",
    "check_coordinates",
    "MAX_CELLS",
]

import math
from collections.abc import Sequence

import numpy as np

from privopt.errors import InputError, close_matches
from privopt.model._validate import as_number, normalised_weights
from privopt.model.distortion import Distortion
from privopt.model.metric import EARTH_RADIUS_KM, Metric, point_distances
from privopt.model.prior import Prior
from privopt.resources import check_allocation

#: Largest number of cells of a grid (a guard against a cell size in the wrong unit).
MAX_CELLS = 1_000_000
#: Relative tolerance of "the output grid covers the map".
COVER_TOLERANCE = 1e-9
#: Norms of the distance between places.
LOCATION_NORMS = ("euclidean", "manhattan", "haversine")


# --- coordinates -------------------------------------------------------------------------------
def check_coordinates(points, coordinates: str, field: str) -> np.ndarray:
    """Places as an ``n × 2`` float array, checked.

    Parameters
    ----------
    points : array_like
        ``n × 2``: ``[x, y]`` (``coordinates="xy"``) or ``[latitude, longitude]`` in degrees
        (``"latlon"``).
    coordinates : {"xy", "latlon"}
    field : str
        The key named in messages; point ``i`` is named ``{field}[i]``.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InputError
        Codes ``"not_a_number"`` (not finite numbers), ``"latitude_range"``,
        ``"longitude_range"``; no code for a wrong shape.
    """
    if coordinates not in ("xy", "latlon"):
        raise InputError(
            f"coordinates are 'xy' (planar) or 'latlon' (degrees), got {coordinates!r}",
            "coordinates",
        )
    try:
        pts = np.array(points, dtype=float)
    except (TypeError, ValueError):
        raise InputError(
            "places are a list of [x, y] or [latitude, longitude] pairs of numbers",
            field,
            code="not_a_number",
        ) from None
    if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] == 0:
        raise InputError(
            f"places are a non-empty n × 2 array ([x, y] or [latitude, longitude] each), got "
            f"shape {pts.shape}",
            field,
        )
    bad = ~np.isfinite(pts).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"place {i} is {pts[i].tolist()}: coordinates are finite numbers",
            f"{field}[{i}]",
            code="not_a_number",
        )
    if coordinates == "latlon":
        lat_bad = np.abs(pts[:, 0]) > 90
        if lat_bad.any():
            i = int(np.flatnonzero(lat_bad)[0])
            raise InputError(
                f"latitude {pts[i, 0]:g} lies outside [-90, 90] degrees (are latitude and "
                "longitude swapped?)",
                f"{field}[{i}]",
                code="latitude_range",
            )
        lon_bad = np.abs(pts[:, 1]) > 180
        if lon_bad.any():
            i = int(np.flatnonzero(lon_bad)[0])
            raise InputError(
                f"longitude {pts[i, 1]:g} lies outside [-180, 180] degrees",
                f"{field}[{i}]",
                code="longitude_range",
            )
    return pts


class LocalProjection:
    """The equirectangular projection around ``(lat0, lon0)`` onto a plane in kilometres.

    ``x = R (λ − λ₀) cos φ₀`` (east), ``y = R (φ − φ₀)`` (north), angles in radians and
    ``R`` = :data:`~privopt.model.metric.EARTH_RADIUS_KM`. Accurate for a city or a region
    (see the module docstring); a map across the antimeridian is refused.

    Parameters
    ----------
    lat0, lon0 : float
        The centre, in degrees.
    """

    def __init__(self, lat0: float, lon0: float):
        self.lat0, self.lon0 = float(lat0), float(lon0)
        self._scale_x = EARTH_RADIUS_KM * math.cos(math.radians(self.lat0)) * math.pi / 180
        self._scale_y = EARTH_RADIUS_KM * math.pi / 180

    @classmethod
    def around(cls, latlon: np.ndarray, field: str = "points") -> LocalProjection:
        """The projection centred on the bounding box of ``latlon`` (checked places).

        Parameters
        ----------
        latlon : numpy.ndarray
            ``n × 2`` latitudes and longitudes in degrees.
        field : str

        Returns
        -------
        LocalProjection
        """
        lat, lon = latlon[:, 0], latlon[:, 1]
        if lon.max() - lon.min() > 180:
            raise InputError(
                "the places span more than 180° of longitude (across the antimeridian?): "
                "a map is projected around its centre, so split it or shift the longitudes",
                field,
            )
        if max(abs(lat.max()), abs(lat.min())) >= 89.9:
            raise InputError("a map at a pole cannot be projected to a plane", field)
        return cls(0.5 * (lat.min() + lat.max()), 0.5 * (lon.min() + lon.max()))

    def to_plane(self, latlon) -> np.ndarray:
        """``[x, y]`` in km for ``[latitude, longitude]`` in degrees.

        Parameters
        ----------
        latlon : array_like
            ``n × 2``.

        Returns
        -------
        numpy.ndarray
        """
        pts = np.asarray(latlon, dtype=float).reshape(-1, 2)
        return np.stack(
            [(pts[:, 1] - self.lon0) * self._scale_x, (pts[:, 0] - self.lat0) * self._scale_y],
            axis=1,
        )

    def to_latlon(self, xy) -> np.ndarray:
        """``[latitude, longitude]`` in degrees for ``[x, y]`` in km (inverse of
        :meth:`to_plane`).

        Parameters
        ----------
        xy : array_like
            ``n × 2``.

        Returns
        -------
        numpy.ndarray
        """
        pts = np.asarray(xy, dtype=float).reshape(-1, 2)
        return np.stack(
            [self.lat0 + pts[:, 1] / self._scale_y, self.lon0 + pts[:, 0] / self._scale_x],
            axis=1,
        )

    def __repr__(self) -> str:
        return f"LocalProjection(lat0={self.lat0:.6g}, lon0={self.lon0:.6g})"


def pairwise_distances(a, b, norm: str = "euclidean", field: str = "points") -> np.ndarray:
    """Distances between the rows of ``a`` and of ``b``.

    Parameters
    ----------
    a, b : array_like
        ``n × 2`` and ``m × 2``: planar ``[x, y]``, or ``[latitude, longitude]`` in degrees
        for ``haversine``.
    norm : {"euclidean", "manhattan", "haversine"}
        ``haversine`` is the great-circle distance in km on a sphere of radius
        :data:`~privopt.model.metric.EARTH_RADIUS_KM`.
    field : str
        The argument named when the matrix would exceed the memory bound.

    Returns
    -------
    numpy.ndarray
        ``n × m``.
    """
    a = np.asarray(a, dtype=float).reshape(-1, 2)
    b = np.asarray(b, dtype=float).reshape(-1, 2)
    check_allocation(
        24.0 * a.shape[0] * b.shape[0],
        f"the {a.shape[0]:,} × {b.shape[0]:,} distances between places",
        field,
        "fewer places or outputs (a coarser grid)",
    )
    if norm == "euclidean":
        return np.hypot(a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1])
    if norm == "manhattan":
        return np.abs(a[:, None, 0] - b[None, :, 0]) + np.abs(a[:, None, 1] - b[None, :, 1])
    if norm == "haversine":
        lat_a, lon_a = np.radians(a[:, 0])[:, None], np.radians(a[:, 1])[:, None]
        lat_b, lon_b = np.radians(b[:, 0])[None, :], np.radians(b[:, 1])[None, :]
        h = (
            np.sin((lat_a - lat_b) / 2) ** 2
            + np.cos(lat_a) * np.cos(lat_b) * np.sin((lon_a - lon_b) / 2) ** 2
        )
        return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
    raise InputError(
        f"unknown norm {norm!r}; valid: {', '.join(LOCATION_NORMS)}",
        "norm",
        suggestions=close_matches(norm, LOCATION_NORMS),
    )


def _positive(value, field: str) -> float:
    """``value`` as a positive finite float; else an :class:`InputError` named ``field``,
    code ``"not_a_number"`` (text, a boolean, NaN, infinity) or ``"not_positive"`` (zero or
    negative)."""
    number = as_number(value, field, f"must be a positive number, got {value!r}")
    if not math.isfinite(number):
        raise InputError(f"must be a positive number, got {value!r}", field, code="not_a_number")
    if number <= 0:
        raise InputError(f"must be a positive number, got {value!r}", field, code="not_positive")
    return number


def _count(value, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"must be a positive integer, got {value!r}", field)
    return int(value)


def _pair(value, field: str) -> tuple[float, float]:
    try:
        x, y = (float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"must be a pair of numbers [x, y], got {value!r}", field) from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InputError(f"must be finite numbers, got {value!r}", field, code="not_a_number")
    return x, y


# --- output grids ------------------------------------------------------------------------------
class OutputGrid:
    """``rows × cols`` square output cells of side ``cell_size`` from the corner ``origin``.

    A mechanism with an output grid reports a cell of it (its centre is the point reported).
    Cell ``(r, c)`` is output ``r·cols + c``, labelled ``"o{r},{c}"``.

    Parameters
    ----------
    rows, cols : int
        Numbers of rows and columns, each ``≥ 1``.
    cell_size : float
        The side of a cell (the map's unit; km for a geographic map).
    origin : pair of float, optional
        The corner of cell ``(0, 0)`` with the least ``x`` and ``y``. Default: the corner of
        the map the grid is given to (its least ``x`` and ``y``; ``(0, 0)`` on its own).
    field : str
        The key named in messages.
    """

    def __init__(
        self,
        rows: int,
        cols: int,
        cell_size: float = 1.0,
        origin: Sequence[float] | None = None,
        field: str = "outputs",
    ):
        self.rows = _count(rows, f"{field}.rows")
        self.cols = _count(cols, f"{field}.cols")
        self.cell_size = _positive(cell_size, f"{field}.cell_size")
        #: Whether the origin was given (else the map's corner is taken).
        self.anchored = origin is not None
        self.origin = _pair((0.0, 0.0) if origin is None else origin, f"{field}.origin")
        self.field = field
        if self.rows * self.cols > MAX_CELLS:
            raise InputError(
                f"{self.rows} × {self.cols} cells: more than {MAX_CELLS:,} (is the cell size in "
                "the map's unit?)",
                field,
            )

    @classmethod
    def covering(
        cls, bounds: Sequence[float], cell_size: float, field: str = "outputs"
    ) -> OutputGrid:
        """The fewest cells of side ``cell_size`` from the corner of ``bounds`` that cover it.

        Parameters
        ----------
        bounds : sequence of float
            ``(x_min, y_min, x_max, y_max)`` of the map.
        cell_size : float
        field : str

        Returns
        -------
        OutputGrid
        """
        size = _positive(cell_size, f"{field}.cell_size")
        x0, y0, x1, y1 = (float(v) for v in bounds)
        cols = max(1, math.ceil((x1 - x0) / size * (1 - COVER_TOLERANCE)))
        rows = max(1, math.ceil((y1 - y0) / size * (1 - COVER_TOLERANCE)))
        return cls(rows, cols, size, (x0, y0), field)

    def at_corner_of(self, bounds: Sequence[float]) -> OutputGrid:
        """This grid, with its origin at the corner ``(x_min, y_min)`` of ``bounds`` unless
        its origin was given.

        Parameters
        ----------
        bounds : sequence of float
            ``(x_min, y_min, x_max, y_max)`` of the map.

        Returns
        -------
        OutputGrid
        """
        if self.anchored:
            return self
        corner = (float(bounds[0]), float(bounds[1]))
        return OutputGrid(self.rows, self.cols, self.cell_size, corner, self.field)

    @property
    def size(self) -> int:
        """The number of cells."""
        return self.rows * self.cols

    @property
    def labels(self) -> list[str]:
        """``"o{r},{c}"`` for every cell, row by row."""
        return [f"o{r},{c}" for r in range(self.rows) for c in range(self.cols)]

    @property
    def points(self) -> np.ndarray:
        """The cell centres, ``size × 2``."""
        r, c = np.divmod(np.arange(self.size), self.cols)
        x0, y0 = self.origin
        return np.stack([x0 + (c + 0.5) * self.cell_size, y0 + (r + 0.5) * self.cell_size], 1)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(x_min, y_min, x_max, y_max)`` of the cells."""
        x0, y0 = self.origin
        return (x0, y0, x0 + self.cols * self.cell_size, y0 + self.rows * self.cell_size)

    @property
    def x_edges(self) -> np.ndarray:
        """The ``cols + 1`` boundaries of the columns."""
        return self.origin[0] + self.cell_size * np.arange(self.cols + 1)

    @property
    def y_edges(self) -> np.ndarray:
        """The ``rows + 1`` boundaries of the rows."""
        return self.origin[1] + self.cell_size * np.arange(self.rows + 1)

    def check_covers(self, bounds: Sequence[float], field: str) -> None:
        """Raise unless the cells cover the rectangle ``bounds``.

        Parameters
        ----------
        bounds : sequence of float
            ``(x_min, y_min, x_max, y_max)`` of the map.
        field : str

        Raises
        ------
        InputError
            Code ``"outputs_do_not_cover"``.
        """
        x0, y0, x1, y1 = (float(v) for v in bounds)
        ox0, oy0, ox1, oy1 = self.bounds
        scale = max(abs(v) for v in (x0, y0, x1, y1, ox0, oy0, ox1, oy1)) or 1.0
        tol = COVER_TOLERANCE * scale
        if ox0 > x0 + tol or oy0 > y0 + tol or ox1 < x1 - tol or oy1 < y1 - tol:
            raise InputError(
                f"the output grid spans x in [{ox0:g}, {ox1:g}], y in [{oy0:g}, {oy1:g}] but "
                f"the map spans x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}]: every place needs "
                "an output cell over it (more rows or columns, a larger cell_size, or another "
                "origin)",
                field,
                code="outputs_do_not_cover",
            )

    def as_map(self, values) -> np.ndarray:
        """A vector over the output cells as a ``rows × cols`` array (row 0 first).

        Parameters
        ----------
        values : array_like

        Returns
        -------
        numpy.ndarray
        """
        arr = np.asarray(values, dtype=float)
        if arr.shape != (self.size,):
            raise InputError(
                f"expected {self.size} values (one per output cell), got {arr.shape}", "values"
            )
        return arr.reshape(self.rows, self.cols)

    def __repr__(self) -> str:
        return (
            f"OutputGrid({self.rows} × {self.cols}, cell_size={self.cell_size:g}, "
            f"origin={self.origin})"
        )


# --- maps --------------------------------------------------------------------------------------
class _LocationMap:
    """What :class:`LocationGrid` and :class:`LocationPoints` share: secrets at planar points
    (:attr:`planar_points`), an optional projection from latitude/longitude, and outputs."""

    planar_points: np.ndarray
    projection: LocalProjection | None
    output_grid: OutputGrid | None
    output_points: np.ndarray
    output_labels: list[str]
    field: str
    #: The norm of :meth:`metric` and :meth:`distortion` when none is given.
    default_norm = "euclidean"

    @property
    def size(self) -> int:
        """The number of secrets (places)."""
        return int(self.planar_points.shape[0])

    @property
    def n_outputs(self) -> int:
        """The number of outputs."""
        return int(self.output_points.shape[0])

    @property
    def coordinates(self) -> str:
        """``"latlon"`` for a geographic map (planar coordinates in km), else ``"xy"``."""
        return "xy" if self.projection is None else "latlon"

    @property
    def outputs_are_secrets(self) -> bool:
        """Whether the outputs are the secrets themselves (the default)."""
        return self._outputs_are_secrets

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(x_min, y_min, x_max, y_max)`` of the map (planar coordinates)."""
        raise NotImplementedError

    def _set_outputs(self, outputs, own_grid: OutputGrid | None, own_labels) -> None:
        """Normalise ``outputs`` (``None``, an :class:`OutputGrid` or points)."""
        field = f"{self.field}.outputs"
        self._outputs_are_secrets = outputs is None
        if outputs is None:
            self.output_grid = own_grid
            self.output_points = self.planar_points
            self.output_labels = list(own_labels)
        elif isinstance(outputs, OutputGrid):
            outputs = outputs.at_corner_of(self.bounds)
            outputs.check_covers(self.bounds, field)
            self.output_grid = outputs
            self.output_points = outputs.points
            self.output_labels = outputs.labels
        else:
            given = check_coordinates(outputs, self.coordinates, f"{field}.points")
            plane = given if self.projection is None else self.projection.to_plane(given)
            _check_distinct(plane, f"{field}.points", "output points")
            self.output_grid = None
            self.output_points = plane
            self.output_labels = [f"p{i}" for i in range(plane.shape[0])]

    def _coordinates_for(self, points: np.ndarray, norm: str) -> np.ndarray:
        if norm not in LOCATION_NORMS:
            raise InputError(
                f"unknown norm {norm!r}; valid: {', '.join(LOCATION_NORMS)}",
                "norm",
                suggestions=close_matches(norm, LOCATION_NORMS),
            )
        if norm == "haversine":
            if self.projection is None:
                raise InputError(
                    "haversine needs a geographic map (latitude/longitude places)", "norm"
                )
            return self.projection.to_latlon(points)
        return points

    def metric(self, norm: str | None = None) -> Metric:
        """The distance between the secrets (the metric of metric privacy).

        Parameters
        ----------
        norm : {"euclidean", "manhattan", "haversine"}, optional
            Default :attr:`default_norm`. ``haversine`` (great circle, km) needs a geographic
            map; the others are taken in the plane (km for a geographic map).

        Returns
        -------
        Metric
        """
        norm = norm or self.default_norm
        coords = self._coordinates_for(self.planar_points, norm)
        return Metric.from_points(coords, norm, labels=self.labels, field="privacy.metric")

    def distortion(self, norm: str | None = None, power: float = 1.0) -> Distortion:
        """``d(x, u) = dist(x, u)^power`` from each secret to each output.

        Parameters
        ----------
        norm : {"euclidean", "manhattan", "haversine"}, optional
            Default :attr:`default_norm`.
        power : float
            1: expected distance (the quality loss of [Andres-Geo]); 2: squared distance.

        Returns
        -------
        Distortion
            ``secrets × outputs``, labelled by the outputs.
        """
        norm = norm or self.default_norm
        power = _positive(power, "power")
        secrets = self._coordinates_for(self.planar_points, norm)
        outputs = self._coordinates_for(self.output_points, norm)
        if self._outputs_are_secrets:  # the metric's own matrix: exactly symmetric
            d = self.metric(norm).matrix
        else:
            d = pairwise_distances(secrets, outputs, norm, self.field)
        if power != 1.0:
            d = d**power
        # d is this call's own array (the metric built here is not kept): no second copy
        return Distortion(d, output_labels=self.output_labels, copy=False)

    @property
    def labels(self) -> list[str]:
        """The names of the secrets."""
        raise NotImplementedError

    def prior(self) -> Prior:
        """The prior over the secrets, labelled by :attr:`labels`.

        Returns
        -------
        Prior
        """
        raise NotImplementedError


def _check_distinct(points: np.ndarray, field: str, what: str) -> None:
    order = np.lexsort((points[:, 1], points[:, 0]))
    ordered = points[order]
    same = np.all(ordered[1:] == ordered[:-1], axis=1)
    if same.any():
        at = int(np.flatnonzero(same)[0])
        i, j = sorted((int(order[at]), int(order[at + 1])))
        raise InputError(
            f"{what} {i} and {j} are at the same place {points[i].tolist()}; give each place "
            "once (merge their weights)",
            f"{field}[{j}]",
            code="duplicate_point",
        )


class LocationGrid(_LocationMap):
    """``rows × cols`` square map cells (see the module docstring).

    Parameters
    ----------
    rows, cols : int
        Numbers of rows and columns of cells, each ``≥ 1``.
    cell_size : float
        The side of a cell, in the unit of distances: positive and finite (default 1).
    counts : array_like, optional
        ``rows × cols`` non-negative counts (or weights) per cell; the prior is them
        normalised. Default: uniform.
    field : str
        The key named in messages.
    origin : pair of float
        The corner of cell ``(0, 0)`` (least ``x`` and ``y``); default ``(0, 0)``.
    outputs : OutputGrid or array_like, optional
        What a mechanism reports: default the cells themselves; an :class:`OutputGrid` that
        covers the map, or ``m × 2`` output points (in the map's coordinates: latitude and
        longitude for a geographic map).
    projection : LocalProjection, optional
        For a geographic map (from :meth:`from_checkins`): the plane of the cells, in km.

    Raises
    ------
    InputError
        Malformed sizes or counts; an output grid that does not cover the map (code
        ``"outputs_do_not_cover"``).
    """

    def __init__(
        self,
        rows: int,
        cols: int,
        cell_size: float = 1.0,
        counts=None,
        field: str = "grid",
        *,
        origin: Sequence[float] = (0.0, 0.0),
        outputs=None,
        projection: LocalProjection | None = None,
    ):
        self.field = field
        self.rows = _count(rows, f"{field}.rows")
        self.cols = _count(cols, f"{field}.cols")
        self.cell_size = _positive(cell_size, f"{field}.cell_size")
        self.origin = _pair(origin, f"{field}.origin")
        if self.rows * self.cols > MAX_CELLS:
            raise InputError(
                f"{self.rows} × {self.cols} cells: more than {MAX_CELLS:,} (is the cell size in "
                "the map's unit?)",
                field,
            )
        self.projection = projection
        if counts is None:
            weights = np.ones((self.rows, self.cols))
        else:
            try:
                weights = np.array(counts, dtype=float)
            except (TypeError, ValueError):
                raise InputError(
                    "counts must be a matrix of numbers", f"{field}.counts", code="not_a_number"
                ) from None
            if weights.shape != (self.rows, self.cols):
                raise InputError(
                    f"counts have shape {weights.shape}, the grid is {self.rows} × {self.cols}",
                    f"{field}.counts",
                )
            if not np.isfinite(weights).all():
                raise InputError(
                    "counts must be finite and non-negative", f"{field}.counts", "not_a_number"
                )
            if (weights < 0).any():
                raise InputError(
                    "counts must be finite and non-negative", f"{field}.counts", "negative_weight"
                )
            if not (weights > 0).any():  # a sum of counts near 1e308 overflows: not asked
                raise InputError("counts are all zero", f"{field}.counts", "zero_total_weight")
        self.counts = weights
        self.planar_points = self.points
        self._set_outputs(outputs, self.cells, self.labels)

    # --- construction from check-ins ------------------------------------------------------
    @classmethod
    def from_checkins(
        cls,
        checkins,
        cell_size: float,
        *,
        coordinates: str | None = None,
        bounds: Sequence[float] | None = None,
        outputs=None,
        field: str = "checkins",
    ) -> LocationGrid:
        """Bin raw check-ins (one place per visit) into a grid prior: counts per cell.

        Parameters
        ----------
        checkins : array_like or LocationTable
            ``n × 2`` places (``[x, y]`` or ``[latitude, longitude]``), or a table from
            :func:`~privopt.model.location_csv.read_location_csv` (its weights, if any,
            count each row that many times; its line numbers name bad rows).
        cell_size : float
            The side of a cell: in the unit of ``x, y``, or in **km** for latitude/longitude.
        coordinates : {"xy", "latlon"}, optional
            Default: the table's, else ``"xy"``.
        bounds : sequence of float, optional
            The map: ``(x_min, y_min, x_max, y_max)``, or ``(south, west, north, east)`` in
            degrees. Default: the bounding box of the check-ins. A check-in outside is an
            error (code ``"outside_bounds"``).
        outputs : OutputGrid or array_like, optional
            As for :class:`LocationGrid` (output points in the check-ins' coordinates; an
            output grid in the grid's plane, whose origin is the map's south-west corner for a
            geographic map).
        field : str
            The key named in messages.

        Returns
        -------
        LocationGrid
            Cells from the corner ``(x_min, y_min)``; for latitude/longitude, the plane is the
            :class:`LocalProjection` around the centre of the bounds (x east, y north, km)
            and row 0 is the southernmost row.
        """
        lines = None
        weights = None
        if hasattr(checkins, "points") and hasattr(checkins, "coordinates"):
            table = checkins
            if coordinates is not None and coordinates != table.coordinates:
                raise InputError(
                    f"the table holds {table.coordinates} places, not {coordinates}",
                    "coordinates",
                )
            coordinates = table.coordinates
            pts = table.points
            weights = table.weights
            lines = table.lines
        else:
            coordinates = coordinates or "xy"
            pts = check_coordinates(checkins, coordinates, field)
        size = _positive(cell_size, f"{field}.cell_size")

        def name(i: int) -> str:
            if lines is None:
                return f"{field}[{i}]"
            return f"{checkins.source}[line {int(lines[i])}]"

        if bounds is None:
            low, high = pts.min(axis=0), pts.max(axis=0)
        else:
            try:
                values = [float(v) for v in bounds]
            except (TypeError, ValueError):
                raise InputError(
                    f"bounds are 4 numbers, got {bounds!r}", f"{field}.bounds"
                ) from None
            if len(values) != 4 or not all(math.isfinite(v) for v in values):
                raise InputError(f"bounds are 4 finite numbers, got {bounds!r}", f"{field}.bounds")
            low, high = np.array(values[:2]), np.array(values[2:])
            if np.any(low >= high):
                raise InputError(
                    "bounds are (x_min, y_min, x_max, y_max) or (south, west, north, east) "
                    "with each minimum below its maximum",
                    f"{field}.bounds",
                    code="inverted_bounds",
                )
            if coordinates == "latlon":
                check_coordinates([low, high], "latlon", f"{field}.bounds")
            outside = np.any((pts < low) | (pts > high), axis=1)
            if outside.any():
                i = int(np.flatnonzero(outside)[0])
                raise InputError(
                    f"the place {pts[i].tolist()} lies outside the bounds {list(bounds)} "
                    f"({int(outside.sum())} places do); widen the bounds or filter the data",
                    name(i),
                    code="outside_bounds",
                )
        projection = None
        plane = pts
        if coordinates == "latlon":
            corners = np.array([low, high])
            projection = LocalProjection.around(corners, field)
            plane = projection.to_plane(pts)
            (x0, y0), (x1, y1) = projection.to_plane(corners)
        else:
            (x0, y0), (x1, y1) = low, high
        cols = max(1, math.ceil((x1 - x0) / size * (1 - COVER_TOLERANCE)))
        rows = max(1, math.ceil((y1 - y0) / size * (1 - COVER_TOLERANCE)))
        if rows * cols > MAX_CELLS:
            raise InputError(
                f"{rows} × {cols} cells of side {size:g}: more than {MAX_CELLS:,} (is the cell "
                f"size in the map's unit{', km' if coordinates == 'latlon' else ''}?)",
                f"{field}.cell_size",
            )
        c = np.clip(np.floor((plane[:, 0] - x0) / size).astype(np.int64), 0, cols - 1)
        r = np.clip(np.floor((plane[:, 1] - y0) / size).astype(np.int64), 0, rows - 1)
        counts = np.zeros((rows, cols))
        np.add.at(counts, (r, c), 1.0 if weights is None else weights)
        if not (counts > 0).any():
            raise InputError(  # named by the table's file when read from one, as its rows are
                "the check-ins have zero total weight",
                checkins.source if lines is not None else field,
                "zero_total_weight",
            )
        return cls(
            rows,
            cols,
            size,
            counts,
            field=field,
            origin=(x0, y0),
            outputs=outputs,
            projection=projection,
        )

    # --- cells ----------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """The number of cells."""
        return self.rows * self.cols

    @property
    def labels(self) -> list[str]:
        """``"r,c"`` for every cell, row by row."""
        return [f"{r},{c}" for r in range(self.rows) for c in range(self.cols)]

    @property
    def points(self) -> np.ndarray:
        """Cell centres ``(x, y) = (x₀ + (c + ½)·size, y₀ + (r + ½)·size)``, ``size × 2``."""
        return self.cells.points

    @property
    def cells(self) -> OutputGrid:
        """The cells as an :class:`OutputGrid` (their geometry), labelled ``"r,c"`` by
        :attr:`labels`."""
        return OutputGrid(self.rows, self.cols, self.cell_size, self.origin, self.field)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(x_min, y_min, x_max, y_max)`` of the cells."""
        return self.cells.bounds

    def prior(self) -> Prior:
        """The counts normalised, as a :class:`~privopt.model.Prior` labelled by cell.

        Returns
        -------
        Prior
        """
        probs = normalised_weights(self.counts.ravel())  # no overflow for huge counts
        return Prior(probs, labels=self.labels)

    def grid_edges(self) -> np.ndarray:
        """The edges of the 4-neighbour grid graph: ``[a, b, cell_size]`` per pair of cells
        that share a side (its shortest-path metric is the Manhattan distance).

        Returns
        -------
        numpy.ndarray
            ``n_edges × 3`` (indices as floats, then the weight).
        """
        index = np.arange(self.size).reshape(self.rows, self.cols)
        across = np.stack([index[:, :-1].ravel(), index[:, 1:].ravel()], axis=1)
        down = np.stack([index[:-1, :].ravel(), index[1:, :].ravel()], axis=1)
        pairs = np.concatenate([across, down]).astype(float)
        return np.concatenate([pairs, np.full((pairs.shape[0], 1), self.cell_size)], axis=1)

    def metric(self, norm: str | None = None) -> Metric:
        """The distance between cell centres.

        ``manhattan`` is built as the shortest-path metric of the 4-neighbour grid graph
        (:meth:`grid_edges`; the same distances), so that its constraint pairs are the
        graph's edges.

        Parameters
        ----------
        norm : {"euclidean", "manhattan", "haversine"}, optional
            Default ``"euclidean"``; ``haversine`` needs a geographic grid
            (:meth:`from_checkins` on latitude/longitude).

        Returns
        -------
        Metric
        """
        norm = norm or self.default_norm
        if norm == "manhattan" and self.size > 1:
            return self._manhattan()
        if norm != "euclidean":
            return super().metric(norm)
        d = point_distances(
            self.planar_points,
            "euclidean",
            self.field,
            f"the cells of a {self.rows} × {self.cols} grid",
        )
        # the cells form a lattice: its constraint pairs and spanners are found from it
        return Metric(
            d,
            self.labels,
            "euclidean",
            check=False,
            lattice=(self.rows, self.cols, np.arange(self.size)),
            copy=False,
        )

    def _manhattan(self) -> Metric:
        """The Manhattan distance between centres, which is the path metric of the grid's
        4-neighbour graph (:meth:`grid_edges`, edges of length ``cell_size``): its constraint
        pairs are those edges, found without the ``O(k³)`` search of a general metric or a
        shortest-path search."""
        k = self.size
        check_allocation(
            24.0 * k * k,
            f"the {k:,} × {k:,} distances between the cells of a {self.rows} × {self.cols} grid",
            self.field,
            "a coarser grid",
        )
        r, c = np.divmod(np.arange(k), self.cols)
        d = np.abs(r[:, None] - r[None, :]).astype(float)
        d += np.abs(c[:, None] - c[None, :])
        d *= self.cell_size
        edges = self.grid_edges()
        a, b = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
        return Metric(d, self.labels, "manhattan", check=False, edges=(a, b), copy=False)

    def as_map(self, values) -> np.ndarray:
        """A vector over the cells as a ``rows × cols`` array (row 0 first).

        Parameters
        ----------
        values : array_like
            One value per cell.

        Returns
        -------
        numpy.ndarray
        """
        arr = np.asarray(values, dtype=float)
        if arr.shape != (self.size,):
            raise InputError(
                f"expected {self.size} values (one per cell), got {arr.shape}", "values"
            )
        return arr.reshape(self.rows, self.cols)

    def __repr__(self) -> str:
        extra = "" if self.outputs_are_secrets else f", {self.n_outputs} outputs"
        return f"LocationGrid({self.rows} × {self.cols}, cell_size={self.cell_size:g}{extra})"


class LocationPoints(_LocationMap):
    """Given places as the secrets, with a weight each (see the module docstring).

    Parameters
    ----------
    points : array_like
        ``k × 2``: ``[x, y]``, or ``[latitude, longitude]`` in degrees; distinct.
    weights : array_like, optional
        ``k`` non-negative weights (e.g. visits); the prior is them normalised. Default:
        uniform.
    coordinates : {"xy", "latlon"}
    labels : sequence of str, optional
        Names of the places; default ``"0", "1", …``.
    outputs : OutputGrid or array_like, optional
        Default: the places themselves. An :class:`OutputGrid` (planar; km around the map's
        centre for latitude/longitude, see :attr:`projection`) must cover the places'
        bounding box; output points are in the places' coordinates.
    field : str
        The key named in messages.

    Raises
    ------
    InputError
        Codes ``"not_a_number"``, ``"latitude_range"``, ``"longitude_range"``,
        ``"duplicate_point"``, ``"negative_weight"``, ``"outputs_do_not_cover"``.
    """

    def __init__(
        self,
        points,
        weights=None,
        *,
        coordinates: str = "xy",
        labels: Sequence[str] | None = None,
        outputs=None,
        field: str = "points",
    ):
        self.field = field
        self.points = check_coordinates(points, coordinates, field)
        k = self.points.shape[0]
        if weights is None:
            self.weights = np.ones(k)
        else:
            try:
                self.weights = np.array(weights, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise InputError(
                    "weights are numbers", f"{field}.weights", code="not_a_number"
                ) from None
            if self.weights.shape != (k,):
                raise InputError(f"{self.weights.size} weights for {k} places", f"{field}.weights")
            if not np.isfinite(self.weights).all():
                raise InputError("weights are finite", f"{field}.weights", code="not_a_number")
            if (self.weights < 0).any():
                i = int(np.flatnonzero(self.weights < 0)[0])
                raise InputError(
                    f"weight {i} is {self.weights[i]:g} < 0",
                    f"{field}.weights",
                    code="negative_weight",
                )
            if not (self.weights > 0).any():
                raise InputError(
                    "the weights are all zero", f"{field}.weights", code="zero_total_weight"
                )
        self._labels = [str(i) for i in range(k)] if labels is None else [str(s) for s in labels]
        if len(self._labels) != k or len(set(self._labels)) != k:
            raise InputError(f"give {k} distinct labels", f"{field}.labels")
        if coordinates == "latlon":
            self.projection = LocalProjection.around(self.points, field)
            self.planar_points = self.projection.to_plane(self.points)
            self.default_norm = "haversine"
        else:
            self.projection = None
            self.planar_points = self.points
        _check_distinct(self.points, field, "places")
        self._set_outputs(outputs, None, self._labels)

    @classmethod
    def from_csv(
        cls,
        path,
        *,
        coordinates: str | None = None,
        columns: tuple | None = None,
        outputs=None,
    ) -> LocationPoints:
        """Places (with their ``weight`` and ``label`` columns, if any) from a CSV file read
        by :func:`~privopt.model.location_csv.read_location_csv`.

        Parameters
        ----------
        path : str or path-like
        coordinates : {"latlon", "xy"}, optional
            Required without a header that names the columns.
        columns : tuple, optional
            The coordinate columns (and a weight column): indices or header names.
        outputs : OutputGrid or array_like, optional
            As for :class:`LocationPoints`.

        Returns
        -------
        LocationPoints
        """
        from privopt.model.location_csv import read_location_csv

        table = read_location_csv(path, coordinates=coordinates, columns=columns)
        return cls(
            table.points,
            table.weights,
            coordinates=table.coordinates,
            labels=table.labels,
            outputs=outputs,
            field=table.source,
        )

    @property
    def labels(self) -> list[str]:
        """The names of the places."""
        return list(self._labels)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """The bounding box ``(x_min, y_min, x_max, y_max)`` of the places (planar)."""
        low, high = self.planar_points.min(axis=0), self.planar_points.max(axis=0)
        return (float(low[0]), float(low[1]), float(high[0]), float(high[1]))

    def prior(self) -> Prior:
        """The weights normalised, labelled by place.

        Returns
        -------
        Prior
        """
        return Prior(normalised_weights(self.weights), labels=self._labels)

    def __repr__(self) -> str:
        extra = "" if self.outputs_are_secrets else f", {self.n_outputs} outputs"
        return f"LocationPoints({self.size} places, {self.coordinates}{extra})"
