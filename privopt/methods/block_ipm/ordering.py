"""How block-ipm numbers a column's variables for the band kernel, and when it uses it.

A light module (numpy only at import; scipy's graph routines are imported when an ordering
is computed): method selection asks :func:`band_is_cheaper` for every pair request, and
registering the methods must not load the solving modules
(:mod:`~privopt.methods.block_ipm.band` holds the kernel itself).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import ArrayLike

__all__ = ["SCHUR_CHUNK_BYTES", "band_is_cheaper", "band_order", "worker_count"]

#: Columns whose ``H_u⁻¹`` are formed together when the Schur complement is summed (two
#: ``chunk × n × n`` work arrays per thread).
SCHUR_CHUNK_BYTES = 64 * 2**20


def worker_count() -> int:
    """The threads the columns are shared between: the cores this process may run on, at
    most ``OMP_NUM_THREADS`` where that is set (the usual way of keeping several processes
    on one machine from oversubscribing it).

    Returns
    -------
    int
        At least 1.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    try:
        cap = int(os.environ.get("OMP_NUM_THREADS", "0"))
    except ValueError:
        cap = 0
    return max(1, min(cores, cap) if cap > 0 else cores)


def band_order(n: int, left: ArrayLike, right: ArrayLike) -> tuple[np.ndarray, int]:
    """A numbering of ``n`` variables that keeps the pairs ``(left[k], right[k])`` close.

    Parameters
    ----------
    n : int
        The variables of a column.
    left, right : array_like of int
        The two variables of each pair row.

    Returns
    -------
    numpy.ndarray
        ``order``: the variable at each position (reverse Cuthill–McKee, or the given
        numbering where that is narrower).
    int
        The half-bandwidth ``b ≥ 1``: ``|position(a) − position(b)| ≤ b`` for every pair.
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    if left.size == 0:
        return np.arange(n), 1
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    adjacency = sp.csr_matrix(
        (np.ones(2 * left.size), (np.concatenate([left, right]), np.concatenate([right, left]))),
        shape=(n, n),
    )
    rcm = np.asarray(reverse_cuthill_mckee(adjacency, symmetric_mode=True), dtype=np.int64)
    best_order, best_width = np.arange(n), _width(np.arange(n), left, right)
    width = _width(rcm, left, right)
    if width < best_width:
        # the given numbering is kept when it is narrower: a map's cells row by row have
        # half-bandwidth cols + 1 with their 8 neighbours, where reverse Cuthill–McKee's
        # level sets (anti-diagonals) give 2·cols − 1
        best_order, best_width = rcm, width
    return best_order, best_width


def _width(order: np.ndarray, left: np.ndarray, right: np.ndarray) -> int:
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(order.size)
    return max(int(np.max(np.abs(position[left] - position[right]), initial=1)), 1)


def band_is_cheaper(n: int, width: int) -> bool:
    """Whether the block-tridiagonal kernel is the faster one for ``n`` variables of
    half-bandwidth ``b``.

    The dense kernel inverts each ``n × n`` normal matrix (``≈ n³`` flops) and multiplies by
    the inverses (``n²`` per column and solve, several solves per iteration); the band kernel
    forms the lower block triangle of each inverse in ``≈ 4 b n²`` flops and solves in
    ``O(n b)``, in products of ``b × b`` blocks that run slower than the dense kernel's
    large ones. Measured on 2 cores (metric privacy, 4-neighbour grids, ``b = k`` for
    ``k × k`` cells; block-ipm's whole run): 8 × 8 even (0.6–0.7 s), 12 × 12 4.9–6.2 s
    against 7.3–9.5 s, 15 × 15 20 s against 34 s.

    Parameters
    ----------
    n : int
        The variables of a column.
    width : int
        The half-bandwidth ``b`` (:func:`band_order`).

    Returns
    -------
    bool
    """
    return n >= 100 and 4 * width <= n
