"""Results as data: ``to_frame()`` on mechanisms, results, curves and batches (pandas, imported
only when asked), and the tables notebooks show (``_repr_html_``)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import privopt as po
from privopt.solve.results import RESULT_COLUMNS

pd = pytest.importorskip("pandas")

PMF = [0.5, 0.3, 0.2]


@pytest.fixture(scope="module")
def result():
    return po.design(PMF, "hamming", "pml", epsilon=0.5)


def test_mechanism_frame_is_the_matrix_with_its_labels():
    mech = po.Mechanism([[0.75, 0.25], [0.1, 0.9]], ["no", "yes"], ["said no", "said yes"])
    table = mech.to_frame()
    assert list(table.index) == ["no", "yes"] and list(table.columns) == ["said no", "said yes"]
    assert (table.index.name, table.columns.name) == ("input", "output")
    np.testing.assert_array_equal(table.to_numpy(), mech.matrix)
    tidy = mech.to_frame(tidy=True)
    assert list(tidy.columns) == ["input", "output", "probability"] and len(tidy) == 4
    assert tidy.groupby("input")["probability"].sum().tolist() == pytest.approx([1.0, 1.0])
    assert float(tidy.set_index(["input", "output"]).loc[("yes", "said yes"), "probability"]) == 0.9


def test_result_frame_is_one_row_of_its_attributes(result):
    table = result.to_frame()
    assert len(table) == 1
    assert [c for c in RESULT_COLUMNS if c in table.columns] == list(table.columns)
    row = table.iloc[0]
    assert row["status"] == str(result.status) and bool(row["verified"]) is result.verified
    assert row["epsilon"] == result.epsilon and row["distortion"] == result.distortion
    assert row["method"] == result.solver.name
    assert row["lower_bound"] == result.certificate.lower_bound
    assert bool(row["certified"]) is result.certificate.certified
    assert row["requested_epsilon"] == 0.5 and "requested_max_distortion" not in table.columns
    wide = result.to_frame(leakage=True)
    assert wide.iloc[0]["leakage.pml"] == pytest.approx(result.leakage["pml"])


def test_infeasible_result_row_has_its_least_level():
    prior = po.DatabasePrior(m=2, n=2, row_probs=[0.6, 0.4])
    res = po.design(prior, "hamming", "identifiability", epsilon=0.1, raise_on_infeasible=False)
    row = res.to_frame().iloc[0]
    assert row["status"] == "infeasible"
    assert row["least_achievable"] == pytest.approx(res.least_achievable)
    assert pd.isna(row["distortion"])


def test_solve_many_gives_a_result_list_with_errors_in_place():
    asks = [
        {"prior": [0.5, 0.5], "distortion": "hamming", "notion": n, "epsilon": 1.0}
        for n in ("pml", "ldp", "plm")
    ]
    results = po.solve_many(asks, errors="return")
    assert isinstance(results, po.ResultList) and isinstance(results, list)
    table = results.to_frame()
    assert table["index"].tolist() == [0, 1, 2]
    assert table["status"].tolist()[:2] == ["optimal", "optimal"]
    assert table.loc[2, "status"] == "error" and table.loc[2, "error"] == "InputError"
    assert table.loc[2, "field"] == "privacy.notion"
    assert table.loc[1, "distortion"] == pytest.approx(results[1].distortion)


def test_sweep_notions_frame_holds_every_point():
    curves = po.sweep_notions(PMF, "hamming", ["ldp", "pml"], epsilons=[0.5, 1.0, 2.0])
    table = curves.to_frame()
    assert len(table) == 6 and table["notion"].tolist() == ["ldp"] * 3 + ["pml"] * 3
    assert table["distortion"].tolist() == pytest.approx(
        [r["distortion"] for c in curves for r in c.records]
    )


def test_result_list_refuses_other_items():
    with pytest.raises(po.InputError) as info:
        po.ResultList([1]).to_frame()
    assert info.value.field == "results"


def test_batch_table_as_a_frame(tmp_path):
    from privopt.io.batch_files import BATCH_COLUMNS, read_results_frame, run_batch

    out = tmp_path / "results.csv"
    empty = read_results_frame(out)
    assert list(empty.columns) == list(BATCH_COLUMNS) and len(empty) == 0
    files = ["problems/pml_uniform_ternary.toml", "problems/ldp_randomized_response.toml"]
    root = po.files.__file__.rsplit("/privopt/", 1)[0]
    run_batch([f"{root}/{f}" for f in files], out, report=lambda line: None)
    table = read_results_frame(out)
    assert len(table) == 2 and list(table.columns) == list(BATCH_COLUMNS)
    assert set(table["status"]) == {"optimal"}


def test_notebook_display_escapes_and_cuts(result):
    html = result._repr_html_()
    assert html.startswith("<table") and "optimal" in html
    mech = po.Mechanism(np.eye(2), ["<b>", "&"], ["x", "y"])
    shown = mech._repr_html_()
    assert "&lt;b&gt;" in shown and "<b>" not in shown and "&amp;" in shown
    big = po.Mechanism(np.full((40, 40), 1 / 40))
    assert big._repr_html_().count("<tr>") == 1 + 16  # header and the first 16 rows
    curve = po.sweep(PMF, "hamming", "pml", epsilons=np.linspace(0.1, 3, 40))
    assert curve._repr_html_().count("<tr>") == 1 + 30


def test_import_privopt_does_not_import_pandas():
    code = (
        "import sys, privopt as po; po.Mechanism; po.DesignResult; po.ResultList; "
        "print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
