"""Location problems: the map grid helper and the heatmap figure."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import privopt as po  # noqa: E402
from privopt import InputError  # noqa: E402
from privopt.plotting import plot_location, save_figure  # noqa: E402


def test_grid_cells_points_prior_metric_and_distortion():
    grid = po.LocationGrid(2, 3, cell_size=2.0, counts=[[1, 0, 3], [2, 2, 2]])
    assert grid.labels == ["0,0", "0,1", "0,2", "1,0", "1,1", "1,2"]
    assert np.allclose(grid.points[4], [3.0, 3.0])  # centre of row 1, column 1
    assert np.allclose(grid.prior().probs, np.array([1, 0, 3, 2, 2, 2]) / 10)
    d = grid.metric().matrix
    assert d[0, 5] == pytest.approx(np.hypot(4.0, 2.0))
    assert grid.metric("manhattan").matrix[0, 5] == pytest.approx(6.0)
    assert np.allclose(grid.distortion(power=2).matrix, d**2)
    assert np.allclose(grid.as_map(np.arange(6)), [[0, 1, 2], [3, 4, 5]])


@pytest.mark.parametrize(
    ("kwargs", "field", "code"),
    [
        ({"rows": 0, "cols": 2}, "grid.rows", None),
        ({"rows": 2, "cols": 2, "cell_size": -1}, "grid.cell_size", "not_positive"),
        ({"rows": 2, "cols": 2, "counts": [[1, 2, 3]]}, "grid.counts", None),
        ({"rows": 1, "cols": 2, "counts": [[1, -2]]}, "grid.counts", "negative_weight"),
        ({"rows": 1, "cols": 2, "counts": [[0, 0]]}, "grid.counts", "zero_total_weight"),
    ],
)
def test_grid_errors(kwargs, field, code):
    with pytest.raises(InputError) as info:
        po.LocationGrid(**kwargs)
    assert (info.value.field, info.value.code) == (field, code)


def test_heatmap_panels_on_new_figure_and_given_axes(tmp_path):
    grid = po.LocationGrid(3, 3, counts=np.arange(1, 10).reshape(3, 3))
    result = po.design(
        grid.prior(), grid.distortion(), "metric_dp", epsilon=1.0, metric=grid.metric()
    )
    fig = plot_location(grid, result, cell="1,1", title="geo")
    axes = fig.axes
    images = [a.images[0] for a in axes if a.images]
    assert len(images) == 3
    W = result.mechanism.matrix
    assert np.allclose(images[0].get_array(), grid.as_map(grid.prior().probs))
    assert np.allclose(images[1].get_array(), grid.as_map(grid.prior().probs @ W))
    assert np.allclose(images[2].get_array(), grid.as_map(W[4]))
    path = save_figure(fig, tmp_path / "map.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    own = Figure()
    FigureCanvasAgg(own)
    ax = own.add_subplot()
    assert plot_location(grid, ax=ax) is own and len(ax.images) == 1
    two = own.subplots(1, 2)
    plot_location(grid, W, ax=two)
    with pytest.raises(InputError, match="axes"):
        plot_location(grid, W, ax=ax)
    with pytest.raises(InputError, match="cells × cells"):
        plot_location(grid, np.eye(4))
    with pytest.raises(InputError, match="unknown cell"):
        plot_location(grid, W, cell="9,9")
