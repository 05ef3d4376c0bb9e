"""Figures ready for a paper, read back from the Figure objects: titles from the problem's own
description, axes named apart from the secret, ticks where the cells are, levels per unit of
distance for metric privacy, a spanner's guarantee, no DP band under an LDP curve that lies
above it, short legends, and why points are missing."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import privopt as po
from privopt import closed_forms, plotting
from privopt.model.location import LocationGrid, OutputGrid

DB = po.DatabasePrior(m=2, n=2, row_probs=[0.6, 0.4])
EPS = [0.0, 0.5, 1.0, 2.0, 3.0]


@pytest.fixture(scope="module")
def db_curves():
    return po.sweep_notions(DB, "hamming", ["dp", "ldp", "identifiability", "pml"], epsilons=EPS)


@pytest.fixture(scope="module")
def map_curves():
    grid = LocationGrid(4, 4, counts=np.arange(1, 17).reshape(4, 4))
    d = grid.distortion()
    exact = po.sweep(grid.prior(), d, "metric_dp", epsilons=[0.5, 1.0], metric=grid.metric())
    with pytest.warns(UserWarning):  # the spanner's guarantee is a note, hence a warning
        spanned = po.sweep(
            grid.prior(), d, "metric_dp", epsilons=[0.5, 1.0], metric=grid.metric(), spanner=1.2
        )
    return grid, d, exact, spanned


def _gids(ax) -> dict:
    artists = list(ax.get_lines()) + list(ax.collections)
    return {a.get_gid(): a for a in artists if a.get_gid()}


def _legend_texts(fig) -> list[str]:
    legend = fig.legends[0] if fig.legends else fig.axes[0].get_legend()
    return [t.get_text() for t in legend.get_texts()]


def test_ldp_alone_gets_no_dp_band_only_its_lower_bound(db_curves):
    ldp = db_curves[1]
    fig = plotting.plot_curves([ldp], prior=DB, distortion="hamming")
    gids = _gids(fig.axes[0])
    assert "band:upper" not in gids and "band:fill" not in gids
    lower = gids["band:lower"]
    xs, ys = lower.get_data()
    bound = np.interp(ldp.column("requested_epsilon"), xs, ys)
    assert np.all(ldp.column("distortion") >= bound - 1e-9)  # a true lower bound for LDP
    eps_x = closed_forms.epsilon_x(DB)
    assert ys[0] == pytest.approx(closed_forms.h(eps_x, 2, 2))
    # with dp in the figure, the band of D*_DP is drawn (it is dp's)
    both = plotting.plot_curves(db_curves[:2], prior=DB, distortion="hamming")
    assert {"band:upper", "band:fill", "band:lower"} <= set(_gids(both.axes[0]))


def test_legends_stay_short(db_curves):
    fig = plotting.plot_curves(db_curves, prior=DB, distortion="hamming")
    texts = _legend_texts(fig)
    assert len(texts) <= 8  # was 11: the band and the checks are one entry each
    assert sum("shaded" in t for t in texts) == 1
    assert sum("checks passed" in t for t in texts) == 1
    # every artist the merged entries stand for is still drawn
    gids = _gids(fig.axes[0])
    assert {"band:fill", "band:lower", "checks:at_most", "checks:at_least"} <= set(gids)


def test_missing_points_say_why(db_curves):
    curve = db_curves[2]  # identifiability: infeasible below ε_X
    records = [dict(r) for r in curve.records]
    records[-1].update(status="time_limit", epsilon=None, distortion=None)
    records[-2].update(status="error", epsilon=None, distortion=None)
    odd = dataclasses.replace(curve, records=records, results=[None] * len(records))
    fig = plotting.plot_curves([odd], prior=DB, distortion="hamming")
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "curve:identifiability"]
    label = line.get_label()
    assert "1 infeasible" in label and "1 failed" in label and "1 not reached" in label


def test_metric_curve_is_per_unit_distance_and_names_its_map(map_curves):
    grid, d, exact, _ = map_curves
    fig = plotting.plot_curves([exact], prior=grid, distortion=d)
    ax = fig.axes[0]
    assert "per unit distance" in ax.get_xlabel()
    title = ax.get_title()
    assert "4 × 4 map cells" in title and "distance" in title and "matrix" not in title
    # a prior given as a plain Prior still gets a level per unit distance
    assert "per unit distance" in exact.plot(prior=grid.prior()).axes[0].get_xlabel()
    # a dp curve is not per distance
    dp = po.sweep([0.5, 0.5], "hamming", "dp", epsilons=[1.0])
    assert "per unit" not in dp.plot().axes[0].get_xlabel()


def test_spanner_curve_states_its_guarantee(map_curves):
    grid, d, _, spanned = map_curves
    fig = plotting.plot_curves([spanned], prior=grid, distortion=d)
    ax = fig.axes[0]
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "curve:metric_dp"]
    assert "1.2-spanner" in line.get_label() and r"1.2\,\varepsilon" in line.get_label()
    assert "1.2-spanner" in ax.get_title()


def test_location_axes_are_rows_and_columns_at_cell_centres():
    grid = LocationGrid(3, 5, cell_size=2.0, counts=np.arange(1, 16).reshape(3, 5))
    res = po.design(grid.prior(), grid.distortion(), "metric_dp", epsilon=0.5, metric=grid.metric())
    fig = plotting.plot_location(grid, res, cell="1,3")
    panels = [a for a in fig.axes if a.images]
    for ax in panels:
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("column c", "row r")
        assert list(ax.get_xticks()) == pytest.approx([1.0, 3.0, 5.0, 7.0, 9.0])
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "3", "4"]
        assert list(ax.get_yticks()) == pytest.approx([1.0, 3.0, 5.0])
    assert "per unit distance" in fig.get_suptitle()
    bars = [a.get_ylabel() for a in fig.axes if not a.images]
    assert len(bars) == len(panels) and all(bars)  # every colour bar labelled
    # the release panel marks the cell at its centre: row 1, column 3
    (mark,) = [ln for ln in panels[-1].get_lines()]
    assert (mark.get_xdata()[0], mark.get_ydata()[0]) == pytest.approx((7.0, 3.0))


def test_large_grid_ticks_are_thinned_and_output_cells_named():
    grid = LocationGrid(30, 30, outputs=OutputGrid(3, 3, 10.0))
    w = np.full((900, 9), 1 / 9)
    fig = plotting.plot_location(grid, w, panels=["prior", "output"])
    prior_ax, output_ax = [a for a in fig.axes if a.images]
    assert len(prior_ax.get_xticks()) <= 12
    assert output_ax.get_xlabel() == "output column c"
    assert [t.get_text() for t in output_ax.get_xticklabels()] == ["0", "1", "2"]


def test_plot_location_without_a_map_is_an_input_error():
    res = po.design([0.5, 0.5], "hamming", "ldp", epsilon=1.0)
    with pytest.raises(po.InputError) as info:
        plotting.plot_location(None, res)
    assert info.value.field == "grid"


def test_the_png_is_written(db_curves, map_curves, tmp_path):
    """The figures as a paper would take them (looked at by eye when they changed)."""
    grid, d, exact, spanned = map_curves
    for name, fig in (
        ("notions.png", plotting.plot_curves(db_curves, prior=DB, distortion="hamming")),
        ("metric.png", plotting.plot_curves([exact, spanned], prior=grid, distortion=d)),
    ):
        path = plotting.save_figure(fig, tmp_path / name)
        with open(path, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert math.isfinite(exact.records[0]["distortion"])
