"""The planar Laplace mechanism of geo-indistinguishability, discretised to a map's outputs.

[Andres-Geo], Sec. 4: from a place ``x``, report ``z = x + Z`` where ``Z`` has the planar
Laplace density ``D_ε(z) = ε²/(2π) · e^{−ε|z|}`` (in polar coordinates ``r`` and ``θ``:
``θ`` uniform and ``r`` of density ``ε² r e^{−εr}``, so ``P(|Z| > r) = (1 + εr) e^{−εr}``).
The paper then *discretises* — ``z`` is remapped to the closest point of a grid — and
*truncates* — a point outside the area of interest ``A`` goes to the closest point of ``A``.
Here the outputs of a :class:`~privopt.model.location.LocationGrid` or
:class:`~privopt.model.location.LocationPoints` play the grid:

* an output grid (the map's cells by default): ``z`` is reported as the cell containing it,
  and a ``z`` outside the grid as the cell closest to it. For a grid of square cells the
  closest cell of a point outside is the cell containing its projection onto the grid (each
  coordinate clamped), which is the paper's truncation to ``A`` = the output grid followed by
  its discretisation; so the border cells simply extend to infinity;
* output points (or a :class:`~privopt.model.location.LocationPoints` map's own places): ``z``
  is reported as its nearest output point (its Voronoi cell); every point of the plane has
  one, so nothing needs truncating.

The mechanism's matrix ``W[x, u] = P(x + Z ∈ region(u))`` is computed *exactly* (to about
``1e-13`` relative, by Gauss–Legendre quadrature): each region is a convex polygon (the far
sides of border regions lie ``760/ε`` beyond the map, where ``P(|Z| > r)`` is below the
smallest double), split into triangles with apex ``x`` whose angular integrals
``∫ P(|Z| > ρ(θ)) dθ`` are taken along each side (:func:`polygon_masses`).

**Guarantee.** ``D_ε(z − x) ≤ e^{ε|x − x'|} D_ε(z − x')`` for every ``z`` (triangle
inequality), and integrating over ``region(u)`` gives ``W[x, u] ≤ e^{ε d(x, x')} W[x', u]``
with ``d`` the Euclidean distance *between the secrets' points* (the cell centres of a grid):
the matrix is exactly ε·d-private on the secrets, for every way of cutting the plane into
output regions (post-processing). Computed exactly, it needs no allowance for floating-point
sampling (the ε' of [Andres-Geo], Sec. 4 concerns a sampler with finite precision). For a
user *anywhere* in a cell who reports through the cell's centre, the guarantee between two
real places ``y, y'`` is ``ε (|y − y'| + 2δ)`` with ``δ`` the cell's half-diagonal: geo-
indistinguishable up to the discretisation of the secrets. Underflow: probabilities below
``1e-308`` (``ε·d`` beyond about 700) are 0.
"""

from __future__ import annotations

__all__ = [
    "planar_laplace",
    "planar_laplace_matrix",
    "laplace_regions",
    "polygon_masses",
    "radial_survival",
    "NEGLIGIBLE_EXPONENT",
]

import math

import numpy as np

from privopt.errors import InputError
from privopt.model.mechanism import Mechanism

#: ``ε·r`` beyond which ``P(|Z| > r) = (1 + εr) e^{−εr}`` is below the smallest double.
NEGLIGIBLE_EXPONENT = 760.0
#: Gauss–Legendre rule of every panel of the angular integrals.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(10)
#: A panel spans at most this change of the exponent ``ε h cosh v`` (and 1 in ``v``).
_PANEL_EXPONENT = 4.0
#: A tail integral stops where ``P(|Z| > r)`` has fallen by ``e^{-40}`` from its start.
_TAIL_EXPONENT = 40.0
#: Pairs (secret, side) per block of work.
_BLOCK = 1 << 20


def radial_survival(r, epsilon: float) -> np.ndarray:
    """``P(|Z| > r) = (1 + εr) e^{−εr}`` for the planar Laplace noise ``Z`` ([Andres-Geo],
    Sec. 4: the radius has density ``ε² r e^{−εr}``).

    Parameters
    ----------
    r : array_like
        Radii ``≥ 0``.
    epsilon : float
        ``ε > 0`` per unit of distance.

    Returns
    -------
    numpy.ndarray
    """
    z = epsilon * np.asarray(r, dtype=float)
    return (1.0 + z) * np.exp(-z)


def _tail_integrals(h: np.ndarray, tau: np.ndarray, eps: float) -> np.ndarray:
    """``J(h, τ) = ∫_τ^∞ P(|Z| > √(h² + t²)) · h / (h² + t²) dt`` for ``h > 0, τ ≥ 0``: the
    angle-weighted survival along a ray of a line at distance ``h`` from the centre, beyond
    the foot's offset ``τ``.

    With ``t = h sinh v`` it is ``∫_{v₀}^∞ P(|Z| > h cosh v) / cosh v dv``, analytic in the
    strip ``|Im v| < π/2``; it is summed by 10-point Gauss–Legendre over panels of width
    ``min(1, 4 / (ε h cosh v))`` (the exponent changes by at most about 4 per panel) until the
    survival has fallen by ``e^{-40}`` from the start or below the smallest double. Measured
    against adaptive quadrature on 295 random ``(ε, h, τ)`` over ``ε ∈ [0.01, 10]``,
    ``h ∈ [1e-4, 100]``: relative error below ``2e-13`` (the reference's own accuracy)."""
    out = np.zeros(h.shape)
    a = eps * h
    v = np.arcsinh(tau / h)
    start = eps * np.hypot(h, tau)  # ε r₀
    stop = np.minimum(start + _TAIL_EXPONENT, NEGLIGIBLE_EXPONENT)
    live = start < NEGLIGIBLE_EXPONENT
    idx = np.flatnonzero(live)
    v = v[idx]
    v_end = np.arccosh(np.maximum(stop[idx] / a[idx], 1.0))
    a_live = a[idx]
    acc = np.zeros(idx.size)
    while idx.size:
        width = np.minimum(1.0, _PANEL_EXPONENT / (a_live * np.cosh(v)))
        right = np.minimum(v + width, v_end)
        half = 0.5 * (right - v)
        nodes = (v + half)[:, None] + half[:, None] * _NODES[None, :]
        c = np.cosh(nodes)
        z = a_live[:, None] * c
        acc += half * (((1.0 + z) * np.exp(-z) / c) @ _WEIGHTS)
        v = right
        more = v < v_end * (1 - 1e-15)
        if not more.all():
            out[idx[~more]] = acc[~more]
            idx, v, v_end, a_live, acc = idx[more], v[more], v_end[more], a_live[more], acc[more]
    return out


def _side_integrals(h: np.ndarray, t1: np.ndarray, t2: np.ndarray, eps: float) -> np.ndarray:
    """``K = ∫_{t1}^{t2} P(|Z| > √(h² + t²)) h / (h² + t²) dt`` (``t1 < t2``, ``h > 0``): the
    angular integral ``∫ P(|Z| > ρ(θ)) dθ`` over the angle a polygon side subtends, by
    differences of :func:`_tail_integrals` taken on one side of the foot (no cancellation
    between the two sides of a far segment)."""
    near, far = np.empty_like(t1), np.empty_like(t2)
    ahead = t1 >= 0
    behind = t2 <= 0
    across = ~(ahead | behind)
    near[ahead], far[ahead] = t1[ahead], t2[ahead]
    near[behind], far[behind] = -t2[behind], -t1[behind]
    near[across], far[across] = -t1[across], t2[across]
    # the tails needed: J(h, near), J(h, far) and, across the foot, J(h, 0)
    heights = np.concatenate([h, h, h[across]])
    offsets = np.concatenate([near, far, np.zeros(int(across.sum()))])
    keys, inverse = np.unique(heights + 1j * offsets, return_inverse=True)
    values = _tail_integrals(keys.real.copy(), keys.imag.copy(), eps)[inverse.reshape(-1)]
    n = h.size
    j_near, j_far = values[:n], values[n : 2 * n]
    out = j_near - j_far
    if across.any():
        j_zero = values[2 * n :]
        out[across] = 2.0 * j_zero - j_near[across] - j_far[across]
    return out


def polygon_masses(centres, polygons, epsilon: float) -> np.ndarray:
    """``P(x + Z ∈ P)`` for the planar Laplace noise ``Z`` at level ``ε``, every centre ``x``
    and every convex polygon ``P``.

    A polygon with counter-clockwise vertices ``p_0 … p_{n-1}`` is the signed sum of the
    triangles ``(x, p_i, p_{i+1})``; a triangle of positive orientation subtending the angle
    ``Δθ`` holds ``(Δθ − ∫ P(|Z| > ρ(θ)) dθ) / 2π``, with ``ρ(θ)`` the distance to the side
    along the ray at angle ``θ``. The ``Δθ`` terms add up to 2π times the winding number
    (1 inside, 0 outside, taken exactly), leaving ``[x ∈ P] − Σ_i σ_i K_i / 2π`` with the
    side integrals ``K_i`` of :func:`_side_integrals`.

    Parameters
    ----------
    centres : array_like
        ``k × 2`` points.
    polygons : sequence of array_like
        Convex polygons, each ``n_i × 2`` vertices counter-clockwise (``n_i ≥ 3``).
    epsilon : float
        ``ε > 0``.

    Returns
    -------
    numpy.ndarray
        ``k × len(polygons)``.
    """
    eps = float(epsilon)
    centres = np.asarray(centres, dtype=float).reshape(-1, 2)
    tails = np.concatenate([np.asarray(p, dtype=float) for p in polygons])
    heads = np.concatenate([np.roll(np.asarray(p, dtype=float), -1, axis=0) for p in polygons])
    owner = np.concatenate([np.full(len(p), i) for i, p in enumerate(polygons)])
    # a side shared by two polygons (a Voronoi diagram) is traversed once each way: integrate
    # each segment once, in a canonical direction, and give it the sign of each traversal
    forward = (tails[:, 0] < heads[:, 0]) | (
        (tails[:, 0] == heads[:, 0]) & (tails[:, 1] < heads[:, 1])
    )
    lower = np.where(forward[:, None], tails, heads)
    upper = np.where(forward[:, None], heads, tails)
    ends_both = np.concatenate([lower, upper], axis=1)
    # clipping two neighbours computes their common side twice: equal to rounding
    scale = float(np.abs(ends_both).max()) or 1.0
    keys = np.round(ends_both / scale * 1e11).astype(np.int64)
    _, index, segment = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    segment = segment.reshape(-1)
    direction = np.where(forward, 1.0, -1.0)
    starts, ends = lower[index], upper[index]
    n_sides, m = starts.shape[0], len(polygons)
    out = np.zeros((centres.shape[0], m))
    rows_per_block = max(1, _BLOCK // n_sides)
    for row0 in range(0, centres.shape[0], rows_per_block):
        block = centres[row0 : row0 + rows_per_block]
        a = starts[None, :, :] - block[:, None, :]  # p_i − x
        b = ends[None, :, :] - block[:, None, :]
        cross = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
        dot = (a * b).sum(axis=2)
        side = ends - starts
        length = np.hypot(side[:, 0], side[:, 1])
        unit = side / length[:, None]
        t1 = (a * unit[None]).sum(axis=2)
        t2 = (b * unit[None]).sum(axis=2)
        h = np.abs(cross) / length[None, :]
        # a side through x (or all but) subtends a triangle of no area: it contributes 0
        scale = np.maximum(np.hypot(a[..., 0], a[..., 1]), np.hypot(b[..., 0], b[..., 1]))
        real = h > 1e-12 * scale
        sign = np.sign(cross) * real
        angle = np.arctan2(np.abs(cross), dot) * real
        k_side = np.zeros(h.shape)
        k_side[real] = _side_integrals(h[real], t1[real], t2[real], eps)
        turn = (sign * angle)[:, segment] * direction  # per traversal of a side
        winding = np.zeros((block.shape[0], m))
        np.add.at(winding.T, owner, turn.T)
        winding /= 2 * math.pi
        snapped = np.round(winding)
        winding = np.where(np.abs(winding - snapped) < 1e-9, snapped, winding)
        total = np.zeros((block.shape[0], m))
        np.add.at(total.T, owner, ((sign * k_side)[:, segment] * direction).T)
        out[row0 : row0 + block.shape[0]] = winding - total / (2 * math.pi)
    return np.clip(out, 0.0, 1.0)


def _clip_half_plane(polygon: np.ndarray, normal: np.ndarray, offset: float) -> np.ndarray:
    """The part of a convex polygon with ``normal · z ≤ offset`` (Sutherland–Hodgman)."""
    values = polygon @ normal - offset
    inside = values <= 0
    if inside.all():
        return polygon
    out = []
    n = len(polygon)
    for i in range(n):
        j = (i + 1) % n
        if inside[i]:
            out.append(polygon[i])
        if inside[i] != inside[j]:
            t = values[i] / (values[i] - values[j])
            out.append(polygon[i] + t * (polygon[j] - polygon[i]))
    return np.array(out) if out else np.zeros((0, 2))


def _voronoi_regions(points: np.ndarray, box: tuple[float, float, float, float]) -> list:
    """The Voronoi cell of every point within ``box``, as counter-clockwise polygons."""
    x0, y0, x1, y1 = box
    square = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    m = points.shape[0]
    neighbours: list[np.ndarray]
    if m > 3:
        try:
            from scipy.spatial import Delaunay

            indptr, indices = Delaunay(points).vertex_neighbor_vertices
            neighbours = [indices[indptr[i] : indptr[i + 1]] for i in range(m)]
        except Exception:  # noqa: BLE001 - degenerate (collinear) points: clip by all others
            neighbours = [np.delete(np.arange(m), i) for i in range(m)]
    else:
        neighbours = [np.delete(np.arange(m), i) for i in range(m)]
    regions = []
    for i in range(m):
        polygon = square
        for j in neighbours[i]:
            normal = points[j] - points[i]
            polygon = _clip_half_plane(polygon, normal, float(normal @ (points[i] + points[j]) / 2))
        regions.append(polygon)
    return regions


def _box(location, epsilon: float) -> tuple[float, float, float, float]:
    """The map, its outputs and ``760/ε`` around them: beyond, no mass is representable."""
    margin = NEGLIGIBLE_EXPONENT / float(epsilon)
    everything = np.concatenate([location.planar_points, location.output_points])
    low, high = everything.min(axis=0), everything.max(axis=0)
    grid = location.output_grid
    if grid is not None:
        gx0, gy0, gx1, gy1 = grid.bounds
        low = np.minimum(low, [gx0, gy0])
        high = np.maximum(high, [gx1, gy1])
    return (low[0] - margin, low[1] - margin, high[0] + margin, high[1] + margin)


def _intervals(coords: np.ndarray, edges: np.ndarray, scale: float):
    """The intervals ``[edges[c] − x, edges[c+1] − x]`` for every coordinate ``x`` and column
    ``c``, as unique intervals (equal up to rounding noise) and an index of each."""
    lo = edges[None, :-1] - coords[:, None]
    hi = edges[None, 1:] - coords[:, None]
    pairs = np.stack([lo.ravel(), hi.ravel()], axis=1)
    keys = np.round(pairs / scale, 8)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return pairs[first], inverse.reshape(lo.shape)


def _grid_masses(location, eps: float) -> np.ndarray:
    """:func:`polygon_masses` for an output grid: a cell's mass depends only on its offsets
    from the secret, and a regular map repeats them, so each distinct rectangle (taken with
    the exact coordinates of one of its occurrences) is integrated once."""
    grid = location.output_grid
    box = _box(location, eps)
    xs, ys = grid.x_edges.copy(), grid.y_edges.copy()
    xs[0], xs[-1], ys[0], ys[-1] = box[0], box[2], box[1], box[3]
    px, x_index = np.unique(location.planar_points[:, 0], return_inverse=True)
    py, y_index = np.unique(location.planar_points[:, 1], return_inverse=True)
    x_spans, x_of = _intervals(px, xs, grid.cell_size)  # x_of: distinct px × cols
    y_spans, y_of = _intervals(py, ys, grid.cell_size)
    # the rectangle of (secret, cell (r, c)): x span x_of[px, c], y span y_of[py, r]
    xi = x_of[np.asarray(x_index).reshape(-1)]  # secrets × cols
    yi = y_of[np.asarray(y_index).reshape(-1)]  # secrets × rows
    codes = yi[:, :, None] * len(x_spans) + xi[:, None, :]  # secrets × rows × cols
    unique_codes, inverse = np.unique(codes, return_inverse=True)
    ry, rx = np.divmod(unique_codes, len(x_spans))
    (x0, x1), (y0, y1) = x_spans[rx].T, y_spans[ry].T
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]  # counter-clockwise
    rectangles = np.stack([np.stack(corner, axis=1) for corner in corners], axis=1)
    masses = polygon_masses(np.zeros((1, 2)), list(rectangles), eps)[0]
    return masses[inverse.reshape(-1)].reshape(location.size, grid.size)


def laplace_regions(location, epsilon: float) -> list:
    """The region of the plane each output of ``location`` stands for (module docstring):
    output cells with the border cells extended, or the Voronoi cells of output points, all
    within ``760/ε`` of the map.

    Parameters
    ----------
    location : LocationGrid or LocationPoints
    epsilon : float

    Returns
    -------
    list of numpy.ndarray
        One counter-clockwise convex polygon per output.
    """
    box = _box(location, epsilon)
    grid = location.output_grid
    if grid is None:
        return _voronoi_regions(location.output_points, box)
    xs, ys = grid.x_edges.copy(), grid.y_edges.copy()
    xs[0], xs[-1], ys[0], ys[-1] = box[0], box[2], box[1], box[3]
    regions = []
    for r in range(grid.rows):
        for c in range(grid.cols):
            regions.append(
                np.array(
                    [[xs[c], ys[r]], [xs[c + 1], ys[r]], [xs[c + 1], ys[r + 1]], [xs[c], ys[r + 1]]]
                )
            )
    return regions


def planar_laplace_matrix(location, epsilon: float) -> np.ndarray:
    """``W[x, u] = P(x + Z ∈ region(u))`` before any normalisation (rows sum to 1 up to the
    quadrature error).

    Parameters
    ----------
    location : LocationGrid or LocationPoints
    epsilon : float
        ``ε > 0`` per unit of the map's plane (km for a geographic map).

    Returns
    -------
    numpy.ndarray
        ``secrets × outputs``.
    """
    eps = _check_epsilon(epsilon)
    if location.output_grid is not None:
        return _grid_masses(location, eps)
    return polygon_masses(location.planar_points, laplace_regions(location, eps), eps)


def _check_epsilon(epsilon) -> float:
    try:
        if isinstance(epsilon, bool):
            raise TypeError
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise InputError(f"ε is a positive number, got {epsilon!r}", "epsilon") from None
    if not (math.isfinite(eps) and eps > 0):
        raise InputError(f"ε is a positive finite number, got {epsilon!r}", "epsilon")
    return eps


def planar_laplace(location, epsilon: float) -> Mechanism:
    """The planar Laplace mechanism of [Andres-Geo] at level ``ε``, discretised to the
    outputs of ``location`` and truncated to its map (module docstring).

    It is exactly ε·d-private for the Euclidean distance ``d`` between the secrets' points
    (cell centres; km in the plane of a geographic map), hence also for any metric at least
    as large (Manhattan, the 4-neighbour grid graph); see the module docstring for users
    anywhere in a cell.

    Parameters
    ----------
    location : LocationGrid or LocationPoints
        The map: its secrets (rows) and outputs (columns).
    epsilon : float
        ``ε > 0`` per unit of distance of the map's plane.

    Returns
    -------
    Mechanism
        ``secrets × outputs``, labelled like ``location``; rows normalised (they sum to 1
        within about ``1e-13`` before).

    Raises
    ------
    InputError
        For ``ε`` not positive and finite (field ``epsilon``).
    """
    matrix = planar_laplace_matrix(location, epsilon)
    matrix /= matrix.sum(axis=1, keepdims=True)
    return Mechanism(matrix, input_labels=location.labels, output_labels=location.output_labels)
