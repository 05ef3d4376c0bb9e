"""Location problems written out independently of privopt (test code, not the package).

* :func:`bin_checkins`: latitude/longitude check-ins projected to km (equirectangular around
  the centre of the bounds) and counted per square cell, cell (r, c) row-major from the
  south-west corner;
* :func:`all_pairs_metric_lp`: the metric-privacy LP over *every* ordered pair of secrets of
  the support and every output, ``W[x,u] ≤ e^{ε d(x,x')} W[x',u]`` (no reduction to
  constraint pairs), as sparse rows for ``scipy.optimize.linprog`` (HiGHS);
* :func:`sample_planar_laplace`: the sampler of Andrés et al. (2013), Sec. 4.1: θ uniform
  and the radius by the inverse of its distribution function, ``r = −(W₋₁((p − 1)/e) + 1)/ε``
  with the −1 branch of the Lambert W function.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy import optimize
from scipy.special import lambertw

EARTH_KM = 6371.0088


def bin_checkins(latlon: np.ndarray, bounds, cell_km: float):
    """``(counts (rows × cols), centres (rows·cols × 2) in km)``."""
    south, west, north, east = bounds
    lat0, lon0 = (south + north) / 2, (west + east) / 2
    kx = EARTH_KM * math.cos(math.radians(lat0)) * math.pi / 180
    ky = EARTH_KM * math.pi / 180
    x = (latlon[:, 1] - lon0) * kx
    y = (latlon[:, 0] - lat0) * ky
    x0, x1 = (west - lon0) * kx, (east - lon0) * kx
    y0, y1 = (south - lat0) * ky, (north - lat0) * ky
    cols = math.ceil((x1 - x0) / cell_km - 1e-9)
    rows = math.ceil((y1 - y0) / cell_km - 1e-9)
    c = np.minimum(((x - x0) // cell_km).astype(int), cols - 1)
    r = np.minimum(((y - y0) // cell_km).astype(int), rows - 1)
    counts = np.zeros((rows, cols))
    for i, j in zip(r, c, strict=True):
        counts[i, j] += 1
    rr, cc = np.divmod(np.arange(rows * cols), cols)
    centres = np.stack([x0 + (cc + 0.5) * cell_km, y0 + (rr + 0.5) * cell_km], axis=1)
    return counts, centres


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of ``a`` and ``b``."""
    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))


def all_pairs_metric_lp(p: np.ndarray, metric: np.ndarray, loss: np.ndarray, eps: float):
    """``(least E[loss], W)`` over row-stochastic ``W`` with every ordered pair of support
    secrets constrained at level ε (secrets outside the support are unconstrained)."""
    k, m = loss.shape
    support = np.flatnonzero(p > 0)
    rows, cols, vals = [], [], []
    n_rows = 0
    for a in support:
        for b in support:
            if a == b:
                continue
            ratio = math.exp(eps * metric[a, b])
            for u in range(m):
                rows += [n_rows, n_rows]
                cols += [a * m + u, b * m + u]
                vals += [1.0, -ratio]
                n_rows += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, k * m))
    a_eq = sp.kron(sp.eye(k), np.ones((1, m)), format="csr")
    res = optimize.linprog(
        (p[:, None] * loss).ravel(),
        A_ub=a_ub,
        b_ub=np.zeros(n_rows),
        A_eq=a_eq,
        b_eq=np.ones(k),
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0, res.message
    return float(res.fun), res.x.reshape(k, m)


def sample_planar_laplace(centre, eps: float, n: int, rng) -> np.ndarray:
    """``n`` draws of ``centre + Z`` with ``Z`` planar Laplace at level ε (Andrés et al. 2013,
    Sec. 4.1, the polar method)."""
    theta = rng.uniform(0, 2 * math.pi, n)
    q = rng.uniform(0, 1, n)
    r = -(np.real(lambertw((q - 1) / math.e, k=-1)) + 1) / eps
    return np.asarray(centre, dtype=float) + np.stack([r * np.cos(theta), r * np.sin(theta)], 1)
