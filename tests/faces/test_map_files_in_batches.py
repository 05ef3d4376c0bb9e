"""Every file a problem file names travels with it: the files of a map (``[prior.grid]
checkins_file``, ``[prior.points] file``, an ``outputs`` table's ``points_file``) are read
once by a batch, key the problem by their content and reach the worker as content, as the
other CSV files of the format do (``[prior] file``, ``counts_file``, metric and neighbour
files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from privopt.errors import InputError
from privopt.io import batch_files
from privopt.io.batch_files import problem_key, read_results, run_batch, solve_problem_data
from privopt.io.files import (
    FILE_KEYS,
    VALID_KEYS,
    load_problem,
    parse_problem,
    read_referenced_files,
    read_toml,
    referenced_files,
)

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "problems"

#: Check-ins in the plane binned into cells of 1 (a 3 × 3 map), reported as output points.
CHECKINS_WITH_OUTPUT_POINTS = """title = "check-ins"
[prior.grid]
checkins_file = "checkins.csv"
coordinates   = "xy"
cell_size     = 1.0
[prior.grid.outputs]
points_file = "outputs.csv"
[distortion]
kind = "metric"
[privacy]
notion  = "metric_dp"
epsilon = 1.0
"""

#: Given places as the secrets, reported as output points.
PLACES_WITH_OUTPUT_POINTS = """title = "places"
[prior.points]
file = "places.csv"
[prior.points.outputs]
points_file = "outputs.csv"
[distortion]
kind = "metric"
[privacy]
notion  = "metric_dp"
epsilon = 1.5
"""

CHECKINS = "x,y\n0.2,0.3\n0.4,0.1\n1.5,0.5\n2.5,2.5\n2.7,2.2\n1.2,1.8\n0.5,2.5\n"
PLACES = "label,x,y,weight\nhome,0,0,5\nwork,2,0,3\ngym,0,2,2\nshop,2,2,1\n"
OUTPUTS = "x,y\n0.5,0.5\n1.5,1.5\n2.5,2.5\n"


def write_problem(folder: Path, text: str, **files: str) -> Path:
    """``folder/p.toml`` with ``text``, and each CSV file (``name_csv=content``) beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name.replace("_csv", ".csv")).write_text(content, encoding="utf-8")
    path = folder / "p.toml"
    path.write_text(text, encoding="utf-8")
    return path


MAPS = {
    "checkins": (
        CHECKINS_WITH_OUTPUT_POINTS,
        {"checkins_csv": CHECKINS, "outputs_csv": OUTPUTS},
        ["checkins.csv", "outputs.csv"],
    ),
    "places": (
        PLACES_WITH_OUTPUT_POINTS,
        {"places_csv": PLACES, "outputs_csv": OUTPUTS},
        ["outputs.csv", "places.csv"],
    ),
}


# --- the files a problem names -------------------------------------------------------------
def test_the_library_checkins_problem_names_its_checkins_file():
    data = read_toml(PROBLEMS / "location_checkins.toml")
    assert referenced_files(data) == ["data/synthetic_checkins.tsv"]


@pytest.mark.parametrize("form", sorted(MAPS))
def test_the_files_of_a_map_and_of_its_outputs_are_named(tmp_path, form):
    text, files, names = MAPS[form]
    data = read_toml(write_problem(tmp_path, text, **files))
    assert referenced_files(data) == names


def test_every_file_valued_key_of_the_format_is_a_file_key():
    """A key of a table that names a file (``…file``) is one the walk collects, so that a new
    file key cannot be read from disk behind the batch's back."""
    named = {key for keys in VALID_KEYS.values() for key in keys if key.endswith("file")}
    assert named == {"file", "counts_file", "checkins_file", "points_file"}
    assert named <= set(FILE_KEYS)
    # the inline tables that name files: metric = { file | edges_file }, neighbors = { file }
    assert {"file", "edges_file"} <= set(FILE_KEYS)


def _library_problems() -> list[Path]:
    return sorted(PROBLEMS.glob("*.toml")) + sorted((PROBLEMS / "audit").glob("*.toml"))


@pytest.mark.parametrize("problem", _library_problems(), ids=lambda p: p.name)
def test_a_library_problem_parses_from_its_read_files_alone(tmp_path, problem):
    """With every file other than the problem file gone from disk, the files read with the
    problem give the same problem: nothing the parser needs is read behind the walk."""
    copy = tmp_path / "problems"
    shutil.copytree(PROBLEMS, copy)
    path = copy / problem.relative_to(PROBLEMS)
    before = load_problem(path, "any")
    data = read_toml(path)
    files = read_referenced_files(data, str(path))
    assert all(content.error is None for content in files.values())
    for other in copy.rglob("*"):
        if other.is_file() and other != path:
            other.unlink()
    after = parse_problem(data, str(path), "any", files=files)
    assert np.array_equal(after.prior.input_probs, before.prior.input_probs)
    assert after.prior.input_labels == before.prior.input_labels
    if before.location is not None:
        assert after.location.n_outputs == before.location.n_outputs
    if hasattr(before.neighbors, "left"):
        assert np.array_equal(after.neighbors.left, before.neighbors.left)
        assert np.array_equal(after.neighbors.right, before.neighbors.right)
    if before.distortion is not None:
        assert np.array_equal(after.distortion.matrix, before.distortion.matrix)
    if "metric" in before.options:
        assert np.array_equal(after.options["metric"].matrix, before.options["metric"].matrix)


# --- a batch reads them once and sends their content ----------------------------------------
def _delete_once_read(monkeypatch, folder: Path) -> list[str]:
    """Make the batch's reader delete every CSV file of ``folder`` once it has read them;
    returns the names it read."""
    read: list[str] = []
    real = batch_files.read_referenced_files

    def read_then_delete(data, path, cache=None):
        files = real(data, path, cache)
        read.extend(files)
        for csv_file in folder.glob("*.csv"):
            csv_file.unlink()
        return files

    monkeypatch.setattr(batch_files, "read_referenced_files", read_then_delete)
    return read


@pytest.mark.parametrize("form", sorted(MAPS))
def test_a_batch_solves_a_map_whose_files_are_gone_once_read(tmp_path, monkeypatch, form):
    text, files, names = MAPS[form]
    folder = tmp_path / "maps"
    path = write_problem(folder, text, **files)
    want = load_problem(path).solve()
    read = _delete_once_read(monkeypatch, folder)
    out = tmp_path / "R.csv"
    summary = run_batch([folder], out)
    assert sorted(read) == names
    assert not list(folder.glob("*.csv"))
    assert summary.solved == 1
    (row,) = read_results(out)
    assert row["status"] == "optimal", row["message"]
    assert row["distortion"] == pytest.approx(want.distortion, abs=1e-9)


def test_the_worker_gets_the_checkins_not_their_path(tmp_path):
    """The library's check-ins problem, solved from the content read with it (its data folder
    deleted), as a batch's worker solves it."""
    copy = tmp_path / "problems"
    copy.mkdir()
    shutil.copy(PROBLEMS / "location_checkins.toml", copy)
    shutil.copytree(PROBLEMS / "data", copy / "data")
    path = copy / "location_checkins.toml"
    spec = load_problem(path)
    data = read_toml(path)
    files = read_referenced_files(data, str(path))
    shutil.rmtree(copy / "data")
    row = solve_problem_data(data, str(path), "c" * 20, files=files)
    assert row["status"] == "optimal"
    assert row["distortion"] == pytest.approx(spec.reference["distortion"], abs=1e-6)
    # a name that was not read with the problem is an error, never a read from disk
    row = solve_problem_data(data, str(path), "c" * 20, files={})
    assert row["status"] == "error" and row["error"] == "InputError"


# --- an edit of a map's file is a new problem -------------------------------------------------
@pytest.mark.parametrize(
    ("form", "name", "edited"),
    [
        ("checkins", "checkins.csv", CHECKINS + "2.6,2.4\n"),
        ("checkins", "outputs.csv", OUTPUTS + "0.5,2.5\n"),
        ("places", "places.csv", PLACES.replace("home,0,0,5", "home,0,0,1")),
        ("places", "outputs.csv", "x,y\n0,0\n2,2\n"),
    ],
    ids=["checkins", "checkins-outputs", "places", "places-outputs"],
)
def test_an_edit_of_a_map_file_changes_the_key(tmp_path, form, name, edited):
    text, files, _ = MAPS[form]
    path = write_problem(tmp_path, text, **files)
    data = read_toml(path)
    key = problem_key(data, read_referenced_files(data, str(path)))
    assert key == problem_key(data, read_referenced_files(data, str(path)))  # stable
    (tmp_path / name).write_text(edited, encoding="utf-8")
    assert problem_key(data, read_referenced_files(data, str(path))) != key


def test_a_batch_solves_an_edited_checkins_file_again(tmp_path):
    text, files, _ = MAPS["checkins"]
    folder = tmp_path / "maps"
    path = write_problem(folder, text, **files)
    out = tmp_path / "R.csv"
    first = load_problem(path).solve().distortion
    assert run_batch([folder], out).solved == 1
    (folder / "checkins.csv").write_text(CHECKINS + "2.6,2.4\n2.4,2.6\n", encoding="utf-8")
    second = load_problem(path).solve().distortion
    assert second != pytest.approx(first, abs=1e-6)  # the edit matters to the answer
    assert run_batch([folder], out).solved == 1
    values = sorted(row["distortion"] for row in read_results(out))
    assert values == pytest.approx(sorted([first, second]), abs=1e-9)
    assert run_batch([folder], out).solved == 0  # both contents known: nothing solved


@pytest.mark.parametrize(
    ("name", "code"), [("checkins.csv", "missing_file"), ("places.csv", "missing_file")]
)
def test_a_file_the_batch_could_not_read_keeps_its_code(tmp_path, name, code):
    """A file named by a problem but missing when the batch reads it is reported, when the
    worker parses the problem, with the code a direct read gives (and the key that names it)."""
    text = CHECKINS_WITH_OUTPUT_POINTS if name == "checkins.csv" else PLACES_WITH_OUTPUT_POINTS
    path = tmp_path / "p.toml"
    path.write_text(text)
    (tmp_path / "outputs.csv").write_text(OUTPUTS)
    data = read_toml(str(path))
    files = read_referenced_files(data, str(path))
    assert files[name].error is not None and files[name].code == code
    with pytest.raises(InputError) as direct:
        parse_problem(data, str(path))
    with pytest.raises(InputError) as batched:
        parse_problem(data, str(path), files=files)
    assert batched.value.code == direct.value.code == code
    assert batched.value.field == direct.value.field
