"""Rough edges a new user hits: levels in bits everywhere (``unit="bits"``, ``--unit bits``),
``privopt solvers`` saying which notions each method solves, ``py.typed`` shipped, a missing
notion listing the registered ones, and ``sweep_notions``."""

from __future__ import annotations

import json
import math
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

import privopt as po
from privopt.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
LN2 = math.log(2.0)


# --- bits ---------------------------------------------
@pytest.mark.parametrize("bits", [0.5, 1.0, 2.5])
def test_design_in_bits_is_randomised_response_at_2_to_the_level(bits):
    # binary randomised response is LDP-optimal on a uniform bit: D* = 1/(e^ε + 1) with ε in
    # nats (Kairouz, Oh & Viswanath), so 1/(2^b + 1) for a level of b bits
    res = po.design([0.5, 0.5], "hamming", "ldp", epsilon=bits, unit="bits")
    assert res.unit == "bits" and res.requested == {"epsilon": bits}
    assert res.distortion == pytest.approx(1 / (2**bits + 1), abs=1e-9)
    assert res.epsilon == pytest.approx(bits, abs=1e-9)
    nats = po.design([0.5, 0.5], "hamming", "ldp", epsilon=bits * LN2)
    assert res.distortion == pytest.approx(nats.distortion, abs=1e-12)
    for name, value in nats.leakage.items():
        assert res.leakage[name] == pytest.approx(value / LN2, rel=1e-12), name
    # measured independently by the measures' own unit argument
    assert res.leakage["pml"] == pytest.approx(
        po.measures.pml_level(po.Prior([0.5, 0.5]), res.mechanism.matrix, unit="bits"), rel=1e-12
    )
    out = res.to_dict()
    assert out["unit"] == "bits" and out["requested"]["epsilon"] == bits
    assert "unit" not in nats.to_dict()
    back = pickle.loads(pickle.dumps(res))
    assert back.unit == "bits" and back.leakage["ldp"] == pytest.approx(res.leakage["ldp"])


def test_budget_sweep_and_infeasible_in_bits():
    res = po.design([0.5, 0.5], "hamming", "ldp", max_distortion=1 / 3, unit="bits")
    assert res.epsilon == pytest.approx(1.0, abs=1e-6)  # 1/(2^1 + 1) = 1/3
    curve = po.sweep([0.5, 0.5], "hamming", "ldp", epsilons=[0.5, 1, 3], unit="bits")
    assert curve.unit == "bits"
    assert [r["requested_epsilon"] for r in curve.records] == [0.5, 1, 3]
    np.testing.assert_allclose(curve.column("epsilon"), [0.5, 1, 3], atol=1e-9)
    np.testing.assert_allclose(
        curve.column("distortion"), [1 / (2**b + 1) for b in (0.5, 1, 3)], atol=1e-9
    )
    assert curve.results[1].unit == "bits" and curve.results[1].requested == {"epsilon": 1}
    # identifiability below ε_X = ln 9 (prior .9/.1 on one row): infeasible; the least
    # achievable level is given in bits, log2 9
    prior = po.DatabasePrior(m=2, n=1, row_probs=[0.9, 0.1])
    with pytest.raises(po.InfeasibleError) as info:
        po.design(prior, "hamming", "identifiability", epsilon=1.0, unit="bits")
    assert info.value.least_achievable == pytest.approx(math.log2(9), rel=1e-9)
    assert info.value.quantity == "epsilon" and "bits" in str(info.value)
    res = po.design(
        prior, "hamming", "identifiability", epsilon=1.0, unit="bits", raise_on_infeasible=False
    )
    assert res.least_achievable == pytest.approx(math.log2(9), rel=1e-9)
    # the result's message gives it in bits too (it used to say log 9 in nats, unlabelled)
    assert f"least achievable epsilon in bits: {math.log2(9):.12g}" in res.message
    assert str(info.value) == res.message
    report = po.leakage_report([0.5, 0.5], [[1, 0], [0, 1]], unit="bits")
    assert report["mutual_information"] == pytest.approx(1.0)  # one bit
    assert report["ldp"] == math.inf
    with pytest.raises(po.InputError, match="unit"):
        po.design([0.5, 0.5], "hamming", "ldp", epsilon=1.0, unit="bytes")
    with pytest.raises(po.InputError, match="unit"):
        po.leakage_report([0.5, 0.5], [[1, 0], [0, 1]], unit="dits")


def test_cli_unit_bits(capsys):
    problem = str(ROOT / "problems" / "ldp_randomized_response.toml")  # ε = 1 nat
    assert main(["solve", problem, "--json", "--unit", "bits"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["unit"] == "bits" and out["reference_check"]["ok"]
    assert out["epsilon"] == pytest.approx(1 / LN2, rel=1e-9)
    assert out["requested"]["epsilon"] == pytest.approx(1 / LN2, rel=1e-12)
    assert out["leakage"]["ldp"] == pytest.approx(1 / LN2, rel=1e-9)
    assert main(["solve", problem, "--unit", "bits"]) == 0
    text = capsys.readouterr().out
    assert "ldp = 1.442695040889 bits" in text and "(bits; dp and identifiability" in text
    audit = str(ROOT / "problems" / "audit" / "pml_example5.toml")  # ℓ = (ln 4, ln 4, …)
    assert main(["audit", audit, "--json", "--unit", "bits"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pml_per_output"][:2] == pytest.approx([2.0, 2.0], rel=1e-12)
    assert main(["audit", audit, "--unit", "bits"]) == 0
    assert "PML per output ℓ(X→u) (bits)" in capsys.readouterr().out
    assert main(["solve", problem, "--unit", "dits"]) == 2


def test_cli_audit_sections_in_bits(capsys, tmp_path):
    """Every level of ``audit --unit bits`` is in bits: the information measures (expected
    PML, min-entropy), the tail audits and the ε of the least-δ audit; probabilities, the
    total variation and χ² stay as they are."""
    path = tmp_path / "audit.toml"
    path.write_text(
        "[prior]\nprobs = [0.5, 0.3, 0.2]\n[mechanism]\n"
        "matrix = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]\n"
        '[privacy]\nnotion = "pml"\nepsilon = 1.0\ndelta = 0.1\n'
    )
    assert main(["audit", str(path), "--json"]) == 0
    nats = json.loads(capsys.readouterr().out)
    assert main(["audit", str(path), "--json", "--unit", "bits"]) == 0
    bits = json.loads(capsys.readouterr().out)
    assert bits["information"]["min_entropy"] == pytest.approx(1.0, rel=1e-12)  # -log2 .5
    for section, keys in (
        ("information", ("expected_pml", "min_entropy")),
        ("tail", ("pml_tail", "eml", "approximate_max_information", "probabilistic_dp")),
        ("least_delta", ("epsilon",)),
    ):
        for key in keys:
            assert bits[section][key] == pytest.approx(nats[section][key] / LN2, rel=1e-12)
    for section, key in (("information", "total_variation"), ("least_delta", "pml_tail")):
        assert bits[section][key] == nats[section][key]
    assert main(["audit", str(path), "--unit", "bits"]) == 0
    text = capsys.readouterr().out
    assert "information measures (levels in bits" in text and "at δ = 0.1 (bits)" in text


# --- privopt solvers ---------------------------------------------
def test_solvers_say_which_notions(capsys):
    assert main(["solvers", "--json"]) == 0
    rows = {r["name"]: r["notions"] for r in json.loads(capsys.readouterr().out)}
    assert set(rows["blahut-arimoto"]) == {"mutual_information"}
    # joint priors too: the alternating scheme of [Calmon-Fawaz] Remark 2 (by request)
    assert "joint" in rows["blahut-arimoto"]["mutual_information"]
    assert set(rows["symmetric"]) == {"dp", "identifiability", "mutual_information"}
    assert rows["symmetric"]["dp"] == ["database"]
    assert "mutual_information" not in rows["HIGHS"]  # an LP solver
    assert set(rows["CLARABEL"]) == set(po.notion_names())
    assert main(["solvers"]) == 0
    text = capsys.readouterr().out
    assert "solves: mutual_information (uniform single secret" not in text
    assert "solves: dp, identifiability, mutual_information (database)" in text
    # the table agrees with what a named method does
    db = po.DatabasePrior(m=2, n=2, row_probs=[0.6, 0.4])
    res = po.design(db, "hamming", "dp", epsilon=1.0, solver="symmetric")
    assert res.solver.name == "symmetric" and res.status == "optimal"
    with pytest.raises(po.InputError, match="symmetric"):
        po.design([0.4, 0.6], "hamming", "pml", epsilon=1.0, solver="symmetric")
    joint = po.JointPrior([[0.3, 0.1], [0.2, 0.4]])
    res = po.design(joint, "hamming", "mutual_information", epsilon=0.1, solver="blahut-arimoto")
    assert res.solver.name == "blahut-arimoto" and res.status == "optimal" and res.verified
    with pytest.raises(po.InputError, match="blahut-arimoto"):  # ε = 0 is left to cvxpy
        po.design(joint, "hamming", "mutual_information", epsilon=0.0, solver="blahut-arimoto")


# --- packaging and messages ---------------------------------------------
def test_py_typed_is_shipped():
    assert (ROOT / "privopt" / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["privopt"]
    extras = config["project"]["optional-dependencies"]
    assert any("dask" in e and "docs" in e for e in extras["test"])


def test_a_missing_notion_lists_the_registered_ones(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(
        '[prior]\nprobs = [0.5, 0.5]\n[distortion]\nkind = "hamming"\n[privacy]\nepsilon = 1.0\n',
        encoding="utf-8",
    )
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in po.notion_names())
    with pytest.raises(po.InputError) as info:
        po.design([0.5, 0.5], "hamming", "plm", epsilon=1.0)
    assert all(name in str(info.value) for name in po.notion_names())


# --- several notions at once ---------------------------------------------
def test_sweep_notions_serial_for_one_figure(tmp_path):
    prior = po.DatabasePrior(m=2, n=2, row_probs=[0.5, 0.5])  # uniform: D*_I = D*_DP = h(ε)
    eps = [0.5, 1.0, 2.0]
    curves = po.sweep_notions(
        prior, "hamming", ["dp", "identifiability", "pml"], epsilons=eps, neighbors="hamming"
    )
    assert [c.notion for c in curves] == ["dp", "identifiability", "pml"]
    h = [po.closed_forms.h(e, 2, 2) for e in eps]
    np.testing.assert_allclose(curves[0].column("distortion"), h, atol=1e-8)
    np.testing.assert_allclose(curves[1].column("distortion"), h, atol=1e-8)
    assert all(r["verified"] for c in curves for r in c.records)
    from privopt import plotting

    fig = plotting.plot_curves(curves, prior=prior, distortion="hamming")
    assert len(fig.axes[0].lines) >= 3
    with pytest.raises(po.InputError, match="notions"):
        po.sweep_notions(prior, "hamming", [], epsilons=eps)
    with pytest.raises(po.InputError, match="notions"):
        po.sweep_notions(prior, "hamming", "dp", epsilons=eps)


def test_curve_in_bits(tmp_path, capsys):
    """``privopt curve --unit bits``: the points given in bits, the levels in bits in the
    text, JSON and CSV (as ``po.sweep(..., unit="bits")``)."""
    import csv as csv_module
    import json as json_module
    import math
    from pathlib import Path

    from privopt.cli import main as cli_main

    path = Path(__file__).resolve().parents[2] / "problems" / "pml_uniform_ternary.toml"
    grid = "0:2:3"  # 0, 1, 2 bits = 0, ln 2, ln 4 nats
    assert cli_main(["curve", str(path), "--epsilon", grid, "--unit", "bits", "--json"]) == 0
    records = json_module.loads(capsys.readouterr().out)
    assert [r["unit"] for r in records] == ["bits"] * 3
    assert [r["requested_epsilon"] for r in records] == pytest.approx([0.0, 1.0, 2.0])
    assert records[1]["epsilon"] == pytest.approx(1.0, abs=1e-8)
    assert records[2]["epsilon"] == pytest.approx(math.log2(3), abs=1e-8)  # ε_max = ln 3
    out_csv = tmp_path / "c.csv"
    assert (
        cli_main(["curve", str(path), "--epsilon", grid, "--unit", "bits", "--csv", str(out_csv)])
        == 0
    )
    assert "ε (bits)" in capsys.readouterr().out
    rows = list(csv_module.DictReader(out_csv.open()))
    assert [row["unit"] for row in rows] == ["bits"] * 3
    assert float(rows[1]["epsilon"]) == pytest.approx(1.0, abs=1e-8)
    nats_grid = f"0:{math.log(4)!r}:3"  # without --unit the same points are given in nats
    assert cli_main(["curve", str(path), "--epsilon", nats_grid, "--json"]) == 0
    nats = json_module.loads(capsys.readouterr().out)
    assert "unit" not in nats[1] and nats[1]["epsilon"] == pytest.approx(math.log(2), abs=1e-8)
    assert nats[2]["distortion"] == pytest.approx(records[2]["distortion"], abs=1e-9)


def test_the_package_namespace_is_its_public_names():
    names = dir(po)
    for private in ("TYPE_CHECKING", "annotations", "importlib", "_LAZY"):
        assert private not in names
        assert not hasattr(po, private) or private == "_LAZY"
    assert set(po.__all__) <= set(names) and "__version__" in names
    assert po.Mechanism is po.model.Mechanism  # lazy names still load on first use


def test_small_rough_edges_of_the_api():
    """Notion names in any case; an infeasible result still says what found it; a curve's
    repr is one line; add_constraints refuses what is not a constraint."""
    assert po.design([0.7, 0.2, 0.1], "hamming", "PML", epsilon=0.5).notion == "pml"
    assert po.get_notion("Max-Information-Leakage").name == "max_information_leakage"
    with pytest.raises(po.InputError, match="unknown notion"):
        po.get_notion("PMLX")
    res = po.design(
        [0.7, 0.2, 0.1], "hamming", "identifiability", epsilon=0.5, raise_on_infeasible=False
    )
    assert res.status == "infeasible" and res.solver.name == "least-value check"
    curve = po.sweep([0.7, 0.2, 0.1], "hamming", "pml", epsilons=[0.1, 0.2, 0.3])
    text = repr(curve)
    assert "\n" not in text and "3 points" in text and "3 optimal" in text
    pp = po.build_problem([0.5, 0.5], "hamming", "dp", epsilon=1.0)
    with pytest.raises(po.InputError, match="expected cvxpy constraints"):
        pp.add_constraints("x")
    with pytest.raises(po.InputError):
        pp.add_constraints(True)
