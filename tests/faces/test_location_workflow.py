"""The location workflow: outputs apart from the secrets, places and check-ins from CSV files,
graphs by edges, problem files, the command line (the Laplace comparison, --plot, exit 2 on
bad input), sweeps. Bad input is told apart by the error's field and code, never its wording."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import privopt as po  # noqa: E402
from privopt.cli import main  # noqa: E402
from privopt.io.files import load_problem  # noqa: E402
from privopt.model.location import (  # noqa: E402
    LocalProjection,
    LocationGrid,
    LocationPoints,
    OutputGrid,
)
from privopt.model.location_csv import parse_location_csv  # noqa: E402
from privopt.plotting import plot_location, plot_mechanism  # noqa: E402
from tests.crosscheck.location_lp import (  # noqa: E402
    all_pairs_metric_lp,
    bin_checkins,
    distances,
)

ROOT = Path(__file__).resolve().parents[2]
CHECKINS = ROOT / "problems" / "data" / "synthetic_checkins.tsv"
PNG = b"\x89PNG\r\n\x1a\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "Traceback" not in out.out
    return code, out.out, out.err


# --- outputs apart from the secrets --------------------------------------------------------
def test_output_grid_distortion_is_secrets_by_outputs_and_the_metric_stays_on_the_secrets():
    grid = LocationGrid(4, 6, cell_size=0.5, outputs=OutputGrid(2, 3, 1.0))
    assert grid.n_outputs == 6 and grid.output_labels[4] == "o1,1"
    d = grid.distortion().matrix
    assert d.shape == (24, 6)
    assert np.allclose(d, distances(grid.points, grid.output_points))
    assert np.allclose(grid.distortion(power=2).matrix, d**2)
    assert grid.metric().size == 24
    manhattan = grid.distortion("manhattan").matrix
    assert np.allclose(manhattan, np.abs(grid.points[:, None] - grid.output_points).sum(axis=2))


def test_output_points_and_a_covering_grid():
    grid = LocationGrid(3, 3, outputs=[[0.5, 0.5], [2.5, 2.5]])
    assert grid.output_labels == ["p0", "p1"] and grid.output_grid is None
    assert grid.distortion().matrix[0, 1] == pytest.approx(np.hypot(2, 2))
    cover = OutputGrid.covering(grid.bounds, 2.0)
    assert (cover.rows, cover.cols) == (2, 2)
    cover.check_covers(grid.bounds, "outputs")  # no error


@pytest.mark.parametrize(
    "outputs",
    [
        OutputGrid(2, 2, 1.0),  # too small
        OutputGrid(3, 3, 1.0, origin=(0.5, 0.0)),  # shifted off the west edge
        OutputGrid(2, 2, 1.4),  # 2.8 < 3
    ],
)
def test_output_grid_that_does_not_cover_the_map_is_refused(outputs):
    with pytest.raises(po.InputError) as info:
        LocationGrid(3, 3, outputs=outputs)
    assert info.value.code == "outputs_do_not_cover"
    assert info.value.field == "grid.outputs"


def test_duplicate_output_points_and_places_are_refused():
    with pytest.raises(po.InputError) as info:
        LocationGrid(2, 2, outputs=[[0, 0], [1, 1], [0, 0]])
    assert info.value.code == "duplicate_point" and info.value.field == "grid.outputs.points[2]"
    with pytest.raises(po.InputError) as info:
        LocationPoints([[0, 0], [1, 0], [1, 0]])
    assert info.value.code == "duplicate_point"


def test_design_with_output_grid_matches_the_all_pairs_lp():
    grid = LocationGrid(4, 4, counts=np.arange(1, 17).reshape(4, 4), outputs=OutputGrid(2, 2, 2))
    eps = 0.9
    result = po.design(
        grid.prior(), grid.distortion(), "metric_dp", epsilon=eps, metric=grid.metric()
    )
    want, _ = all_pairs_metric_lp(
        grid.prior().probs, distances(grid.points, grid.points), grid.distortion().matrix, eps
    )
    assert result.status == "optimal"
    assert result.mechanism.matrix.shape == (16, 4)
    assert result.distortion == pytest.approx(want, rel=1e-6)


# --- CSV files ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "kwargs", "coordinates", "weights"),
    [
        ("lat,lon\n48.1,2.2\n48.2,2.3\n", {}, "latlon", None),
        ("Latitude;Longitude;count\n48.1;2.2;3\n48.2;2.3;1\n", {}, "latlon", [3, 1]),
        ("x\ty\tweight\n1\t2\t0.5\n3\t4\t2\n", {}, "xy", [0.5, 2]),
        ("# comment\n\nid,x,y\na,1,2\nb,3,4\n", {}, "xy", None),
        (
            "u1\tt\t48.1\t2.2\tv\nu2\tt\t48.2\t2.3\tv\n",
            {"columns": (2, 3), "coordinates": "latlon"},
            "latlon",
            None,
        ),
        ("1,2\n3,4\n", {"coordinates": "xy"}, "xy", None),
    ],
)
def test_csv_forms(text, kwargs, coordinates, weights):
    table = parse_location_csv(text, source="f.csv", **kwargs)
    assert table.coordinates == coordinates
    assert table.points.shape == (2, 2)
    assert (table.weights is None) == (weights is None)
    if weights is not None:
        assert table.weights.tolist() == weights


@pytest.mark.parametrize(
    ("text", "kwargs", "field", "code"),
    [
        ("lat,lon\n48.1,2.2\n48.2,\n", {}, "f.csv[line 3].longitude", "missing_value"),
        ("lat,lon\n48.1,2.2\n48.2\n", {}, "f.csv[line 3].longitude", "missing_value"),
        ("lat,lon\n48.1,north\n", {}, "f.csv[line 2].longitude", "not_a_number"),
        ("lat,lon\nnan,2.0\n", {}, "f.csv[line 2].latitude", "not_a_number"),
        ("lat,lon\n91,2.0\n", {}, "f.csv[line 2].latitude", "latitude_range"),
        ("lat,lon\n-90.5,2.0\n", {}, "f.csv[line 2].latitude", "latitude_range"),
        ("lat,lon\n45,181\n", {}, "f.csv[line 2].longitude", "longitude_range"),
        ("x,y,weight\n1,2,-1\n", {}, "f.csv[line 2].weight", "negative_weight"),
        ("x,y,weight\n1,2,\n", {}, "f.csv[line 2].weight", "missing_value"),
        ("lat,lon\n", {}, "f.csv", "missing_value"),
        ("1,2\n", {}, "coordinates", None),
        ("a,b\n1,2\n", {"coordinates": "xy", "columns": ("x", "y")}, "columns", None),
    ],
)
def test_bad_csv_is_a_named_input_error(text, kwargs, field, code):
    with pytest.raises(po.InputError) as info:
        parse_location_csv(text, source="f.csv", **kwargs)
    assert info.value.field == field
    assert info.value.code == code


def test_places_from_a_csv_file(tmp_path):
    path = write(tmp_path, "v.csv", "name,x,y,visits\na,0,0,2\nb,3,4,1\n")
    places = LocationPoints.from_csv(path)
    assert places.labels == ["a", "b"] and places.coordinates == "xy"
    assert places.prior().probs.tolist() == pytest.approx([2 / 3, 1 / 3])
    assert places.metric().matrix[0, 1] == pytest.approx(5.0)


def test_read_location_csv_names_the_file(tmp_path):
    path = write(tmp_path, "places.csv", "lat,lon\n48.1,2.2\n95,2\n")
    with pytest.raises(po.InputError) as info:
        po.read_location_csv(path)
    assert info.value.field == f"{path}[line 3].latitude"
    assert info.value.code == "latitude_range"


# --- check-ins binned into a grid prior --------------------------------------------------
def test_checkins_are_binned_like_an_independent_count():
    bounds = (48.835, 2.31, 48.885, 2.395)
    table = po.read_location_csv(CHECKINS, columns=(2, 3), coordinates="latlon")
    grid = LocationGrid.from_checkins(table, 0.75, bounds=bounds)
    counts, centres = bin_checkins(table.points, bounds, 0.75)
    assert grid.counts.shape == counts.shape
    assert np.array_equal(grid.counts, counts)
    centre_of_plane = grid.projection.to_plane([[48.86, 2.3525]])[0]
    assert np.allclose(centre_of_plane, [0, 0], atol=1e-9)
    assert np.allclose(grid.points, centres, atol=1e-9)


def test_projection_round_trip_and_great_circle_agreement():
    projection = LocalProjection(48.86, 2.35)
    places = np.array([[48.84, 2.30], [48.88, 2.40]])
    assert np.allclose(projection.to_latlon(projection.to_plane(places)), places)
    plane = np.linalg.norm(np.diff(projection.to_plane(places), axis=0))
    arc = po.Metric.from_points(places, "haversine").matrix[0, 1]
    assert abs(plane / arc - 1) < 1e-3


def test_checkins_outside_the_bounds_and_planar_checkins():
    points = [[0.1, 0.1], [1.9, 0.2], [5.0, 5.0]]
    with pytest.raises(po.InputError) as info:
        LocationGrid.from_checkins(points, 1.0, bounds=(0, 0, 2, 2))
    assert info.value.code == "outside_bounds" and info.value.field == "checkins[2]"
    grid = LocationGrid.from_checkins(points, 1.0)
    assert (grid.rows, grid.cols) == (5, 5) and grid.counts.sum() == 3
    assert grid.counts[4, 4] == 1  # the far corner lands in the last cell
    with pytest.raises(po.InputError) as info:
        LocationGrid.from_checkins(points, 1e-6)
    assert info.value.field == "checkins.cell_size"


def test_places_as_secrets_from_latitude_longitude():
    places = LocationPoints(
        [[48.85, 2.35], [48.86, 2.36], [48.87, 2.33]], [1, 2, 1], coordinates="latlon"
    )
    assert places.metric().kind == "haversine"
    assert places.distortion().matrix.shape == (3, 3)
    result = po.design(
        places.prior(), places.distortion(), "metric_dp", epsilon=2.0, metric=places.metric()
    )
    assert result.status == "optimal"
    with pytest.raises(po.InputError) as info:
        LocationPoints([[48.85, 2.35], [100, 2.36]], coordinates="latlon")
    assert info.value.code == "latitude_range" and info.value.field == "points[1]"
    with pytest.raises(po.InputError) as info:
        LocationPoints([[48.85, 2.35], [48, 200]], coordinates="latlon")
    assert info.value.code == "longitude_range"


# --- graphs given by edges -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("edges", "field", "code"),
    [
        ([[0, 1], [1, 1]], "privacy.metric.edges[1]", "self_loop"),
        ([[0, 1], [1, 2, -1.0]], "privacy.metric.edges[1]", "bad_edge_weight"),
        ([[0, 1], [1, 2, float("nan")]], "privacy.metric.edges[1]", "bad_edge_weight"),
        ([[0, 1], [1, 2, 0.0]], "privacy.metric.edges[1]", "bad_edge_weight"),
        ([[0, 1], [1, 2, float("inf")]], "privacy.metric.edges[1]", "bad_edge_weight"),
        ([[0, 1], [1, 3]], "privacy.metric.edges[1]", "index_out_of_range"),
        ([[0, 1]], "privacy.metric.edges", "disconnected_graph"),
    ],
)
def test_bad_graphs_are_named_input_errors(edges, field, code):
    with pytest.raises(po.InputError) as info:
        po.design([0.3, 0.3, 0.4], "hamming", "metric_dp", epsilon=1.0, metric={"edges": edges})
    assert info.value.field == field
    assert info.value.code == code


def test_metric_from_graph_directly_and_disconnected_on_request():
    with pytest.raises(po.InputError) as info:
        po.Metric.from_graph(3, [[0, 1]])
    assert info.value.code == "disconnected_graph"
    metric = po.Metric.from_graph(3, [[0, 1]], allow_disconnected=True)
    assert np.isinf(metric.matrix[0, 2])
    with pytest.raises(po.InputError) as info:
        po.design(
            [0.5, 0.5],
            "hamming",
            "metric_dp",
            epsilon=1.0,
            metric={"edges": [[0, 1]], "allow_disconnected": "yes"},
        )
    assert info.value.field == "privacy.metric.allow_disconnected"


def test_manhattan_grid_metric_is_the_grid_graph():
    grid = LocationGrid(3, 4, cell_size=2.0)
    graph = grid.metric("manhattan")
    points = po.Metric.from_points(grid.points, "manhattan")
    assert np.allclose(graph.matrix, points.matrix, rtol=1e-15, atol=0)
    assert graph.pairs.n_pairs == 2 * (3 * 3 + 2 * 4)  # the grid's edges, both orders


# --- problem files and the command line ----------------------------------------------------
GRID_FILE = """
title = "map"
source = "test"
[prior.grid]
rows = 4
cols = 4
counts = [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6], [4, 5, 6, 7]]
{outputs}
[distortion]
kind = "metric"
[privacy]
notion = "metric_dp"
epsilon = 0.8
"""


def test_problem_file_output_grid_matches_the_python_api(tmp_path):
    path = write(
        tmp_path,
        "g.toml",
        GRID_FILE.format(outputs="[prior.grid.outputs]\nrows = 2\ncols = 2\ncell_size = 2"),
    )
    spec = load_problem(path)
    grid = LocationGrid(4, 4, counts=spec.grid.counts, outputs=OutputGrid(2, 2, 2.0))
    assert spec.location is spec.grid
    assert np.allclose(spec.distortion.matrix, grid.distortion().matrix)
    assert spec.distortion.output_labels == tuple(grid.output_labels)
    assert spec.options["metric"].size == 16
    want = po.design(
        grid.prior(), grid.distortion(), "metric_dp", epsilon=0.8, metric=grid.metric()
    )
    assert spec.solve().distortion == pytest.approx(want.distortion, abs=1e-9)
    covering = write(
        tmp_path, "c.toml", GRID_FILE.format(outputs="[prior.grid.outputs]\ncell_size = 3")
    )
    assert load_problem(covering).location.n_outputs == 4  # 2 × 2 cells of 3 cover 4 × 4
    points = write(
        tmp_path,
        "p.toml",
        GRID_FILE.format(outputs="[prior.grid.outputs]\npoints = [[1, 1], [3, 3]]"),
    )
    assert load_problem(points).distortion.shape == (16, 2)


@pytest.mark.parametrize(
    ("outputs", "field", "code"),
    [
        (
            "[prior.grid.outputs]\nrows = 1\ncols = 1\ncell_size = 2",
            "prior.grid.outputs",
            "outputs_do_not_cover",
        ),
        ("[prior.grid.outputs]\nrows = 2\ncols = 2", "prior.grid.outputs.cell_size", None),
        ("[prior.grid.outputs]\ncell_size = 2\npoints = [[0, 0]]", "prior.grid.outputs", None),
        (
            "[prior.grid.outputs]\npoints = [[0, 0], [0, 0]]",
            "prior.grid.outputs.points[1]",
            "duplicate_point",
        ),
        ("[prior.grid.outputs]\ncell_size = 2\nshape = 3", "prior.grid.outputs.shape", None),
    ],
)
def test_bad_outputs_in_a_file_exit_2_naming_the_key(tmp_path, capsys, outputs, field, code):
    path = write(tmp_path, "bad.toml", GRID_FILE.format(outputs=outputs))
    with pytest.raises(po.InputError) as info:
        load_problem(path)
    assert info.value.field == field and info.value.code == code
    status, out, err = cli(capsys, "solve", path, "--json")
    assert status == 2
    payload = json.loads(out)
    assert payload["error"] == "input" and payload["field"] == field and payload["code"] == code


MAP_FILE = """
title = "map"
source = "test"
[prior.grid]
{grid}
[distortion]
kind = "metric"
[privacy]
notion = "metric_dp"
epsilon = 1.0
"""


@pytest.mark.parametrize(
    ("csv", "field", "code"),
    [
        (
            "lat,lon\n48.85,2.35\n48.86,\n",
            "prior.grid.checkins_file[line 3].longitude",
            "missing_value",
        ),
        (
            "lat,lon\n48.85,2.35\n48.86,abc\n",
            "prior.grid.checkins_file[line 3].longitude",
            "not_a_number",
        ),
        ("lat,lon\n148.85,2.35\n", "prior.grid.checkins_file[line 2].latitude", "latitude_range"),
        (
            "lat,lon\n48.85,192.35\n",
            "prior.grid.checkins_file[line 2].longitude",
            "longitude_range",
        ),
        ("48.85,2.35\n", "prior.grid.coordinates", None),
    ],
)
def test_bad_checkins_exit_2_with_field_and_code(tmp_path, capsys, csv, field, code):
    write(tmp_path, "c.csv", csv)
    grid = 'checkins_file = "c.csv"\ncell_size = 1.0'
    path = write(tmp_path, "p.toml", MAP_FILE.format(grid=grid))
    status, out, err = cli(capsys, "solve", path, "--json")
    assert status == 2
    payload = json.loads(out)
    assert (payload["field"], payload["code"]) == (field, code)
    assert str(path) in err


@pytest.mark.parametrize(
    ("grid", "field", "code"),
    [
        (
            'checkins_file = "absent.csv"\ncell_size = 1.0',
            "prior.grid.checkins_file",
            "missing_file",
        ),
        ('checkins_file = "c.csv"\ncell_size = -1.0', "prior.grid.cell_size", "not_positive"),
        ('checkins_file = "c.csv"\ncell_size = 0', "prior.grid.cell_size", "not_positive"),
        ('checkins_file = "c.csv"\ncell_size = nan', "prior.grid.cell_size", "not_a_number"),
        ('checkins_file = "c.csv"\ncell_size = inf', "prior.grid.cell_size", "not_a_number"),
        (
            'checkins_file = "c.csv"\ncell_size = 1.0\nbounds = [2, 0, 0, 2]',
            "prior.grid.bounds",
            "inverted_bounds",
        ),
        (
            'checkins_file = "zero.csv"\ncell_size = 1.0',
            "prior.grid.checkins_file",
            "zero_total_weight",
        ),
        (
            "rows = 1\ncols = 2\ncounts = [[0, 0]]",
            "prior.grid.counts",
            "zero_total_weight",
        ),
        ("rows = 1\ncols = 2\ncell_size = -2", "prior.grid.cell_size", "not_positive"),
        (
            'rows = 1\ncols = 2\ncounts_file = "absent.csv"',
            "prior.grid.counts_file",
            "missing_file",
        ),
        (
            'checkins_file = "c.csv"\ncell_size = 1.0\n[prior.grid.outputs]\ncell_size = -1',
            "prior.grid.outputs.cell_size",
            "not_positive",
        ),
    ],
)
def test_bad_map_keys_exit_2_with_field_and_code(tmp_path, capsys, grid, field, code):
    write(tmp_path, "c.csv", "x,y\n0.5,0.5\n1.5,0.5\n")
    write(tmp_path, "zero.csv", "x,y,weight\n0.5,0.5,0\n1.5,0.5,0\n")
    path = write(tmp_path, "p.toml", MAP_FILE.format(grid=grid))
    with pytest.raises(po.InputError) as info:
        load_problem(path)
    assert (info.value.field, info.value.code) == (field, code)
    status, out, err = cli(capsys, "solve", path, "--json")
    assert status == 2
    payload = json.loads(out)
    assert (payload["field"], payload["code"]) == (field, code)


def test_disconnected_graph_in_a_file_exits_2(tmp_path, capsys):
    text = (
        'title = "g"\nsource = "t"\n[prior]\nprobs = [0.25, 0.25, 0.25, 0.25]\n'
        '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "metric_dp"\nepsilon = 0.5\n'
        "metric = {{ edges = [[0, 1], [2, 3]]{extra} }}\n"
    )
    status, out, _ = cli(
        capsys, "solve", write(tmp_path, "a.toml", text.format(extra="")), "--json"
    )
    assert status == 2 and json.loads(out)["code"] == "disconnected_graph"
    allowed = write(tmp_path, "b.toml", text.format(extra=", allow_disconnected = true"))
    status, _, _ = cli(capsys, "solve", allowed, "--json")
    assert status == 0


def test_places_file_solves_and_prints_the_comparison(tmp_path, capsys):
    write(
        tmp_path,
        "venues.csv",
        "name,lat,lon,visits\na,48.850,2.350,5\nb,48.856,2.356,3\nc,48.862,2.344,2\nd,48.845,2.360,1\n",
    )
    path = write(
        tmp_path,
        "v.toml",
        'title = "venues"\nsource = "t"\n[prior.points]\nfile = "venues.csv"\n'
        '[distortion]\nkind = "metric"\n[privacy]\nnotion = "metric_dp"\nepsilon = 2.0\n',
    )
    spec = load_problem(path)
    assert spec.location.labels == ["a", "b", "c", "d"]
    assert spec.options["metric"].kind == "haversine"
    status, out, err = cli(capsys, "solve", path, "--json")
    assert status == 0, err
    data = json.loads(out)
    names = [row["mechanism"] for row in data["laplace_comparison"]["mechanisms"]]
    assert names == ["optimal", "planar Laplace", "planar Laplace + optimal remap"]
    for row in data["laplace_comparison"]["mechanisms"]:
        assert row["metric_level"] <= 2.0 * (1 + 1e-7)


def test_with_a_spanner_the_cli_compares_at_the_guaranteed_level(tmp_path, capsys):
    """spanner = 1.1 at ε = 0.5: the design is guaranteed 0.55 on every pair, so the Laplace
    baseline is calibrated to 0.55 (JSON), and the report's level lines give the level on the
    spanner's edges, the guaranteed 0.55 and the measured level on every pair."""
    import re

    path = write(
        tmp_path,
        "s.toml",
        'title = "spanner"\n[prior.grid]\nrows = 5\ncols = 5\ncell_size = 1\n'
        "counts = [[1,2,3,4,5],[2,6,9,7,3],[3,9,20,14,5],[2,7,12,10,4],[1,3,5,4,2]]\n"
        '[distortion]\nkind = "metric"\n'
        '[privacy]\nnotion = "metric_dp"\nepsilon = 0.5\nspanner = 1.1\n',
    )
    status, out, err = cli(capsys, "solve", path, "--json")
    assert status == 0, err
    data = json.loads(out)
    comparison = data["laplace_comparison"]
    assert comparison["epsilon"] == 0.5
    assert comparison["spanner_stretch"] == 1.1
    assert comparison["guaranteed_level"] == pytest.approx(0.55)
    assert comparison["laplace_epsilon"] == pytest.approx(0.55)
    for row in comparison["mechanisms"]:
        assert row["metric_level"] <= 0.55 * (1 + 1e-7)
    measured = data["notes"]["metric_level"]
    status, out, err = cli(capsys, "solve", path)
    assert status == 0, err
    level = [line for line in out.splitlines() if line.startswith("level")]
    assert len(level) == 1
    at = out.splitlines().index(level[0])
    numbers = [float(x) for x in re.findall(r"\d+\.\d+", out.splitlines()[at + 1])]
    assert numbers[0] == pytest.approx(0.55)  # the guarantee on every pair
    assert numbers[-1] == pytest.approx(measured, rel=1e-8)  # and the level measured there


def test_the_laplace_comparison_is_left_out_beyond_the_time_limit(tmp_path, capsys, monkeypatch):
    """The comparison is an extra beside the answer: a run stopped by its limit (block-ipm
    stopped after a few iterations, with its best feasible mechanism) does not spend more
    time on it (a 20 × 20 map took 3 s more)."""
    from tests.methods.test_block_ipm import stop_block_ipm_after

    stop_block_ipm_after(monkeypatch, iterations=6)
    path = ROOT / "problems" / "location_checkins.toml"
    status, out, err = cli(
        capsys, "solve", path, "--json", "--solver", "block-ipm", "--time-limit", "600"
    )
    data = json.loads(out)
    assert status == 3 and data["status"] == "time_limit", err
    assert data["mechanism"] is not None  # an answer, so a comparison could have been made
    assert set(data["laplace_comparison"]) == {"skipped"}


def test_library_location_file_human_report_plot_and_cell(tmp_path, capsys):
    path = ROOT / "problems" / "location_checkins.toml"
    figure = tmp_path / "map.png"
    status, out, err = cli(capsys, "solve", path, "--plot", figure, "--cell", "3,4")
    assert status == 0, err
    assert "planar Laplace + optimal remap" in out
    assert figure.read_bytes()[:8] == PNG
    status, _, _ = cli(
        capsys, "solve", path, "--plot", tmp_path / "x.png", "--cell", "99,99", "--json"
    )
    assert status == 2 and not (tmp_path / "x.png").exists()
    status, out, _ = cli(capsys, "solve", path, "--cell", "3,4", "--json")
    assert status == 2 and json.loads(out)["field"] == "--cell"


def test_plot_of_a_non_map_problem_is_the_mechanism_matrix(tmp_path, capsys):
    figure = tmp_path / "m.png"
    status, _, err = cli(capsys, "solve", ROOT / "problems" / "wang_m3_dp.toml", "--plot", figure)
    assert status == 0, err
    assert figure.read_bytes()[:8] == PNG
    status, out, _ = cli(
        capsys,
        "solve",
        ROOT / "problems" / "wang_m3_dp.toml",
        "--plot",
        figure,
        "--cell",
        "0",
        "--json",
    )
    assert status == 2 and json.loads(out)["field"] == "--cell"


# --- sweeps --------------------------------------------------------------------------------
def test_sweep_over_epsilon_on_a_map_with_output_grid(tmp_path, capsys):
    grid = LocationGrid(5, 5, counts=np.arange(1, 26).reshape(5, 5), outputs=OutputGrid(3, 3, 2))
    levels = [0.3, 0.6, 1.2]
    curve = po.sweep(
        grid.prior(), grid.distortion(), "metric_dp", epsilons=levels, metric=grid.metric()
    )
    values = [r["distortion"] for r in curve.records]
    assert [r["status"] for r in curve.records] == ["optimal"] * 3
    assert values[0] >= values[1] >= values[2]
    for eps, value in zip(levels, values, strict=True):
        want, _ = all_pairs_metric_lp(
            grid.prior().probs, distances(grid.points, grid.points), grid.distortion().matrix, eps
        )
        assert value == pytest.approx(want, rel=1e-6)
    path = ROOT / "problems" / "location_checkins.toml"
    status, out, err = cli(capsys, "curve", path, "--epsilon", "0.5:1.5:3", "--json")
    assert status == 0, err
    assert [r["status"] for r in json.loads(out)] == ["optimal"] * 3


# --- figures -------------------------------------------------------------------------------
def test_location_panels_draw_the_right_values():
    grid = LocationGrid(4, 4, counts=np.arange(1, 17).reshape(4, 4), outputs=OutputGrid(2, 2, 2))
    result = po.design(
        grid.prior(), grid.distortion(), "metric_dp", epsilon=1.0, metric=grid.metric()
    )
    W = result.mechanism.matrix
    fig = plot_location(grid, result, cell="1,2", panels=["prior", "output", "release", "loss"])
    images = [a.images[0].get_array() for a in fig.axes if a.images]
    assert len(images) == 4
    assert np.allclose(images[0], grid.as_map(grid.prior().probs))
    assert np.allclose(images[1], (grid.prior().probs @ W).reshape(2, 2))
    assert np.allclose(images[2], W[6].reshape(2, 2))
    assert np.allclose(images[3], grid.as_map((W * grid.distortion().matrix).sum(axis=1)))
    title = fig.get_suptitle()  # ε and E[d] stated
    assert f"{result.epsilon:.4g}" in title and f"{result.distortion:.4g}" in title
    labels = [a.get_ylabel() for a in fig.axes if not a.images and a.get_ylabel()]
    assert len(labels) == 4  # every colour bar is labelled
    with pytest.raises(po.InputError) as info:
        plot_location(grid, result, panels=["release"])
    assert info.value.field == "cell"
    with pytest.raises(po.InputError) as info:
        plot_location(grid, panels=["loss"])
    assert info.value.field == "panels"
    places = LocationPoints([[0, 0], [1, 0], [0, 1]], outputs=[[0.5, 0.5], [2, 2]])
    w = po.planar_laplace(places, 1.0)
    fig = plot_location(places, w, cell="0", panels=["prior", "release"])
    panels = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    assert len(panels) == 2 and all(a.collections and not a.images for a in panels)


def test_mechanism_heatmap():
    result = po.design([0.5, 0.3, 0.2], "hamming", "dp", epsilon=1.0)
    fig = plot_mechanism(result)
    assert np.allclose(fig.axes[0].images[0].get_array(), result.mechanism.matrix)
    with pytest.raises(po.InputError):
        plot_mechanism(None)


def test_the_docs_figure_script_draws(tmp_path):
    """docs/_scripts/location_figure.py (the figure of docs/location.md) still runs."""
    import importlib.util

    script = ROOT / "docs" / "_scripts" / "location_figure.py"
    spec = importlib.util.spec_from_file_location("location_figure", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.draw(tmp_path / "figure.png", levels=(0.6, 1.2))
    assert out.read_bytes()[:8] == PNG


def test_plot_of_an_infeasible_answer_writes_nothing(tmp_path, capsys):
    text = GRID_FILE.format(outputs="").replace("epsilon = 0.8", "max_distortion = 0.0")
    figure = tmp_path / "none.png"
    status, _, _ = cli(capsys, "solve", write(tmp_path, "i.toml", text), "--plot", figure)
    assert status == 1
    assert not figure.exists()
