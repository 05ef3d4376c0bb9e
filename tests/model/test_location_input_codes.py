"""Bad input to the location workflow's Python API: every InputError names the argument at
fault (``field``) and says what kind of mistake it is (``code``). Told apart by these two
structured values, never by a message's wording."""

from __future__ import annotations

import numpy as np
import pytest

import privopt as po
from privopt.errors import INPUT_ERROR_CODES
from privopt.model.location import LocationGrid, LocationPoints, OutputGrid

POINTS = [[0.1, 0.1], [1.9, 0.2], [1.0, 1.5]]


def _refusal(build) -> tuple[str | None, str | None]:
    with pytest.raises(po.InputError) as info:
        build()
    return info.value.field, info.value.code


@pytest.mark.parametrize(
    ("build", "field", "code"),
    [
        (lambda: LocationGrid(2, 2, cell_size=-1), "grid.cell_size", "not_positive"),
        (lambda: LocationGrid(2, 2, cell_size=0), "grid.cell_size", "not_positive"),
        (lambda: LocationGrid(2, 2, cell_size=float("nan")), "grid.cell_size", "not_a_number"),
        (lambda: LocationGrid(2, 2, cell_size=float("inf")), "grid.cell_size", "not_a_number"),
        (lambda: LocationGrid(2, 2, cell_size="wide"), "grid.cell_size", "not_a_number"),
        (lambda: LocationGrid(2, 2, cell_size=True), "grid.cell_size", "not_a_number"),
        (lambda: OutputGrid(2, 2, -0.5), "outputs.cell_size", "not_positive"),
        (
            lambda: LocationGrid(1, 2, counts=[[0, 0]]),
            "grid.counts",
            "zero_total_weight",
        ),
        (
            lambda: LocationPoints(POINTS, weights=[0, 0, 0]),
            "points.weights",
            "zero_total_weight",
        ),
        (
            lambda: LocationGrid.from_checkins(POINTS, -1.0),
            "checkins.cell_size",
            "not_positive",
        ),
        (
            lambda: LocationGrid.from_checkins(POINTS, 1.0, bounds=(2, 0, 0, 2)),  # x swapped
            "checkins.bounds",
            "inverted_bounds",
        ),
        (
            lambda: LocationGrid.from_checkins(POINTS, 1.0, bounds=(0, 2, 2, 0)),  # y swapped
            "checkins.bounds",
            "inverted_bounds",
        ),
        (
            lambda: LocationGrid.from_checkins(POINTS, 1.0, bounds=(0, 0, 0, 2)),  # no width
            "checkins.bounds",
            "inverted_bounds",
        ),
    ],
)
def test_bad_maps_name_the_argument_and_the_mistake(build, field, code):
    assert _refusal(build) == (field, code)


def test_checkins_of_zero_total_weight(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("x,y,weight\n0,0,0\n1,1,0\n", encoding="utf-8")
    table = po.read_location_csv(path)  # named by its file, as its rows are
    assert _refusal(lambda: LocationGrid.from_checkins(table, 1.0)) == (
        str(path),
        "zero_total_weight",
    )
    points = np.array([[0.0, 0.0], [1.0, 1.0]])
    named = _refusal(lambda: LocationGrid.from_checkins(points[:0], 1.0, field="visits"))
    assert named[0] == "visits"  # no check-ins at all: the argument is named


# --- files that cannot be read ---------------------------------------------------------------
def test_a_missing_file_is_named_by_its_path_or_the_given_source(tmp_path):
    missing = tmp_path / "nowhere.csv"
    assert _refusal(lambda: po.read_location_csv(missing, coordinates="xy")) == (
        str(missing),
        "missing_file",
    )
    assert _refusal(
        lambda: po.read_location_csv(missing, coordinates="xy", source="checkins_file")
    ) == ("checkins_file", "missing_file")


def test_files_that_cannot_be_read_have_a_code_each(tmp_path, monkeypatch):
    assert _refusal(lambda: po.read_location_csv(tmp_path, coordinates="xy")) == (
        str(tmp_path),
        "not_a_regular_file",
    )
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"x,y\n0,0\n1,\xe9\n")
    assert _refusal(lambda: po.read_location_csv(latin)) == (str(latin), "not_utf8")
    big = tmp_path / "big.csv"
    big.write_text("x,y\n" + "0,0\n" * 100, encoding="utf-8")
    monkeypatch.setenv("PRIVOPT_MAX_FILE_BYTES", "64")
    assert _refusal(lambda: po.read_location_csv(big)) == (str(big), "file_too_large")


def test_the_codes_used_here_are_documented():
    for code in (
        "not_positive",
        "zero_total_weight",
        "inverted_bounds",
        "missing_file",
        "unreadable_file",
        "not_a_regular_file",
        "file_too_large",
        "not_utf8",
        "duplicate_edge",
        "malformed_edge",
        "not_an_index",
    ):
        assert code in INPUT_ERROR_CODES


def test_a_good_map_still_builds():
    grid = LocationGrid.from_checkins(POINTS, 1.0, bounds=(0, 0, 2, 2))
    assert (grid.rows, grid.cols) == (2, 2)
    assert np.isclose(grid.counts.sum(), 3.0)
