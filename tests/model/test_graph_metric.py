"""Metric.from_graph called directly: the field it names (its own argument), repeated edges
(equal copies accepted, conflicting ones refused) and the code of every bad edge. Errors are
told apart by their field and code, never their wording."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privopt as po
from privopt.model import Metric


def _pair_set(metric: Metric) -> set[tuple[int, int, float]]:
    pairs = metric.pairs
    return set(zip(pairs.left.tolist(), pairs.right.tolist(), pairs.weights.tolist(), strict=True))


def _refused(k: int, edges, **kwargs) -> po.InputError:
    with pytest.raises(po.InputError) as info:
        Metric.from_graph(k, edges, **kwargs)
    return info.value


# --- the field --------------------------------------------------------------------------------
def test_a_direct_call_names_its_edges_argument():
    error = _refused(3, [[0, 1], [1, 5]])
    assert (error.field, error.code) == ("edges[1]", "index_out_of_range")
    error = _refused(3, [[0, 1]])
    assert (error.field, error.code) == ("edges", "disconnected_graph")
    assert Metric.from_graph(3, [[0, 1], [1, 2]]).field == "edges"


def test_a_given_field_is_kept_and_the_request_layer_names_its_key():
    error = _refused(3, [[0, 1], [1, 1]], field="roads")
    assert (error.field, error.code) == ("roads[1]", "self_loop")
    with pytest.raises(po.InputError) as info:
        po.design(
            [0.3, 0.3, 0.4], "hamming", "metric_dp", epsilon=1.0, metric={"edges": [[0, 1], [1, 5]]}
        )
    assert (info.value.field, info.value.code) == ("privacy.metric.edges[1]", "index_out_of_range")


# --- repeated edges ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "copy",
    [[1, 2, 2.0], [2, 1, 2.0], [2, 1, 2.0 * (1 + 1e-14)]],
    ids=["same direction", "reversed", "within rounding"],
)
def test_an_edge_repeated_with_its_weight_is_accepted(copy):
    once = Metric.from_graph(4, [[0, 1], [1, 2, 2.0], [2, 3, 0.5]])
    twice = Metric.from_graph(4, [[0, 1], [1, 2, 2.0], copy, [2, 3, 0.5]])
    assert np.array_equal(once.matrix, twice.matrix)
    assert _pair_set(once) == _pair_set(twice)
    assert twice.pairs.n_pairs == 6  # three edges, both orders


def test_an_unweighted_edge_repeated_as_weight_one_is_the_same_edge():
    metric = Metric.from_graph(3, [[0, 1], [1, 0, 1.0], [1, 2]])
    assert metric.matrix[0, 2] == 2.0


@pytest.mark.parametrize(
    ("edges", "index"),
    [
        ([[0, 1], [1, 2, 1.0], [2, 1, 2.0]], 2),  # reversed, longer
        ([[0, 1, 3.0], [1, 2], [0, 1, 1.0]], 2),  # same direction, shorter (no longer kept)
        ([[0, 1], [1, 0, 1.5], [1, 2], [0, 1, 1.0]], 1),  # the first copy that differs
        ([[0, 1], [1, 2], [0, 1, 1.0 + 1e-9]], 2),  # beyond rounding
    ],
)
def test_an_edge_repeated_with_another_weight_is_refused(edges, index):
    error = _refused(3, edges)
    assert (error.field, error.code) == (f"edges[{index}]", "duplicate_edge")


@settings(max_examples=30, deadline=None)
@given(
    k=st.integers(2, 9),
    seed=st.integers(0, 2**32 - 1),
    repeats=st.lists(st.tuples(st.integers(0, 100), st.booleans()), max_size=12),
)
def test_repeating_edges_with_their_weights_changes_nothing(k, seed, repeats):
    """A random connected graph, and the same graph with some edges listed again (either
    direction, same weight): the same metric and the same constraint pairs."""
    rng = np.random.default_rng(seed)
    edges = [[int(rng.integers(0, v)), v, float(rng.uniform(0.1, 5.0))] for v in range(1, k)]
    for _ in range(k):  # a few more edges, none repeated
        a, b = (int(v) for v in rng.choice(k, 2, replace=False))
        if not any({a, b} == {e[0], e[1]} for e in edges):
            edges.append([a, b, float(rng.uniform(0.1, 5.0))])
    listed = [list(e) for e in edges]
    for which, flip in repeats:
        a, b, w = edges[which % len(edges)]
        listed.insert(which % (len(listed) + 1), [b, a, w] if flip else [a, b, w])
    once, again = Metric.from_graph(k, edges), Metric.from_graph(k, listed)
    assert np.array_equal(once.matrix, again.matrix)
    assert _pair_set(once) == _pair_set(again)


# --- the code of every bad edge ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad", "code"),
    [
        ([1, 2, 1.0, 1.0], "malformed_edge"),  # four entries
        ([1], "malformed_edge"),
        (5, "malformed_edge"),  # not a sequence
        ([1.5, 2], "not_an_index"),
        ([True, 2], "not_an_index"),
        (["b", 2], "not_an_index"),  # symbols only through a request (the secret's alphabet)
        ([1, 2, "far"], "not_a_number"),
        ([1, 2, -1.0], "bad_edge_weight"),
        ([1, 3], "index_out_of_range"),
        ([2, 2], "self_loop"),
    ],
)
def test_every_bad_edge_has_a_code_and_names_the_edge(bad, code):
    error = _refused(3, [[0, 1], bad])
    assert (error.field, error.code) == ("edges[1]", code)


@pytest.mark.parametrize(
    ("edges", "field", "code"),
    [
        ([[0, 1], [1, 2, 1.0], [2, 1, 2.0]], "privacy.metric.edges[2]", "duplicate_edge"),
        ([[0, 1], [1, 2, 1.0, 1.0]], "privacy.metric.edges[1]", "malformed_edge"),
    ],
)
def test_a_request_names_a_bad_edge_by_its_key_and_index(edges, field, code):
    with pytest.raises(po.InputError) as info:
        po.design([0.3, 0.3, 0.4], "hamming", "metric_dp", epsilon=1.0, metric={"edges": edges})
    assert (info.value.field, info.value.code) == (field, code)


def test_metrics_built_directly_name_their_own_arguments():
    """Called from Python, each constructor's errors name its argument (a request or a
    problem file passes its own key instead)."""
    with pytest.raises(po.InputError) as info:
        po.Metric.from_matrix([[0, 1], [2, 0]])
    assert info.value.field == "matrix"
    with pytest.raises(po.InputError) as info:
        po.Metric.from_points([[0.0, 0.0], [np.nan, 1.0]])
    assert info.value.field == "points"
    with pytest.raises(po.InputError) as info:
        po.Metric.from_points([[0.0, 0.0], [1.0, 1.0]], norm="chebyshev")
    assert info.value.field == "norm"
    with pytest.raises(po.InputError) as info:
        po.Metric.from_points([[0.0, 0.0], [np.nan, 1.0]], field="privacy.metric")
    assert info.value.field == "privacy.metric.points"
