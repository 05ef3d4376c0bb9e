"""The planar Laplace baseline, the optimal remap and the Bayesian adversary, each against an
independent computation: cell masses against ``scipy.integrate.dblquad`` on the Cartesian
density and against the paper's polar sampler; the remap and the adversary's error against
brute force over every deterministic map; the optimal design against the all-pairs LP."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

import privopt as po
from privopt import measures
from privopt.model.location import LocationGrid, LocationPoints, OutputGrid
from privopt.model.planar_laplace import (
    planar_laplace_matrix,
    polygon_masses,
)
from privopt.solve.location import compare_with_laplace, laplace_level
from tests.crosscheck.location_lp import all_pairs_metric_lp, distances, sample_planar_laplace


def density(y, x, eps, centre):
    """The planar Laplace density ε²/(2π) e^{−ε|z − centre|} (dblquad's argument order)."""
    return eps**2 / (2 * math.pi) * math.exp(-eps * math.hypot(x - centre[0], y - centre[1]))


@pytest.mark.parametrize(
    ("eps", "centre", "rect"),
    [
        (0.7, (0.5, 0.5), (0.0, 1.0, 0.0, 1.0)),  # the centre's own cell
        (0.7, (0.5, 0.5), (1.0, 2.0, 0.0, 1.0)),  # a neighbour
        (1.3, (0.2, -0.4), (-3.0, -1.5, 2.0, 2.5)),  # away, thin
        (2.0, (0.0, 0.0), (9.0, 10.0, 3.0, 4.0)),  # far: mass about 1e-8
        (0.25, (1.0, 0.0), (-0.5, 0.5, -0.5, 0.5)),  # the centre on the cell's edge line
    ],
)
def test_cell_masses_match_the_planar_density_integrated(eps, centre, rect):
    x0, x1, y0, y1 = rect
    polygon = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    got = polygon_masses(np.array([centre]), [polygon], eps)[0, 0]
    want, _ = integrate.dblquad(density, x0, x1, y0, y1, args=(eps, centre), epsabs=0, epsrel=1e-12)
    assert got == pytest.approx(want, rel=1e-10)


def test_matrix_rows_sum_to_one_with_the_border_regions_extended():
    """The regions cut the whole plane (the border cells reach 760/ε beyond the map), so the
    masses of each row add up to 1 before any normalisation."""
    for location in (
        LocationGrid(5, 6, cell_size=0.4, origin=(2.0, -1.0)),
        LocationGrid(6, 6, outputs=OutputGrid(3, 3, 2.5, origin=(-0.5, -1.0))),
        LocationPoints(np.random.default_rng(0).uniform(0, 4, (25, 2))),
    ):
        W = planar_laplace_matrix(location, 0.9)
        assert np.abs(W.sum(axis=1) - 1).max() < 1e-12


@pytest.mark.parametrize("voronoi", [False, True])
def test_matrix_matches_the_papers_sampler(voronoi):
    """Draw from the polar method of Andrés et al. (2013), Sec. 4.1 (Lambert W), report the
    cell containing the draw (clamped to the grid: truncation) or the nearest output point,
    and compare frequencies with the matrix: every cell within 5 standard errors."""
    rng = np.random.default_rng(7)
    eps, n = 0.8, 200_000
    if voronoi:
        outputs = rng.uniform(0, 4, (7, 2))
        location = LocationPoints([[1.0, 1.0], [3.0, 2.5]], outputs=outputs)
    else:
        location = LocationGrid(2, 2, outputs=OutputGrid(3, 3, 1.5, origin=(-0.5, -0.5)))
    W = planar_laplace_matrix(location, eps)
    for row, centre in enumerate(location.planar_points):
        z = sample_planar_laplace(centre, eps, n, rng)
        if voronoi:
            hits = np.argmin(distances(z, location.output_points), axis=1)
        else:
            grid = location.output_grid
            c = np.clip(((z[:, 0] - grid.origin[0]) // grid.cell_size).astype(int), 0, 2)
            r = np.clip(((z[:, 1] - grid.origin[1]) // grid.cell_size).astype(int), 0, 2)
            hits = r * grid.cols + c
        freq = np.bincount(hits, minlength=location.n_outputs) / n
        se = np.sqrt(W[row] * (1 - W[row]) / n) + 1e-12
        assert np.all(np.abs(freq - W[row]) <= 5 * se), (freq, W[row])


@pytest.mark.parametrize(
    "location",
    [
        LocationGrid(6, 6, counts=np.arange(1, 37).reshape(6, 6)),
        LocationGrid(6, 6, cell_size=0.5, outputs=OutputGrid(2, 2, 1.5)),
        LocationPoints(np.random.default_rng(3).uniform(0, 5, (20, 2))),
    ],
    ids=["cells", "output-grid", "points-voronoi"],
)
def test_planar_laplace_is_epsilon_d_private_on_the_secrets(location):
    """ε·d-private for the Euclidean distance between the secrets' points (every pair,
    every output), hence for Manhattan too; and not much looser than ε."""
    eps = 0.9
    W = po.planar_laplace(location, eps)
    euclid = location.metric("euclidean")
    level = measures.metric_dp_level(location.prior(), W, euclid)
    assert level <= eps * (1 + 1e-9)
    assert level >= 0.8 * eps  # the discretisation loses little of the guarantee's tightness
    pts = location.planar_points
    manhattan = po.Metric.from_points(pts, "manhattan")
    assert measures.metric_dp_level(location.prior(), W, manhattan) <= eps * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(
    centres=st.lists(
        st.tuples(st.floats(-3, 3), st.floats(-3, 3)), min_size=2, max_size=2, unique=True
    ),
    corner=st.tuples(st.floats(-4, 4), st.floats(-4, 4)),
    size=st.tuples(st.floats(0.05, 3), st.floats(0.05, 3)),
    eps=st.floats(0.1, 4),
)
def test_masses_meet_the_ratio_bound_of_the_density(centres, corner, size, eps):
    """D_ε(z − x) ≤ e^{ε|x − x'|} D_ε(z − x') integrates to the same bound on any region."""
    (x0, y0), (w, h) = corner, size
    polygon = np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]])
    a, b = polygon_masses(np.array(centres), [polygon], eps)[:, 0]
    gap = math.dist(*centres)
    assert a <= b * math.exp(eps * gap) * (1 + 1e-9) + 1e-300
    assert b <= a * math.exp(eps * gap) * (1 + 1e-9) + 1e-300


def test_geographic_map_laplace_is_calibrated_to_the_great_circle():
    """Places in latitude/longitude: the noise is drawn in the projected plane (km) at
    ε' = ε · min(haversine / plane distance), so the mechanism is ε·d-private for the
    great-circle distance d."""
    rng = np.random.default_rng(5)
    places = np.column_stack([rng.uniform(59.0, 60.5, 12), rng.uniform(10.0, 12.0, 12)])
    location = LocationPoints(places, coordinates="latlon")
    metric = location.metric()  # haversine, km
    assert metric.kind == "haversine"
    eps = 0.05  # per km
    eps_plane = laplace_level(location, metric, eps)
    assert eps_plane != eps and abs(eps_plane / eps - 1) < 0.02
    W = po.planar_laplace(location, eps_plane)
    assert measures.metric_dp_level(location.prior(), W, metric) <= eps * (1 + 1e-9)


def test_bad_epsilon_is_an_input_error():
    for bad in (0, -1, float("inf"), float("nan"), "x", True):
        with pytest.raises(po.InputError) as info:
            po.planar_laplace(LocationGrid(2, 2), bad)
        assert info.value.field == "epsilon"


# --- the remap and the adversary -----------------------------------------------------------
def brute_best_remap(p, W, d):
    """min over every deterministic map of the outputs onto the candidates of E[d]."""
    m, n_cand = W.shape[1], d.shape[1]
    best = np.inf
    for choice in itertools.product(range(n_cand), repeat=m):
        moved = np.zeros((W.shape[0], n_cand))
        for u, c in enumerate(choice):
            moved[:, c] += W[:, u]
        best = min(best, float((p[:, None] * moved * d).sum()))
    return best


def brute_adversary(p, W, loss):
    """min over every deterministic estimator ŝ(u) of E[loss(S, ŝ(U))]."""
    m, n_est = W.shape[1], loss.shape[1]
    best = np.inf
    for guess in itertools.product(range(n_est), repeat=m):
        value = sum(p[x] * W[x, u] * loss[x, guess[u]] for x in range(len(p)) for u in range(m))
        best = min(best, value)
    return best


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), k=st.integers(2, 4), m=st.integers(2, 4), c=st.integers(1, 3)
)
def test_bayes_remap_and_adversary_error_match_brute_force(seed, k, m, c):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k))
    W = rng.dirichlet(np.ones(m), size=k)
    d = rng.uniform(0, 3, (k, c))
    remap = measures.bayes_remap(p, W, d)
    moved = np.zeros((k, c))
    np.add.at(moved.T, remap, W.T)
    assert (p[:, None] * moved * d).sum() == pytest.approx(brute_best_remap(p, W, d), abs=1e-12)
    got = measures.expected_inference_error(p, W, d)
    assert got == pytest.approx(brute_adversary(p, W, d), abs=1e-12)
    costs = measures.posterior_expected_loss(p, W, d)
    assert costs.shape == (m, c)
    assert costs.min(axis=1).sum() == pytest.approx(got, abs=1e-12)


def test_remap_of_an_output_nobody_emits_and_shape_errors():
    p = np.array([0.5, 0.5, 0.0])
    W = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    d = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    # output 2 is emitted only by a secret of probability 0: remapped as under a uniform prior
    assert measures.bayes_remap(p, W, d).tolist() == [0, 1, 2]
    with pytest.raises(po.InputError) as info:
        measures.bayes_remap(p, W, d[:2])
    assert info.value.field == "loss"
    with pytest.raises(po.InputError) as info:
        measures.expected_inference_error(p, W, np.full((3, 2), np.nan))
    assert info.value.field == "loss"


def test_remap_keeps_the_guarantee_and_never_adds_loss():
    grid = LocationGrid(5, 5, counts=np.arange(1, 26).reshape(5, 5))
    eps = 0.6
    W = po.planar_laplace(grid, eps)
    d = grid.distortion().matrix
    remap = measures.bayes_remap(grid.prior(), W, d)
    moved = np.zeros_like(W.matrix)
    np.add.at(moved.T, remap, W.matrix.T)
    prior = grid.prior()
    assert measures.expected_distortion(prior, moved, d) <= measures.expected_distortion(
        prior, W, d
    )
    metric = grid.metric()
    assert measures.metric_dp_level(prior, moved, metric) <= measures.metric_dp_level(
        prior, W, metric
    ) * (1 + 1e-12)


# --- the comparison ----------------------------------------------------------------------
def test_comparison_orders_the_mechanisms_and_the_optimum_is_the_all_pairs_lp():
    grid = LocationGrid(5, 5, counts=np.arange(1, 26).reshape(5, 5), outputs=OutputGrid(3, 3, 2))
    eps = 0.8
    found = compare_with_laplace(grid, eps)
    lp, _ = all_pairs_metric_lp(
        grid.prior().probs,
        distances(grid.points, grid.points),
        distances(grid.points, grid.output_points),
        eps,
    )
    best, laplace, remapped = found.rows
    assert found.status == "optimal"
    assert best.quality_loss == pytest.approx(lp, rel=1e-6)
    assert found.lower_bound <= best.quality_loss
    assert best.quality_loss <= remapped.quality_loss <= laplace.quality_loss
    for row in found.rows:
        assert row.metric_level <= eps * (1 + 1e-7)
        assert row.adversary_error > 0
    assert found.laplace_epsilon == eps
    data = found.to_dict()
    assert [r["mechanism"] for r in data["mechanisms"]] == [r.name for r in found.rows]
    assert found.table().count("\n") >= 4


def test_comparison_with_a_manhattan_metric_and_a_given_result():
    grid = LocationGrid(4, 4, counts=np.arange(1, 17).reshape(4, 4))
    metric = grid.metric("manhattan")
    result = po.design(
        grid.prior(), grid.distortion("manhattan"), "metric_dp", epsilon=0.5, metric=metric
    )
    found = compare_with_laplace(grid, 0.5, result=result, norm="manhattan")
    assert found.laplace_epsilon == pytest.approx(0.5)  # min d₁/d₂ = 1 on axis-aligned pairs
    assert found.optimal.quality_loss == pytest.approx(result.distortion)
    assert all(row.metric_level <= 0.5 * (1 + 1e-7) for row in found.rows)


def test_with_a_spanner_the_baseline_is_held_to_the_designs_guarantee():
    """A design at ε on a δ-spanner's edges is guaranteed (ε·δ)·d on every pair: the planar
    Laplace baseline is calibrated to ε·δ, not to ε (a stricter guarantee than the design's)."""
    from privopt.model.planar_laplace import planar_laplace

    grid = LocationGrid(5, 5, counts=np.arange(1, 26).reshape(5, 5))
    eps, stretch = 0.5, 1.1
    metric = grid.metric()
    with pytest.warns(UserWarning):  # the spanner's note on the full metric's level
        result = po.design(
            grid.prior(),
            grid.distortion(),
            "metric_dp",
            epsilon=eps,
            metric=metric,
            spanner=stretch,
        )
    found = compare_with_laplace(grid, eps, result=result, metric=metric)
    assert found.epsilon == eps
    assert found.spanner_stretch == stretch
    assert found.guaranteed_level == pytest.approx(eps * stretch)
    assert found.laplace_epsilon == pytest.approx(eps * stretch)  # Euclidean: ε' = the level
    baseline = planar_laplace(grid, eps * stretch)
    loss = measures.expected_distortion(grid.prior(), baseline, grid.distortion().matrix)
    assert found.laplace.quality_loss == pytest.approx(loss, rel=1e-12)
    for row in found.rows:
        assert row.metric_level <= eps * stretch * (1 + 1e-7)
    assert found.laplace.metric_level > eps  # not held to the design's level on the edges
    data = found.to_dict()
    assert data["guaranteed_level"] == pytest.approx(eps * stretch)
    assert data["spanner_stretch"] == stretch
    # the design solved here from the spanner option: the same calibration
    with pytest.warns(UserWarning):
        solved = compare_with_laplace(grid, eps, metric=metric, spanner=stretch)
    assert solved.guaranteed_level == pytest.approx(eps * stretch)
    assert solved.laplace.quality_loss == pytest.approx(found.laplace.quality_loss, rel=1e-12)
    assert solved.optimal.quality_loss == pytest.approx(result.distortion, rel=1e-6)


def test_without_a_spanner_the_guaranteed_level_is_the_level():
    grid = LocationGrid(4, 4, counts=np.arange(1, 17).reshape(4, 4))
    found = compare_with_laplace(grid, 0.6, spanner=1.0)  # stretch 1: the exact pairs
    assert found.spanner_stretch is None
    assert found.guaranteed_level == found.epsilon == 0.6
    assert found.to_dict()["spanner_stretch"] is None


def test_the_table_states_the_guaranteed_level_and_compares_at_it():
    """The table's numbers: the guaranteed level, the design's level on the edges, the
    stretch, and the optimal loss as a share of each baseline's."""
    import re

    from privopt.solve.location import comparison_table

    rows = [
        {"mechanism": "optimal", "quality_loss": 1.5, "adversary_error": 1.0, "metric_level": 0.54},
        {
            "mechanism": "planar Laplace",
            "quality_loss": 3.0,
            "adversary_error": 1.0,
            "metric_level": 0.55,
        },
    ]
    data = {
        "epsilon": 0.5,
        "guaranteed_level": 0.55,
        "spanner_stretch": 1.1,
        "laplace_epsilon": 0.55,
        "mechanisms": rows,
    }

    def numbers(line: str) -> list[float]:
        return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", line)]

    lines = comparison_table(data).splitlines()
    assert numbers(lines[0]) == [0.55]  # the heading: the level every row is held to
    assert numbers(lines[1]) == [0.5, 1.1, 0.5, 1.1]  # the design: ε on a δ-spanner's edges
    assert 0.55 in numbers(lines[2])  # the Laplace noise's ε'
    share = next(line for line in lines if "%" in line)
    assert numbers(share) == [0.55, 50.0]
    exact = comparison_table(
        {**data, "guaranteed_level": 0.5, "spanner_stretch": None, "laplace_epsilon": 0.5}
    )
    assert len(exact.splitlines()) == len(lines) - 1  # no spanner line
    assert numbers(exact.splitlines()[0]) == [0.5]


def test_levels_are_measured_only_where_the_pairs_are_cheap():
    """Finding the constraint pairs of a dense metric is O(k³): beyond 1,000 places of
    support a level is measured only when the pairs are known (cached by the design) or the
    metric is a graph on the whole map."""
    from privopt.solve.location import MEASURED_SUPPORT, _level

    rng = np.random.default_rng(11)
    places = LocationPoints(rng.uniform(0, 50, (MEASURED_SUPPORT + 1, 2)))
    metric = places.metric()
    uniform = np.full((places.size, 1), 1.0)
    assert _level(places.prior(), uniform, metric) is None
    assert "pairs" not in metric.__dict__  # nothing O(k³) was started
    grid = LocationGrid(33, 33)  # 1,089 cells
    assert _level(grid.prior(), np.full((grid.size, 1), 1.0), grid.metric("manhattan")) == 0.0
