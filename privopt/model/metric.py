"""Metrics on the secrets, for metric privacy (d-privacy, geo-indistinguishability).

A :class:`Metric` holds a dense ``k × k`` distance matrix (an extended pseudometric: zero
distances between distinct secrets and ``+inf`` between unrelated ones are allowed) and the
*constraint pairs* of metric privacy: the pairs ``(x, x')`` whose constraint
``p(u|x) ≤ e^{ε d(x,x')} p(u|x')`` is not implied by constraints along a shorter route
([Chatzikokolakis-Andres-Bordenabe-Palamidessi], Def. of d-privacy; the reduction to
the pairs without an intermediate point on a geodesic is the stretch-1 case of
[Bordenabe-Chatzikokolakis-Palamidessi], Sec. 5). If ``d(x,x'') = d(x,x') + d(x',x'')``, the two
constraints through ``x'`` multiply to the constraint of ``(x, x'')``, so the pairs with no
such ``x'`` imply all the others. For the shortest-path metric of a weighted graph these are
(a subset of) the edges.

Three constructors: :meth:`Metric.from_matrix` (checked: square, non-negative, zero
diagonal, symmetric, triangle inequality), :meth:`Metric.from_points` (``euclidean``,
``manhattan`` or ``haversine`` on latitude/longitude in degrees, kilometres) and
:meth:`Metric.from_graph` (weighted edges; the shortest-path metric). :meth:`Metric.spanner`
builds a greedy δ-spanner ([Althofer-Das-Dobkin-Joseph-Soares]; used for
geo-indistinguishability by [Bordenabe-Chatzikokolakis-Palamidessi], Sec. 5): a subgraph
whose path metric ``d_G`` satisfies ``d ≤ d_G ≤ δ·d``.
"""

from __future__ import annotations

__all__ = ["Metric", "MetricPairs", "METRIC_NORMS", "EARTH_RADIUS_KM", "point_distances"]

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from privopt._docstrings import sections_of
from privopt.errors import InputError, close_matches
from privopt.model._validate import as_number
from privopt.model.neighbors import NeighborRelation, pairs_within
from privopt.resources import check_allocation

#: Norms accepted by :meth:`Metric.from_points`.
METRIC_NORMS = ("euclidean", "manhattan", "haversine")
#: Mean Earth radius (km) of the haversine distance.
EARTH_RADIUS_KM = 6371.0088
#: Relative tolerance of the symmetry and triangle checks and of "on a geodesic".
METRIC_TOLERANCE = 1e-9
#: Largest alphabet whose triangle inequality / geodesic pairs are computed (O(k³) work).
MAX_METRIC_SIZE = 4000
#: Stretch of the 8-neighbour grid (king moves) as a spanner of the Euclidean distances
#: between cells: a path of ``dy`` diagonal and ``dx − dy`` straight steps against the
#: segment, at most ``√(4 − 2√2) ≈ 1.0824`` (at ``dx/dy = 1 + √2``).
KING_STRETCH = float(np.sqrt(4.0 - 2.0 * np.sqrt(2.0)))


class MetricPairs(NeighborRelation):
    """Ordered pairs ``(left[k], right[k])`` with a distance ``weights[k]`` each.

    The constraint of a pair is ``p(u|left) ≤ e^{ε·weights} p(u|right)``.

    Parameters
    ----------
    size : int
        Number of secrets.
    left, right : array_like of int
        The ends of the ordered pairs, entries in ``0 … size − 1`` (not checked).
    weights : array_like of float
        The distance of each pair, aligned with ``left`` and ``right``.
    kind : str
        How the pairs were made (default ``"metric"``; ``"spanner"`` for a spanner's edges).
    """

    def __init__(self, size: int, left, right, weights, kind: str = "metric"):
        super().__init__(size, left, right, kind)
        self.weights = np.asarray(weights, dtype=float)

    @sections_of(NeighborRelation.restricted, ("Parameters",))
    def restricted(self, keep: np.ndarray) -> MetricPairs:
        """Only the pairs whose two ends are both in ``keep`` (mask or index array).

        Returns
        -------
        MetricPairs
            On the same ``size`` secrets (not renumbered) and of the same ``kind``, with the
            kept pairs and their weights.
        """
        sel = pairs_within(self.size, self.left, self.right, keep)
        return MetricPairs(self.size, self.left[sel], self.right[sel], self.weights[sel], self.kind)

    def relabelled(self, keep: np.ndarray) -> MetricPairs:
        """The pairs inside ``keep`` (an index array), renumbered ``0..len(keep)-1``.

        Parameters
        ----------
        keep : numpy.ndarray
            Distinct integer indices of the secrets kept; secret ``keep[i]`` becomes ``i``.

        Returns
        -------
        MetricPairs
            On ``len(keep)`` secrets and of the same ``kind``, with the pairs whose two ends
            are in ``keep`` and their weights.
        """
        keep = np.asarray(keep, dtype=np.int64)
        rel = self.restricted(keep)
        position = np.full(self.size, -1, dtype=np.int64)
        position[keep] = np.arange(keep.size)
        return MetricPairs(
            keep.size, position[rel.left], position[rel.right], rel.weights, self.kind
        )


def _check_square(matrix: np.ndarray, field: str) -> None:
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise InputError(
            f"a metric is a square k × k matrix (one row and column per secret), got shape "
            f"{matrix.shape}",
            field,
        )


def _min_plus_rows(d: np.ndarray, rows: np.ndarray, skip_zero: bool) -> np.ndarray:
    """``min_k d[i,k] + d[k,j]`` for ``i ∈ rows`` (``skip_zero``: over ``k`` with both
    ``d[i,k] > 0`` and ``d[k,j] > 0``)."""
    block = d[rows][:, :, None] + d[None, :, :]  # i × k × j
    if skip_zero:
        zero = (d[rows] == 0)[:, :, None] | (d == 0)[None, :, :]
        block[zero] = np.inf
    return block.min(axis=1)


def point_distances(pts: np.ndarray, norm: str, field: str, what: str = "") -> np.ndarray:
    """The ``k × k`` distances between the rows of ``pts`` (a new array, exactly symmetric,
    zero diagonal), computed a block of rows at a time.

    The memory is checked first (:func:`~privopt.resources.check_allocation`): the result's
    ``8k²`` bytes, plus a ``k²``-byte mask of the checks that follow; the blocks add at most
    about 64 MB. (Broadcasting all pairs at once held ``k × k × dim`` differences: 121 GiB
    for a 300 × 300 map, raised as a ``MemoryError``.)

    Parameters
    ----------
    pts : numpy.ndarray
        ``k × dim`` finite coordinates (``haversine``: ``[latitude, longitude]`` in degrees,
        checked by the caller).
    norm : {"euclidean", "manhattan", "haversine"}
    field : str
        The key named in a refusal.
    what : str
        What the points are, for the refusal (default: ``k`` points).

    Returns
    -------
    numpy.ndarray
        ``d[i, j]``; ``d[i, j] == d[j, i]`` exactly (every formula is of ``|a − b|``).

    Raises
    ------
    InputError
        When the matrix would exceed the memory bound.
    """
    k = pts.shape[0]
    check_allocation(
        9.0 * k * k,
        f"the {k:,} × {k:,} distances between {what or f'{k:,} points'}",
        field,
        "fewer points (a coarser grid)",
    )
    d = np.empty((k, k))
    if norm == "haversine":
        lat, lon = np.radians(pts[:, 0]), np.radians(pts[:, 1])
        cos_lat = np.cos(lat)
    step = max(1, 2**22 // (k * max(pts.shape[1], 1)))  # ~32 MB of differences per block
    for start in range(0, k, step):
        rows = slice(start, min(k, start + step))
        if norm in ("euclidean", "manhattan"):
            block = d[rows]
            block[...] = 0.0
            for axis in range(pts.shape[1]):  # one coordinate at a time: no k × k × dim array
                delta = pts[rows, axis, None] - pts[None, :, axis]
                block += delta**2 if norm == "euclidean" else np.abs(delta)
            if norm == "euclidean":
                np.sqrt(block, out=block)
        else:  # |Δ| in the half-angle sines: the same value for (i, j) and (j, i)
            dlat = np.abs(lat[rows, None] - lat[None, :])
            dlon = np.abs(lon[rows, None] - lon[None, :])
            h = (
                np.sin(dlat / 2) ** 2
                + cos_lat[rows, None] * cos_lat[None, :] * np.sin(dlon / 2) ** 2
            )
            d[rows] = 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
    np.fill_diagonal(d, 0.0)
    return d


def _blocks(k: int):
    step = max(1, int(2**23 // max(k * k, 1)))
    for start in range(0, k, step):
        yield np.arange(start, min(k, start + step))


class Metric:
    """A metric on ``k`` secrets (see the module docstring).

    Parameters
    ----------
    matrix : array_like
        ``k × k`` distances, checked (:meth:`from_matrix`).
    labels : sequence of str, optional
        Names of the secrets.
    kind : str
        How it was given (``"matrix"``, ``"euclidean"``, ``"graph"``, …), for messages.
    field : str
        The key named in error messages.
    check : bool
        Check symmetry and the triangle inequality (the constructors from points and graphs
        are metrics by construction).
    edges : tuple of numpy.ndarray, optional
        For a graph metric, the undirected edges ``(a, b)``: the constraint pairs are the
        edges as short as the path between their ends.
    lattice : tuple, optional
        For Euclidean distances between cells of a ``rows × cols`` grid: ``(rows, cols,
        cells)`` with ``cells`` the grid cell (row by row) of each secret. The constraint
        pairs and the spanners are then found from the lattice (:meth:`pairs`,
        :meth:`spanner`) instead of by the ``O(k³)`` search.
    copy : bool
        ``False``: ``matrix`` is a float array the metric may keep as it is (made
        read-only), for the constructors that built it (no second ``k × k`` copy).
    """

    def __init__(
        self,
        matrix,
        labels: Sequence[str] | None = None,
        kind: str = "matrix",
        field: str = "privacy.metric",
        check: bool = True,
        edges: tuple[np.ndarray, np.ndarray] | None = None,
        lattice: tuple[int, int, np.ndarray] | None = None,
        copy: bool = True,
    ):
        try:
            d = np.array(matrix, dtype=float, copy=True if copy else None)
        except (TypeError, ValueError):
            raise InputError(
                "a metric is a square matrix of non-negative numbers (list of rows)", field
            ) from None
        _check_square(d, field)
        if np.isnan(d).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(d))[0])
            raise InputError(f"entry {where} is not a number", field)
        if (d < 0).any():
            where = tuple(int(i) for i in np.argwhere(d < 0)[0])
            raise InputError(
                f"entry {where} is {d[where]:.6g} < 0: distances are non-negative", field
            )
        if np.any(np.diag(d) != 0):
            i = int(np.flatnonzero(np.diag(d) != 0)[0])
            raise InputError(
                f"d[{i}, {i}] = {d[i, i]:.6g}: the distance of a secret to itself must be 0",
                field,
            )
        self.kind = kind
        self.field = field
        self.labels = None if labels is None else [str(s) for s in labels]
        if self.labels is not None and len(self.labels) != d.shape[0]:
            raise InputError(
                f"{len(self.labels)} labels for a {d.shape[0]} × {d.shape[0]} metric", field
            )
        if check:
            self._check(d, field)
        self.matrix = d
        self.matrix.setflags(write=False)
        self._edges = edges
        self._lattice = lattice

    @staticmethod
    def _check(d: np.ndarray, field: str) -> None:
        # inf − inf (two unrelated secrets) is nan by design here: no warning for it
        with np.errstate(invalid="ignore", over="ignore"):
            Metric._check_values(d, field)

    @staticmethod
    def _check_values(d: np.ndarray, field: str) -> None:
        scale = np.where(np.isfinite(d), d, 0.0).max() or 1.0
        tol = METRIC_TOLERANCE * scale
        both_inf = np.isinf(d) & np.isinf(d.T)
        asym = (np.abs(np.where(both_inf, 0.0, d - d.T)) > tol) | (np.isinf(d) != np.isinf(d.T))
        if asym.any():
            i, j = (int(v) for v in np.argwhere(asym)[0])
            raise InputError(
                f"the metric is not symmetric: d[{i}, {j}] = {d[i, j]:.6g} but d[{j}, {i}] = "
                f"{d[j, i]:.6g}; give d[x, x'] = d[x', x]",
                field,
            )
        k = d.shape[0]
        if k > MAX_METRIC_SIZE:
            raise InputError(
                f"{k} secrets: the triangle inequality check is O(k³); give points or a graph "
                f"instead of a matrix for more than {MAX_METRIC_SIZE} secrets",
                field,
            )
        for rows in _blocks(k):
            through = _min_plus_rows(d, rows, skip_zero=False)
            bad = through < d[rows] - tol
            if bad.any():
                a, j = (int(v) for v in np.argwhere(bad)[0])
                i = int(rows[a])
                via = int(np.argmin(d[i] + d[:, j]))
                raise InputError(
                    f"the triangle inequality fails: d[{i}, {j}] = {d[i, j]:.6g} > d[{i}, {via}]"
                    f" + d[{via}, {j}] = {d[i, via] + d[via, j]:.6g}; a metric needs "
                    "d(x, z) ≤ d(x, y) + d(y, z) (use a graph's edges to get its path metric)",
                    field,
                )

    # --- constructors ---------------------------------------------------------------------
    @classmethod
    def from_matrix(cls, matrix, labels=None, field: str = "matrix") -> Metric:
        """A metric from its distance matrix, checked.

        Parameters
        ----------
        matrix : array_like
            ``k × k``: non-negative, zero diagonal, symmetric, triangle inequality
            (``+inf`` allowed for unrelated secrets, 0 for indistinguishable ones).
        labels : sequence of str, optional
        field : str
            The key named in messages (default: the argument; a request or problem file passes
            its own key).

        Returns
        -------
        Metric
        """
        return cls(matrix, labels, "matrix", field)

    @classmethod
    def discrete(cls, k: int) -> Metric:
        """``d(x, x') = 1`` for ``x ≠ x'``: metric privacy is then local DP.

        Parameters
        ----------
        k : int

        Returns
        -------
        Metric
        """
        k = int(k)
        return cls(1.0 - np.eye(k), kind="discrete", check=False)

    @classmethod
    def from_points(
        cls, points, norm: str = "euclidean", labels=None, field: str | None = None
    ) -> Metric:
        """The distances between points.

        Parameters
        ----------
        points : array_like
            ``k × dim`` coordinates (``haversine``: ``[latitude, longitude]`` in degrees).
        norm : {"euclidean", "manhattan", "haversine"}
            ``haversine`` is the great-circle distance in kilometres on a sphere of radius
            :data:`EARTH_RADIUS_KM`.
        labels : sequence of str, optional
        field : str, optional
            The key whose ``points`` and ``norm`` messages name (a request or a problem file
            passes its own); by default the arguments themselves.

        Returns
        -------
        Metric
        """
        prefix = f"{field}." if field else ""
        try:
            pts = np.array(points, dtype=float)
        except (TypeError, ValueError):
            raise InputError(
                "points must be a list of coordinate lists", f"{prefix}points"
            ) from None
        if pts.ndim == 1:
            pts = pts[:, None]
        if pts.ndim != 2 or pts.shape[0] == 0 or not np.isfinite(pts).all():
            raise InputError(
                f"points must be a non-empty k × dim array of finite numbers, got shape "
                f"{pts.shape}",
                f"{prefix}points",
            )
        if norm not in METRIC_NORMS:
            raise InputError(
                f"unknown norm {norm!r}; valid: {', '.join(METRIC_NORMS)}",
                f"{prefix}norm",
                suggestions=close_matches(norm, METRIC_NORMS),
            )
        if norm == "haversine":
            if pts.shape[1] != 2:
                raise InputError(
                    "haversine needs [latitude, longitude] pairs in degrees", f"{prefix}points"
                )
            if (np.abs(pts[:, 0]) > 90).any() or (np.abs(pts[:, 1]) > 360).any():
                raise InputError(
                    "latitudes must lie in [-90, 90] and longitudes in [-360, 360] (degrees)",
                    f"{prefix}points",
                )
        d = point_distances(pts, norm, f"{prefix}points")
        return cls(d, labels, norm, field or "points", check=False, copy=False)

    @classmethod
    def from_graph(
        cls,
        k: int,
        edges,
        labels=None,
        field: str = "edges",
        allow_disconnected: bool = False,
    ) -> Metric:
        """The shortest-path metric of an undirected weighted graph.

        A disconnected graph is refused unless ``allow_disconnected``: secrets in different
        components are at distance ``+inf``, so metric privacy puts no constraint between
        them and a mechanism may reveal the component outright. That is rarely meant (a road
        network with a missing edge, an isolated vertex); ask for it explicitly.

        An edge listed more than once (in either direction: the graph is undirected) is
        accepted when every copy has the same weight (to a relative ``1e-12``): edge lists
        of road networks often give each road once per direction. Copies with different
        weights are refused (code ``"duplicate_edge"``) rather than resolved silently: two
        lengths for one road are a mistake in the data more often than parallel roads, and
        keeping the shortest would loosen the guarantee on that pair without a word. Give
        the weight meant (for parallel roads, the shortest) once.

        Parameters
        ----------
        k : int
            Number of secrets (vertices ``0..k-1``).
        edges : sequence
            ``(a, b)`` (weight 1) or ``(a, b, w)`` with ``w > 0``; vertices as indices.
        labels : sequence of str, optional
        field : str
            The key named in messages (default ``"edges"``, this argument); a bad edge ``n``
            is named ``{field}[n]``. The problem-file layer passes its own key
            (``privacy.metric.edges``).
        allow_disconnected : bool
            Accept a disconnected graph (distance ``+inf``, no constraint, between
            components).

        Returns
        -------
        Metric

        Raises
        ------
        InputError
            With :attr:`~privopt.errors.InputError.code` ``"malformed_edge"`` (not ``[a, b]``
            or ``[a, b, w]``), ``"not_an_index"`` (an end that is not an integer),
            ``"index_out_of_range"``, ``"self_loop"``, ``"not_a_number"`` (a weight that is
            not a number), ``"bad_edge_weight"`` (negative, zero, NaN or infinite),
            ``"duplicate_edge"`` (an edge given twice with different weights) or
            ``"disconnected_graph"``.
        """
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components, shortest_path

        a, b, w = _unique_edges(*_edge_arrays(k, edges, field), field)
        graph = sp.csr_matrix((w, (a, b)), shape=(k, k))
        if not allow_disconnected:
            count, component = connected_components(graph, directed=False)
            if count > 1:
                apart = int(np.flatnonzero(component != component[0])[0])
                raise InputError(
                    f"the graph has {count} connected components (no path joins vertex 0 and "
                    f"vertex {apart}): metric privacy would put no constraint between them; "
                    "add the missing edges, or allow it explicitly (allow_disconnected = true)",
                    field,
                    code="disconnected_graph",
                )
        d = shortest_path(graph, method="D", directed=False)
        return cls(d, labels, "graph", field, check=False, edges=(a, b))

    # --- pairs ----------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """The number of secrets ``k``."""
        return int(self.matrix.shape[0])

    def __repr__(self) -> str:
        return f"Metric(size={self.size}, kind={self.kind!r})"

    def pairs_found_directly(self, spanner: float | None = None) -> bool:
        """Whether the constraint pairs (or the ``spanner``-spanner's edges) come from the
        metric's own structure, without a search over every pair: a graph metric's edges, or
        the 8-neighbour spanner of a full lattice (``spanner`` ≥ ``KING_STRETCH``).

        Parameters
        ----------
        spanner : float, optional
            The stretch asked for, if any.

        Returns
        -------
        bool
        """
        stretch = 1.0 if spanner is None else float(spanner)
        if self._edges is not None:
            return stretch <= 1.0
        if self._lattice is not None:
            rows, cols, cells = self._lattice
            full = cells.size == rows * cols
            return full and stretch >= KING_STRETCH * (1 + METRIC_TOLERANCE)
        return False

    @cached_property
    def pairs(self) -> MetricPairs:
        """The constraint pairs (both orders) with their distances (module docstring).

        Pairs at distance ``+inf`` are left out (no constraint); pairs at distance 0 are
        kept (their rows must be equal).
        """
        d = self.matrix
        k = self.size
        if self._edges is not None:
            a, b = self._edges
            left, right = np.concatenate([a, b]), np.concatenate([b, a])
            finite = np.isfinite(d[left, right])
            left, right = left[finite], right[finite]
            both = np.unique(np.stack([left, right], axis=1), axis=0)
            left, right = both[:, 0], both[:, 1]
            return MetricPairs(k, left, right, d[left, right])
        if self._lattice is not None:
            left, right = _lattice_pairs(*self._lattice)
            return MetricPairs(k, left, right, d[left, right])
        if k > MAX_METRIC_SIZE:
            raise InputError(
                f"{k} secrets: finding the constraint pairs is O(k³); use a graph metric or "
                "the spanner option",
                self.field,
            )
        essential = np.zeros((k, k), dtype=bool)
        for rows in _blocks(k):
            through = _min_plus_rows(d, rows, skip_zero=True)
            block = d[rows]
            essential[rows] = through > block * (1 + METRIC_TOLERANCE) + 1e-300
        np.fill_diagonal(essential, False)
        essential &= np.isfinite(d)
        left, right = np.nonzero(essential)
        return MetricPairs(k, left, right, d[left, right])

    def relation(self) -> MetricPairs:
        """:attr:`pairs` (the exact constraint set).

        Returns
        -------
        MetricPairs
            The constraint pairs of the metric, both orders, with their distances.
        """
        return self.pairs

    def sub_metric(self, keep) -> Metric:
        """The metric restricted to the secrets ``keep`` (distances unchanged).

        Parameters
        ----------
        keep : array_like of int

        Returns
        -------
        Metric
        """
        keep = np.asarray(keep, dtype=np.int64)
        labels = None if self.labels is None else [self.labels[i] for i in keep]
        lattice = None
        if self._lattice is not None:
            rows, cols, cells = self._lattice
            lattice = (rows, cols, cells[keep])
        return Metric(
            self.matrix[np.ix_(keep, keep)],
            labels,
            self.kind,
            self.field,
            check=False,
            lattice=lattice,
        )

    def pairs_on(self, keep, stretch: float | None = None) -> MetricPairs:
        """The constraint pairs among the secrets ``keep`` (original indices).

        Secrets outside ``keep`` (outside the prior's support) are not constrained, so a
        geodesic through them does not imply anything: the pairs are those of the
        restricted metric :meth:`sub_metric` (or the edges of its greedy spanner).

        Parameters
        ----------
        keep : array_like of int
        stretch : float, optional
            A spanner's stretch ``δ > 1``.

        Returns
        -------
        MetricPairs
            On all ``k`` secrets, with both ends of every pair in ``keep``.
        """
        keep = np.asarray(keep, dtype=np.int64)
        key = (keep.tobytes(), stretch)
        cache = self.__dict__.setdefault("_pairs_cache", {})
        if key not in cache:
            if keep.size == self.size:
                sub, metric = None, self
            else:
                sub = keep
                metric = self.sub_metric(keep)
            pairs = metric.spanner(stretch) if stretch and stretch > 1 else metric.pairs
            if sub is not None:
                pairs = MetricPairs(
                    self.size, sub[pairs.left], sub[pairs.right], pairs.weights, pairs.kind
                )
            cache[key] = pairs
        return cache[key]

    def spanner(self, stretch: float) -> MetricPairs:
        """The edges of a greedy ``stretch``-spanner, as constraint pairs with distances.

        Pairs are taken by increasing distance; a pair becomes an edge when the path
        distance between its ends in the edges so far exceeds ``stretch · d``
        ([Althofer-Das-Dobkin-Joseph-Soares]). The result's path metric ``d_G`` meets
        ``d ≤ d_G ≤ stretch · d``, so a mechanism meeting ``p(u|x) ≤ e^{ε d(x,x')} p(u|x')``
        on the edges is ``(ε·stretch)·d`` private ([Bordenabe-Chatzikokolakis-Palamidessi], Sec. 5).

        Parameters
        ----------
        stretch : float
            ``δ ≥ 1``.

        Returns
        -------
        MetricPairs
        """
        stretch = float(stretch)
        d = self.matrix
        k = self.size
        if stretch <= 1.0:
            return self.pairs
        if self._lattice is not None and stretch >= KING_STRETCH * (1 + METRIC_TOLERANCE):
            rows, cols, cells = self._lattice
            if cells.size == rows * cols:
                # every cell is a secret: the 8-neighbour grid is a KING_STRETCH-spanner
                a, b = _king_edges(rows, cols, cells)
                left, right = np.concatenate([a, b]), np.concatenate([b, a])
                return MetricPairs(k, left, right, d[left, right], "spanner")
        # candidates: the exact constraint pairs suffice (every other pair is a sum along a
        # geodesic of them), one order each, by increasing distance
        base = self.pairs
        one = base.left < base.right
        ca, cb, cw = base.left[one], base.right[one], base.weights[one]
        order = np.argsort(cw, kind="stable")
        ca, cb, cw = ca[order], cb[order], cw[order]
        path = np.full((k, k), np.inf)
        np.fill_diagonal(path, 0.0)
        through = np.empty_like(path)
        chosen = []
        for i, j, w in zip(ca.tolist(), cb.tolist(), cw.tolist(), strict=True):
            if path[i, j] <= stretch * w * (1 + METRIC_TOLERANCE):
                continue
            chosen.append((i, j, w))
            pi, pj = path[:, i].copy(), path[:, j].copy()
            ri = np.flatnonzero(np.isfinite(pi))
            rj = np.flatnonzero(np.isfinite(pj))
            if ri.size == k and rj.size == k:  # connected: one dense in-place update
                np.add.outer(pi, pj + w, out=through)
                np.minimum(through, through.T, out=through)
                np.minimum(path, through, out=path)
                continue
            reach = np.union1d(ri, rj)
            a_i, a_j = pi[reach], pj[reach]
            sub = np.minimum(a_i[:, None] + w + a_j[None, :], a_j[:, None] + w + a_i[None, :])
            path[np.ix_(reach, reach)] = np.minimum(path[np.ix_(reach, reach)], sub)
        if not chosen:
            empty = np.zeros(0, dtype=np.int64)
            return MetricPairs(k, empty, empty, np.zeros(0), "spanner")
        arr = np.array(chosen)
        a, b = arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64)
        return MetricPairs(
            k,
            np.concatenate([a, b]),
            np.concatenate([b, a]),
            np.concatenate([d[a, b]] * 2),
            "spanner",
        )

    def level(self, channel: np.ndarray, rows: np.ndarray | None = None) -> float:
        """The least ε with ``channel`` ε·d-private, over the secrets ``rows``.

        ``max (ln ch[x,u] − ln ch[x',u]) / d(x,x')`` over the constraint pairs and the
        outputs with ``ch[x,u] > 0``; ``+inf`` when a pair at distance 0 has different rows
        or ``ch[x',u] = 0 < ch[x,u]`` on a pair at finite distance.

        Parameters
        ----------
        channel : numpy.ndarray
            ``p(u|x)``, one row per secret.
        rows : numpy.ndarray, optional
            The secrets taken into account (default: all).

        Returns
        -------
        float
        """
        return pair_level(channel, self.pairs, rows)


def pair_level(channel: np.ndarray, pairs: MetricPairs, rows: np.ndarray | None = None) -> float:
    """``max_{(a,b) ∈ pairs, u: ch[a,u] > 0} (ln ch[a,u] − ln ch[b,u]) / w_ab`` (see
    :meth:`Metric.level`); 0 without pairs.

    Parameters
    ----------
    channel : numpy.ndarray
    pairs : MetricPairs
    rows : numpy.ndarray, optional

    Returns
    -------
    float
    """
    ch = np.asarray(channel, dtype=float)
    rel = pairs if rows is None else pairs.restricted(rows)
    if rel.n_pairs == 0 or ch.shape[1] == 0:
        return 0.0
    with np.errstate(divide="ignore"):
        logs = np.log(ch)
    chunk = max(1, 2**22 // ch.shape[1])
    best = 0.0
    for start in range(0, rel.n_pairs, chunk):
        a = rel.left[start : start + chunk]
        b = rel.right[start : start + chunk]
        w = rel.weights[start : start + chunk]
        num = logs[a]
        with np.errstate(invalid="ignore"):
            diff = num - logs[b]
        diff[np.isneginf(num)] = -np.inf  # ch[a,u] = 0: no constraint
        top = diff.max(axis=1)
        if np.any(top == np.inf):
            return float("inf")
        zero = w == 0
        if np.any(zero & (top > 0)):
            # equal rows are needed; any positive log-ratio is an unbounded level (a rounding
            # difference is not: allow 1e-12)
            if np.any(zero & (top > 1e-12)):
                return float("inf")
        pos = (~zero) & np.isfinite(top)
        if pos.any():
            best = max(best, float((top[pos] / w[pos]).max()))
    return max(best, 0.0)


def _edge_arrays(k: int, edges, field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges ``(a, b[, w])`` as index and weight arrays, each edge once in the order given
    (checked; edge ``n`` is named ``{field}[n]``)."""
    rows = list(edges) if not isinstance(edges, np.ndarray) else list(edges)
    if not rows:
        raise InputError("the graph has no edges: give [[a, b], …] or [[a, b, w], …]", field)
    a, b, w = [], [], []
    for n, edge in enumerate(rows):
        at = f"{field}[{n}]"
        try:
            items = list(edge)
        except TypeError:
            raise InputError(
                f"edge {n} is {edge!r}: write each edge as [a, b] or [a, b, weight]",
                at,
                code="malformed_edge",
            ) from None
        if len(items) not in (2, 3):
            raise InputError(
                f"edge {n} has {len(items)} entries: write [a, b] or [a, b, weight]",
                at,
                code="malformed_edge",
            )
        try:
            if isinstance(items[0], (bool, np.bool_)) or isinstance(items[1], (bool, np.bool_)):
                raise TypeError
            ia, ib = int(items[0]), int(items[1])
            if ia != items[0] or ib != items[1]:
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            raise InputError(
                f"edge {n}: the ends {items[0]!r}, {items[1]!r} must be integer indices of "
                f"secrets, 0..{k - 1}",
                at,
                code="not_an_index",
            ) from None
        if not (0 <= ia < k and 0 <= ib < k):
            raise InputError(
                f"edge {n} joins {ia} and {ib}: indices lie in 0..{k - 1}",
                at,
                code="index_out_of_range",
            )
        if ia == ib:
            raise InputError(f"edge {n} joins secret {ia} to itself", at, code="self_loop")
        weight = 1.0 if len(items) == 2 else items[2]
        weight = as_number(weight, at, f"edge {n}: the weight {weight!r} is not a number")
        if not (np.isfinite(weight) and weight > 0):
            raise InputError(
                f"edge {n}: the weight {weight} must be a positive finite number",
                at,
                code="bad_edge_weight",
            )
        a.append(ia)
        b.append(ib)
        w.append(weight)
    return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64), np.array(w, dtype=float)


#: Relative difference below which two copies of an edge have the same weight.
DUPLICATE_EDGE_TOLERANCE = 1e-12


def _unique_edges(
    a: np.ndarray, b: np.ndarray, w: np.ndarray, field: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each undirected edge once, in both directions (``a, b`` then ``b, a``); copies of an
    edge (in either direction) must have the same weight, else the first copy that differs
    from the edge's first listing is refused, named ``{field}[n]`` with code
    ``"duplicate_edge"``."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((np.arange(a.size), hi, lo))  # by edge, then as listed
    lo_s, hi_s, w_s = lo[order], hi[order], w[order]
    starts = np.ones(order.size, dtype=bool)
    starts[1:] = (lo_s[1:] != lo_s[:-1]) | (hi_s[1:] != hi_s[:-1])
    first_weight = w_s[starts][np.cumsum(starts) - 1]  # each copy's edge as first listed
    differs = np.abs(w_s - first_weight) > DUPLICATE_EDGE_TOLERANCE * first_weight
    if differs.any():
        n = int(order[differs].min())  # the earliest listed copy that conflicts
        first = int(np.flatnonzero((lo == lo[n]) & (hi == hi[n]))[0])
        raise InputError(
            f"edge {n} joins {a[n]} and {b[n]} with weight {w[n]:.12g}, but edge {first} "
            f"already joins them with weight {w[first]:.12g}: give each edge one weight (for "
            "parallel roads, the shortest)",
            f"{field}[{n}]",
            code="duplicate_edge",
        )
    keep = order[starts]
    lo, hi, w = lo[keep], hi[keep], w[keep]
    return np.concatenate([lo, hi]), np.concatenate([hi, lo]), np.concatenate([w, w])


def _lattice_pairs(rows: int, cols: int, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The constraint pairs of Euclidean distances between the cells ``cells`` of a
    ``rows × cols`` grid: the ordered pairs with no other of the cells on the segment between
    them. The lattice points strictly inside the segment from ``a`` to ``b`` are
    ``a + t (b − a)/g`` for ``t = 1 … g − 1``, ``g = gcd(|Δr|, |Δc|)``: a pair with ``g = 1``
    always counts, another when none of those points is one of the cells."""
    cells = np.asarray(cells, dtype=np.int64)
    k = cells.size
    r, c = np.divmod(cells, cols)
    present = np.zeros(rows * cols, dtype=bool)
    present[cells] = True
    lefts, rights = [], []
    for start in range(0, k, max(1, int(2**22 // max(k, 1)))):
        i = np.arange(start, min(k, start + max(1, int(2**22 // max(k, 1)))))
        ii, jj = np.meshgrid(i, np.arange(k), indexing="ij")
        ii, jj = ii.ravel(), jj.ravel()
        other = ii != jj
        ii, jj = ii[other], jj[other]
        dr, dc = r[jj] - r[ii], c[jj] - c[ii]
        g = np.gcd(np.abs(dr), np.abs(dc))
        blocked = np.zeros(ii.size, dtype=bool)
        for t in range(1, int(g.max(initial=1))):
            inside = g > t
            step_r, step_c = dr[inside] // g[inside], dc[inside] // g[inside]
            point = (r[ii[inside]] + t * step_r) * cols + c[ii[inside]] + t * step_c
            blocked[inside] |= present[point]
        lefts.append(ii[~blocked])
        rights.append(jj[~blocked])
    return np.concatenate(lefts), np.concatenate(rights)


def _king_edges(rows: int, cols: int, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 8-neighbour edges of a full ``rows × cols`` grid, in the secrets' indices."""
    index = np.empty(rows * cols, dtype=np.int64)
    index[cells] = np.arange(cells.size)
    grid = np.arange(rows * cols).reshape(rows, cols)
    pairs = [
        (grid[:, :-1], grid[:, 1:]),
        (grid[:-1, :], grid[1:, :]),
        (grid[:-1, :-1], grid[1:, 1:]),
        (grid[:-1, 1:], grid[1:, :-1]),
    ]
    a = np.concatenate([p[0].ravel() for p in pairs])
    b = np.concatenate([p[1].ravel() for p in pairs])
    return index[a], index[b]
