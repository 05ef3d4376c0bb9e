"""Numbers read from files and JSON at their edges: huge counts, Python-only digit
separators, ``inf`` metric entries and JSON nested too deeply (no overflow, no misreading,
no numpy warning on stderr, no raw ``RecursionError``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import privopt as po
from privopt import InputError
from privopt.cli import main
from privopt.io.files import csv_number, load_mechanism, load_problem
from privopt.model.location import LocationGrid

PROBLEM = """
[prior]
file = "prior.csv"
counts = {counts}
[distortion]
kind = "hamming"
[privacy]
notion = "ldp"
epsilon = 1.0
"""


def write_problem(tmp_path, rows: str, counts: bool = True):
    (tmp_path / "prior.csv").write_text(rows)
    path = tmp_path / "p.toml"
    path.write_text(PROBLEM.format(counts=str(counts).lower()))
    return path


def test_huge_counts_are_normalised_without_overflow(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in the sum would warn
        spec = load_problem(write_problem(tmp_path, "a,1e308\nb,1e308\n"))
    np.testing.assert_array_equal(spec.prior.probs, [0.5, 0.5])


def test_huge_and_tiny_counts_keep_their_ratio(tmp_path):
    spec = load_problem(write_problem(tmp_path, "a,1.5e308\nb,5e307\n"))
    np.testing.assert_allclose(spec.prior.probs, [0.75, 0.25], rtol=1e-15)


def test_grid_counts_of_1e308_are_normalised_without_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prior = LocationGrid(1, 2, counts=[[1e308, 1e308]]).prior()
    np.testing.assert_array_equal(prior.probs, [0.5, 0.5])


@pytest.mark.parametrize("text", ["0_5", "1_000", "1e1_0", "_1"])
def test_a_digit_separator_is_not_a_number_in_a_csv_file(text):
    with pytest.raises(ValueError):
        csv_number(text)


def test_a_prior_file_with_0_5_is_refused_not_read_as_5(tmp_path):
    path = write_problem(tmp_path, "a,0_5\nb,0.5\n", counts=False)
    with pytest.raises(InputError) as info:
        load_problem(path)
    assert info.value.field == "prior.file"


def test_a_metric_file_with_a_digit_separator_is_refused(tmp_path):
    (tmp_path / "m.csv").write_text("0,1_0\n1_0,0\n")
    path = tmp_path / "p.toml"
    path.write_text(
        '[prior]\nprobs = [0.5, 0.5]\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "metric_dp"\nepsilon = 1.0\nmetric = { file = "m.csv" }\n'
    )
    with pytest.raises(InputError) as info:
        load_problem(path)
    assert info.value.field == "privacy.metric.file"


def test_a_mechanism_csv_with_a_digit_separator_is_refused(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(",a,b\na,0_5,0.5\nb,0.5,0.5\n")
    with pytest.raises(InputError):
        load_mechanism(path)


@pytest.mark.parametrize(
    "matrix",
    [
        "[[0, 1, inf], [1, 0, 1], [inf, 1, 0]]",  # breaks the triangle inequality
        "[[0, 1, inf], [1, 0, inf], [inf, inf, 0]]",  # two unrelated groups: a metric
    ],
)
def test_an_inf_metric_entry_prints_no_numpy_warning(tmp_path, capsys, matrix):
    path = tmp_path / "p.toml"
    path.write_text(
        '[prior]\nprobs = [0.3, 0.3, 0.4]\n[distortion]\nkind = "hamming"\n'
        f'[privacy]\nnotion = "metric_dp"\nepsilon = 1.0\nmetric = {{ matrix = {matrix} }}\n'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code = main(["solve", str(path), "--json"])
    assert code in (0, 2)
    assert "warning" not in capsys.readouterr().err


def test_an_inf_metric_matrix_warns_nothing_through_the_api():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(InputError):
            po.model.Metric.from_matrix([[0, 1, np.inf], [1, 0, 1], [np.inf, 1, 0]])
        po.model.Metric.from_matrix([[0, 1, np.inf], [1, 0, np.inf], [np.inf, np.inf, 0]])


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deeply_nested_mechanism_json_is_an_input_error(depth):
    text = "[" * depth + "]" * depth
    with pytest.raises(InputError) as info:
        po.Mechanism.from_json(text)
    assert info.value.field == "mechanism"


def test_deeply_nested_mechanism_object_is_an_input_error():
    depth = 100_000
    text = '{"mechanism": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(InputError) as info:
        po.Mechanism.from_json(text)
    assert info.value.field == "mechanism"
