"""A map's metrics found from its lattice: the Euclidean constraint pairs by the gcd rule, the
8-neighbour spanner, the Manhattan metric's grid edges — each against the general O(k³)
search on the same points."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import shortest_path

import privopt as po
from privopt.model import Metric
from privopt.model.metric import KING_STRETCH


def _pair_set(pairs) -> set[tuple[int, int]]:
    return set(zip(pairs.left.tolist(), pairs.right.tolist(), strict=True))


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 7),
    cols=st.integers(1, 7),
    size=st.floats(0.1, 10.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_lattice_pairs_equal_the_geodesic_search(rows, cols, size, seed):
    grid = po.LocationGrid(rows, cols, cell_size=size)
    fast = grid.metric("euclidean")
    slow = Metric.from_points(grid.points, "euclidean")
    assert np.allclose(fast.matrix, slow.matrix)
    assert _pair_set(fast.pairs) == _pair_set(slow.pairs)
    # on part of the cells (a prior with empty cells): the segments through missing cells
    # no longer imply anything
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(grid.size, size=max(1, grid.size // 2), replace=False))
    assert _pair_set(fast.pairs_on(keep)) == _pair_set(slow.pairs_on(keep))
    manhattan = Metric.from_points(grid.points, "manhattan")
    assert _pair_set(grid.metric("manhattan").pairs) == _pair_set(manhattan.pairs)


def test_the_king_grid_is_a_spanner_of_the_stated_stretch():
    grid = po.LocationGrid(9, 11, cell_size=2.5)
    metric = grid.metric()
    edges = metric.spanner(1.1)
    assert edges.kind == "spanner" and edges.left.size == 2 * (2 * 9 * 11 - 9 - 11 + 2 * 8 * 10)
    graph = sp.csr_matrix((edges.weights, (edges.left, edges.right)), shape=(99, 99))
    path = shortest_path(graph, directed=False)
    off = ~np.eye(99, dtype=bool)
    stretch = path[off] / metric.matrix[off]
    assert stretch.min() >= 1 - 1e-12 and stretch.max() <= KING_STRETCH + 1e-12
    # below the king grid's stretch the greedy spanner is built as before
    tight = metric.spanner(1.05)
    greedy = Metric.from_points(grid.points).spanner(1.05)
    assert _pair_set(tight) == _pair_set(greedy)


def test_a_map_designed_on_the_king_spanner_meets_its_guarantee():
    grid = po.LocationGrid(6, 6, counts=np.arange(1, 37).reshape(6, 6))
    with pytest.warns(UserWarning):  # the note that the level holds on the spanner's edges
        res = po.design(
            grid.prior(),
            grid.distortion(),
            "metric_dp",
            epsilon=0.5,
            metric=grid.metric(),
            spanner=1.1,
        )
    assert res.status == "optimal"
    W = res.mechanism.matrix
    d = grid.metric().matrix
    ratio = np.log(W[:, None, :] / W[None, :, :])
    assert (ratio <= 0.5 * 1.1 * d[:, :, None] + 1e-7).all()
