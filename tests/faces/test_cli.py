"""The command line, problem files, the problems/ library and figures (GitHub issue "The command
line, problem files, the problems/ library, figures").

Every file of problems/ is run through ``privopt solve --json`` (in-process) and checked against
its own ``[reference]`` table, whose values were computed independently of privopt (closed forms or
dense LPs).
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from privopt import InputError, SolverError
from privopt.cli import DEMO_FIGURE, main
from privopt.io.files import check_reference, load_mechanism, load_problem
from privopt.notions import STANDARD_NOTIONS, notion_names

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))
AUDITS = sorted((ROOT / "problems" / "audit").glob("*.toml"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; never a traceback on stderr."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    assert "Traceback" not in captured.out
    return code, captured.out, captured.err


def run_json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--json")
    return code, json.loads(out), err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- the problems/ library -------------------------------------------------------------------
def test_library_is_complete():
    assert len(PROBLEMS) >= 12
    assert AUDITS, "at least one audit file"
    covered = {load_problem(p).notion for p in PROBLEMS}
    assert set(notion_names()) <= covered, set(notion_names()) - covered
    for path in PROBLEMS + AUDITS:
        spec = load_problem(path, "audit" if path in AUDITS else "solve")
        assert spec.title and spec.source, path
        assert spec.reference.get("what") and "tolerance" in spec.reference, path


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_problem_file_meets_its_reference(path, capsys):
    spec = load_problem(path)
    ref = spec.reference
    tol = ref["tolerance"]
    code, data, err = run_json(capsys, "solve", path)
    if ref.get("status") == "infeasible":
        assert code == 1
        assert data["status"] == "infeasible" and data["mechanism"] is None
        assert abs(data["least_achievable"] - ref["least_achievable"]) <= tol
        assert "infeasible" in err and "least achievable" in err and str(path) in err
        return
    assert code == 0, err
    assert err == ""
    for key in ("status", "notion", "epsilon", "distortion", "mechanism", "inputs", "outputs"):
        assert key in data
    assert {"leakage", "solver", "verified"} <= set(data)
    assert data["status"] in ("optimal", "optimal_inaccurate")
    assert data["verified"] is True
    assert data["notion"] == spec.notion
    assert {"name", "solve_time_s"} <= set(data["solver"])
    assert set(STANDARD_NOTIONS) <= set(data["leakage"])
    w = np.array(data["mechanism"])
    assert w.shape == (len(data["inputs"]), len(data["outputs"]))
    assert w.min() >= 0 and np.allclose(w.sum(axis=1), 1, atol=1e-9)
    assert data["inputs"] == list(spec.prior.input_labels)
    if spec.mode == "epsilon":
        assert data["epsilon"] <= spec.epsilon + 1e-8
        assert abs(data["distortion"] - ref["distortion"]) <= tol
    else:
        assert data["distortion"] <= spec.max_distortion + 1e-6
        assert abs(data["epsilon"] - ref["epsilon"]) <= tol
    for name, value in ref.get("leakage", {}).items():
        assert abs(data["leakage"][name] - value) <= tol, name
    assert data["reference_check"]["ok"], data["reference_check"]
    # the leakage entry of the asked notion is the reported level
    if spec.notion in data["leakage"]:
        assert abs(data["leakage"][spec.notion] - data["epsilon"]) <= 1e-9


@pytest.mark.parametrize("path", AUDITS, ids=[p.stem for p in AUDITS])
def test_audit_file_meets_its_reference(path, capsys):
    spec = load_problem(path, "audit")
    code, data, err = run_json(capsys, "audit", path)
    assert code == 0, err
    assert {"leakage", "distortion", "pml_per_output"} <= set(data)
    assert set(STANDARD_NOTIONS) <= set(data["leakage"])
    tol = spec.reference["tolerance"]
    expected = spec.reference["pml_per_output"]
    assert np.allclose(data["pml_per_output"], expected, rtol=0, atol=tol)
    for name, value in spec.reference.get("leakage", {}).items():
        assert abs(data["leakage"][name] - value) <= tol, name
    if "distortion" in spec.reference:
        assert abs(data["distortion"] - spec.reference["distortion"]) <= tol
    else:
        assert data["distortion"] is None or spec.distortion is not None
    assert data["reference_check"]["ok"]


def test_audit_human_output(capsys):
    code, out, _ = run(capsys, "audit", ROOT / "problems" / "audit" / "pml_example5.toml")
    assert code == 0
    assert "PML per output" in out and "maximal_leakage" in out and "OK" in out


# --- solve: human output, --out, defaults ----------------------------------------------------
def test_solve_human_output(capsys):
    path = ROOT / "problems" / "hiding_a_feature.toml"
    code, out, err = run(capsys, "solve", path)
    assert code == 0 and err == ""
    for text in ("optimal mechanism", "healthy,young", "ill,old", "leakage", "verified: yes"):
        assert text in out
    assert "pml" in out and "distortion" in out and "OK" in out


def test_solve_human_output_of_a_time_limited_answer(tmp_path, capsys, monkeypatch):
    """A run stopped by the time limit prints the best feasible mechanism found, not called
    optimal, with its certificate's gap and the time-limit exit code."""
    from tests.methods.test_block_ipm import TIME_LIMITED_PRIOR, stop_block_ipm_after

    stop_block_ipm_after(monkeypatch)
    probs = TIME_LIMITED_PRIOR.probs
    path = tmp_path / "limited.toml"
    path.write_text(
        "[prior.database]\nm = 2\nn = 5\nprobs = ["
        + ", ".join(repr(float(x)) for x in probs)
        + ']\n\n[distortion]\nkind = "hamming"\n\n[privacy]\nnotion = "dp"\nepsilon = 1.0\n'
        + '\n[solver]\nname = "block-ipm"\ntime_limit = 600\n'
    )
    code, out, err = run(capsys, "solve", path)
    assert code == 3  # the time-limit exit code, with the note on stderr
    assert err.strip().endswith("reached (the mechanism is the best feasible one found)")
    assert "status      time_limit, verified: yes" in out
    assert "(the mechanism is the best feasible one found)" in out
    assert "mechanism (not certified optimal) p(u|y)" in out and "optimal mechanism" not in out
    assert "relative gap" in out


@pytest.mark.parametrize("ext", [".json", ".csv", ".npz"])
def test_solve_out_writes_a_mechanism_that_loads_back(tmp_path, capsys, ext):
    path = ROOT / "problems" / "wang_m3_dp.toml"
    target = tmp_path / f"mech{ext}"
    code, data, _ = run_json(capsys, "solve", path, "--out", target)
    assert code == 0 and target.exists()
    mech = load_mechanism(target)
    assert np.array_equal(mech.matrix, np.array(data["mechanism"]))
    assert list(mech.input_labels) == data["inputs"]
    assert list(mech.output_labels) == data["outputs"]
    if ext == ".npz":
        with np.load(target, allow_pickle=False) as npz:
            assert npz["mechanism"].shape == (9, 9)
    if ext == ".json":
        assert json.loads(target.read_text())["mechanism"] == data["mechanism"]
    # the written mechanism audits to the same leakage
    code, audit, _ = run_json(capsys, "audit", path, "--mechanism", target)
    assert code == 0
    for name in ("dp", "pml", "mutual_information"):
        assert audit["leakage"][name] == pytest.approx(data["leakage"][name], abs=1e-12)
    assert audit["distortion"] == pytest.approx(data["distortion"], abs=1e-12)


def test_outputs_only_where_asked(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "solve", ROOT / "problems" / "maximal_leakage.toml")
    assert code == 0
    code, _, _ = run(
        capsys, "curve", ROOT / "problems" / "maximal_leakage.toml", "--epsilon", "0:1:3"
    )
    assert code == 0
    assert list(tmp_path.iterdir()) == []


def test_solve_unknown_out_extension(tmp_path, capsys):
    path = ROOT / "problems" / "maximal_leakage.toml"
    code, out, err = run(capsys, "solve", path, "--out", tmp_path / "m.xlsx")
    assert code == 2 and "--out" in err and ".xlsx" in err
    assert list(tmp_path.iterdir()) == []


def test_solver_override(capsys):
    path = ROOT / "problems" / "information_privacy.toml"
    code, data, _ = run_json(capsys, "solve", path, "--solver", "CLARABEL")
    assert code == 0 and data["solver"]["name"] == "CLARABEL"
    assert data["distortion"] == pytest.approx(0.375, abs=1e-7)
    code, out, err = run(capsys, "solve", path, "--solver", "NOSUCHSOLVER")
    assert code == 2 and "solver" in err and "NOSUCHSOLVER" in err


def test_solve_without_file_is_the_demo_problem(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, data, _ = run_json(capsys, "solve")
    assert code == 0
    assert data["notion"] == "identifiability"
    # h(1) with m = n = 2 (Wang et al. eq. 36)
    assert data["distortion"] == pytest.approx(2 / (1 + math.e), abs=1e-9)
    assert list(tmp_path.iterdir()) == []


def test_curve_figure_follows_unit_bits(tmp_path, capsys, monkeypatch):
    """``--unit bits --plot``: the points are given and the figure drawn in bits."""
    import matplotlib

    matplotlib.use("Agg")
    from privopt import plotting

    drawn = []
    real = plotting.plot_curves

    def spy(curves, **kwargs):
        fig = real(curves, **kwargs)
        drawn.append((curves, fig))
        return fig

    monkeypatch.setattr(plotting, "plot_curves", spy)
    path = ROOT / "problems" / "wang_product_dp.toml"
    code, records, _ = run_json(
        capsys,
        "curve",
        path,
        "--epsilon",
        "0.5:2:4",
        "--unit",
        "bits",
        "--plot",
        tmp_path / "c.png",
    )
    assert code == 0 and (tmp_path / "c.png").stat().st_size > 10_000
    ((curves, fig),) = drawn
    assert [c.unit for c in curves] == ["bits"]
    ax = fig.axes[0]
    assert "(bits)" in ax.get_xlabel()
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "curve:dp"]
    bits = np.linspace(0.5, 2, 4)
    np.testing.assert_allclose(line.get_xdata(), bits)
    np.testing.assert_allclose([r["requested_epsilon"] for r in records], bits)
    levels = [r["epsilon"] for r in records]  # each point's level, at most its own
    assert all(lv <= b + 1e-9 for lv, b in zip(levels, bits, strict=True))


def test_demo_writes_its_figure(tmp_path, capsys):
    out_dir = tmp_path / "figs"
    code, out, err = run(capsys, "demo", "--out-dir", out_dir)
    assert code == 0, err
    figure = out_dir / DEMO_FIGURE
    assert figure.read_bytes()[:8] == PNG_MAGIC and figure.stat().st_size > 20_000
    assert "optimal mechanism" in out and "leakage" in out and str(figure) in out


def test_demo_at_its_time_limit_ends_cleanly_with_exit_3(tmp_path, capsys):
    """The solve and every curve point stop at once: no crash on the missing level (the
    figure skips the star), the report says what stopped, and the exit code is 3."""
    code, out, err = run(capsys, "demo", "--time-limit", "1e-6", "--out-dir", tmp_path)
    assert code == 3, err
    assert "status      time_limit" in out and "solver: none finished" in out
    assert "solver:  (" not in out
    assert "62 of 62 curve points hit the time limit" in out
    assert "time limit of 1e-06 s reached" in err
    assert "62 of 62 curve point(s) hit the time limit" in err
    assert (tmp_path / DEMO_FIGURE).read_bytes()[:8] == PNG_MAGIC


# --- curve -----------------------------------------------------------------------------------
def test_curve_at_its_time_limit_exits_3_and_keeps_the_points(tmp_path, capsys):
    path = ROOT / "problems" / "maximal_leakage.toml"
    table = tmp_path / "c.csv"
    code, out, err = run(
        capsys, "curve", path, "--epsilon", "0:1:3", "--time-limit", "1e-6", "--csv", table
    )
    assert code == 3
    assert sum(line.endswith("  time_limit") for line in out.splitlines()) == 3
    assert f"wrote the table to {table}" in out
    assert "3 of 3 curve point(s) hit the time limit" in err
    with open(table, newline="") as fh:
        assert [r["status"] for r in csv.DictReader(fh)] == ["time_limit"] * 3
    code, records, err = run_json(
        capsys, "curve", path, "--epsilon", "0:1:2", "--time-limit", "1e-6"
    )
    assert code == 3 and [r["status"] for r in records] == ["time_limit"] * 2
    assert "2 of 2 curve point(s)" in err


def test_curve_writes_csv_json_and_plot(tmp_path, capsys):
    path = ROOT / "problems" / "wang_product_dp.toml"
    csv_path, png = tmp_path / "curve.csv", tmp_path / "curve.png"
    code, records, _ = run_json(
        capsys,
        "curve",
        path,
        "--epsilon",
        "0:2:9",
        "--notions",
        "dp,identifiability",
        "--csv",
        csv_path,
        "--plot",
        png,
    )
    assert code == 0
    assert isinstance(records, list) and len(records) == 18
    for r in records:
        assert {"epsilon", "distortion", "status"} <= set(r)
    eps_x = math.log(7 / 3)  # Wang et al. eq. (18) for the prior (.42,.18,.28,.12)
    for r in records:
        h = 2 / (1 + math.exp(r["requested_epsilon"]))  # h(ε), m = n = 2
        low = 2 / (1 + math.exp(r["requested_epsilon"] + eps_x))
        if r["notion"] == "dp":
            assert r["status"] == "optimal"
            assert low - 1e-9 <= r["distortion"] <= h + 1e-9  # Theorem 1 sandwich
        elif r["requested_epsilon"] < eps_x:
            assert r["status"] == "infeasible"
            assert r["least_achievable"] == pytest.approx(eps_x, abs=1e-12)
        else:
            assert r["distortion"] == pytest.approx(h, abs=1e-8)  # D*_I = h(ε) above ε̃_X
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 18 and {"epsilon", "distortion", "status"} <= set(rows[0])
    assert float(rows[-1]["distortion"]) == pytest.approx(records[-1]["distortion"])
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_curve_budget_mode_human_output(tmp_path, capsys):
    path = ROOT / "problems" / "calmon_fawaz_corollary1.toml"
    code, out, _ = run(capsys, "curve", path, "--max-distortion", "0.1:0.5:3")
    assert code == 0
    assert "budget" in out and out.count("optimal") == 3
    code, records, _ = run_json(capsys, "curve", path, "--max-distortion", "0.1:0.5:3")
    # rate-distortion closed form ln 3 - h_b(Δ) - Δ ln 2
    expected = [0.704214597221, 0.279803832445, 0.058891517828]
    assert [r["epsilon"] for r in records] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    "args, key",
    [
        (["--epsilon", "0:1"], "--epsilon"),
        (["--epsilon", "a:1:3"], "--epsilon"),
        (["--epsilon", "0:1:0"], "--epsilon"),
        (["--max-distortion", "0:1:x"], "--max-distortion"),
        (["--epsilon", "0:1:3", "--notions", "pml,nosuch"], "--notions"),
    ],
)
def test_curve_bad_arguments(capsys, args, key):
    path = ROOT / "problems" / "maximal_leakage.toml"
    code, out, err = run(capsys, "curve", path, *args)
    assert code == 2 and key in err


def test_curve_needs_a_range(capsys):
    code, _, err = run(capsys, "curve", ROOT / "problems" / "maximal_leakage.toml")
    assert code == 2 and "--epsilon" in err


# --- bad input: exit 2, file and key named, never a traceback --------------------------------
GOOD = """
[prior]
probs = [0.5, 0.3, 0.2]

[distortion]
kind = "hamming"

[privacy]
notion = "pml"
epsilon = 0.5
"""

BAD_FILES = {
    "prior_sum": (GOOD.replace("0.5, 0.3, 0.2", "0.5, 0.3, 0.1"), ["prior.probs", "sums to 0.9"]),
    "both_modes": (GOOD + "max_distortion = 0.3\n", ["privacy", "not both"]),
    "no_mode": (GOOD.replace("epsilon = 0.5", ""), ["privacy", "neither"]),
    "unknown_notion": (
        GOOD.replace('"pml"', '"plm"'),
        ["privacy.notion", "plm", "maximal_leakage"],
    ),
    "bad_toml": (GOOD.replace("[privacy]", "[privacy"), ["invalid TOML", "line 8"]),
    "two_priors": (GOOD.replace("[prior]", "[prior]\njoint = [[0.5, 0.5]]"), ["prior", "joint"]),
    "no_prior": (GOOD.split("[distortion]")[1].join(["[distortion]", ""]), ["prior", "missing"]),
    "unknown_kind": (GOOD.replace('"hamming"', '"euclid"'), ["distortion.kind", "absolute"]),
    "unknown_key": (GOOD + "kappa = 0.1\n", ["privacy.kappa", "valid keys", "max_distortion"]),
    "unknown_section": (GOOD + "[extras]\na = 1\n", ["extras", "valid keys"]),
    "matrix_shape": (
        GOOD.replace('kind = "hamming"', 'kind = "matrix"\nmatrix = [[0, 1], [1, 0]]'),
        ["distortion.matrix", "2 rows", "3 inputs"],
    ),
    "ragged_matrix": (
        GOOD.replace('kind = "hamming"', 'kind = "matrix"\nmatrix = [[0, 1], [1], [1, 1]]'),
        ["distortion.matrix", "different lengths"],
    ),
    "hamming_neighbors": (
        GOOD.replace('"pml"', '"dp"') + 'neighbors = "hamming"\n',
        ["privacy.neighbors", "database"],
    ),
    "negative_epsilon": (GOOD.replace("0.5\n", "-1\n"), ["privacy.epsilon", ">= 0"]),
    "string_epsilon": (
        GOOD.replace("epsilon = 0.5", 'epsilon = "half"'),
        ["privacy.epsilon", "number"],
    ),
    "labels": (
        GOOD.replace("[distortion]", 'labels = ["a", "b"]\n[distortion]'),
        ["prior.labels", "2 labels"],
    ),
    "values": (
        GOOD.replace('kind = "hamming"', 'kind = "absolute"\nvalues = [1, 2]'),
        ["distortion.values", "2 values"],
    ),
    "robust_without_priors": (GOOD.replace('"pml"', '"robust_pml"'), ["privacy.priors", "missing"]),
    "priors_wrong_size": (
        GOOD.replace('"pml"', '"robust_pml"') + "priors = [[0.5, 0.5]]\n",
        ["privacy.priors[0]", "2 entries"],
    ),
    "observe_secret_single": (
        GOOD + "observe_secret = true\n",
        ["privacy.observe_secret", "joint"],
    ),
    "database_row_probs": (
        GOOD.replace(
            "probs = [0.5, 0.3, 0.2]", "database = {m = 2, n = 2, row_probs = [0.5, 0.3, 0.2]}"
        ),
        ["prior.database.row_probs", "m = 2"],
    ),
    "database_probs_count": (
        GOOD.replace(
            "probs = [0.5, 0.3, 0.2]", "database = {m = 2, n = 2, probs = [0.5, 0.3, 0.2]}"
        ),
        ["prior.database.probs", "m**n = 4"],
    ),
    "solver_name": (GOOD + '[solver]\nname = "NOSUCH"\n', ["solver.name", "CLARABEL"]),
    "missing_distortion": (
        GOOD.replace('[distortion]\nkind = "hamming"', ""),
        ["distortion", "missing"],
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_file_exits_2_naming_file_and_key(tmp_path, capsys, name):
    text, expected = BAD_FILES[name]
    path = write(tmp_path, f"{name}.toml", text)
    code, out, err = run(capsys, "solve", path)
    assert code == 2, (out, err)
    assert out == ""
    assert str(path) in err
    for fragment in expected:
        assert fragment in err, (fragment, err)
    with pytest.raises(InputError):
        load_problem(path)
    # the same with --json: the error object on stdout, the message on stderr
    code, data, err = run_json(capsys, "solve", path)
    assert code == 2 and data["status"] == "error" and str(path) in data["message"]


def test_good_base_file_is_good(tmp_path, capsys):
    code, data, _ = run_json(capsys, "solve", write(tmp_path, "good.toml", GOOD))
    assert code == 0 and data["verified"]


def test_missing_file(tmp_path, capsys):
    code, out, err = run(capsys, "solve", tmp_path / "nope.toml")
    assert code == 2 and "nope.toml" in err and "cannot read" in err


def test_audit_needs_a_mechanism(tmp_path, capsys):
    code, _, err = run(capsys, "audit", write(tmp_path, "a.toml", GOOD))
    assert code == 2 and "mechanism" in err
    bad = GOOD + "[mechanism]\nmatrix = [[1, 0, 0], [0, 1, 0], [0.5, 0.4, 0.2]]\n"
    code, _, err = run(capsys, "audit", write(tmp_path, "b.toml", bad))
    assert code == 2 and "mechanism.matrix" in err and "row 2" in err


# --- infeasible requests: exit 1 with the least achievable value ------------------------------
def test_identifiability_below_eps_x_is_infeasible(tmp_path, capsys):
    text = """
[prior.database]
m = 2
n = 2
probs = [0.42, 0.18, 0.28, 0.12]
[distortion]
kind = "hamming"
[privacy]
notion = "identifiability"
epsilon = 0.5
"""
    path = write(tmp_path, "ident.toml", text)
    code, data, err = run_json(capsys, "solve", path)
    assert code == 1
    assert data["status"] == "infeasible"
    assert data["least_achievable"] == pytest.approx(math.log(7 / 3), abs=1e-12)  # ε_X
    assert data["least_achievable_quantity"] == "epsilon"
    assert "0.847297860387" in err and str(path) in err
    code, out, err = run(capsys, "solve", path)
    assert code == 1 and "INFEASIBLE" in out and "least achievable" in err


def test_distortion_budget_below_the_least_is_infeasible(tmp_path, capsys):
    text = GOOD.replace(
        'kind = "hamming"', 'kind = "matrix"\nmatrix = [[0.5, 1, 1], [1, 0.5, 1], [1, 1, 0.5]]'
    ).replace("epsilon = 0.5", "max_distortion = 0.2")
    code, data, err = run_json(capsys, "solve", write(tmp_path, "budget.toml", text))
    assert code == 1
    assert data["status"] == "infeasible"
    assert data["least_achievable"] == pytest.approx(0.5)
    assert data["least_achievable_quantity"] == "distortion"
    assert "least achievable distortion" in err


# --- failures: exit 3, a message, a traceback only with --debug -------------------------------
def test_solver_failure_exits_3(monkeypatch, capsys):
    from privopt.io.files import ProblemSpec

    def boom(self, *args, **kwargs):
        raise SolverError("no solver could solve the program (tried HIGHS)")

    monkeypatch.setattr(ProblemSpec, "solve", boom)
    code, out, err = run(capsys, "solve", ROOT / "problems" / "maximal_leakage.toml")
    assert code == 3 and "no solver could solve" in err


def test_unexpected_error_exits_3_without_traceback(monkeypatch, capsys):
    from privopt.io.files import ProblemSpec

    def boom(self, *args, **kwargs):
        raise RuntimeError("something odd")

    monkeypatch.setattr(ProblemSpec, "solve", boom)
    path = ROOT / "problems" / "maximal_leakage.toml"
    code, out, err = run(capsys, "solve", path)
    assert code == 3 and "RuntimeError: something odd" in err and "--debug" in err
    code = main(["solve", str(path), "--debug"])
    assert code == 3 and "Traceback" in capsys.readouterr().err


def test_help_and_no_command(capsys):
    assert main(["--help"]) == 0
    assert "solve" in capsys.readouterr().out
    assert main([]) == 2  # a usage error: the help on stderr, nothing on stdout
    out, err = capsys.readouterr()
    assert out == "" and "usage: privopt" in err and "give a command" in err
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["notions", "solvers"])
def test_list_commands_have_help_texts(capsys, command):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"usage: privopt {command}" in out and "List the" in out
    json_help = out.split("--json", 2)[-1]
    assert "JSON array on stdout" in json_help


def test_time_limit_help_matches_the_exit_codes(capsys):
    """curve and demo exit 3 at the time limit; batch records it and exits 0 (docs/cli.md)."""
    texts = {}
    for command in ("solve", "curve", "demo", "batch"):
        assert main([command, "--help"]) == 0
        texts[command] = " ".join(capsys.readouterr().out.split())
    assert "time_limit (exit 3)" in texts["solve"]
    assert "exit 3 when any did" in texts["curve"]
    assert "exit 3 when the solve or any curve point hit it" in texts["demo"]
    assert "exit 3" not in texts["batch"] and "exits 0" in texts["batch"]


def test_usage_errors_name_the_option_once(capsys):
    code, _, err = run(
        capsys, "solve", ROOT / "problems" / "maximal_leakage.toml", "--time-limit", "-5"
    )
    assert code == 2
    assert "argument --time-limit:" in err and "-5" in err
    assert "--time-limit: --time-limit" not in err


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--epsilon", "-1:1:3", "a privacy level ε cannot be negative"),
        ("--max-distortion", "-0.5:1:3", "a distortion budget cannot be negative"),
        ("--epsilon", "-.5:1:3", "cannot be negative"),
    ],
)
def test_a_negative_range_reaches_the_range_check(capsys, option, value, words):
    code, _, err = run(capsys, "curve", ROOT / "problems" / "maximal_leakage.toml", option, value)
    assert code == 2
    assert "expected one argument" not in err
    assert f"privopt: error: {option}: START and STOP must be finite numbers >= 0" in err
    assert words in err and repr(value) in err


def test_errors_name_the_command_line_option_they_came_from(tmp_path, capsys):
    path = ROOT / "problems" / "maximal_leakage.toml"
    for argv in (["solve", path], ["curve", path, "--epsilon", "0:1:2"]):
        code, _, err = run(capsys, *argv, "--solver", "GUROBIX")
        assert code == 2
        assert err.startswith("privopt: error: --solver: unknown solver 'GUROBIX'"), err
        assert "solver.name" not in err
    code, _, err = run(capsys, "solve", path, "--max-memory", "1K")
    assert code == 2
    assert err.startswith("privopt: error: --max-memory: no installed method solves"), err
    assert "raise the bound with --max-memory" in err
    assert "solver.name" not in err and "max_memory=" not in err
    # a name the file gives is still the file's key
    text = path.read_text(encoding="utf-8").replace(
        "[reference]", '[solver]\nname = "NOPE"\n\n[reference]'
    )
    bad = write(tmp_path, "bad_solver.toml", text)
    code, _, err = run(capsys, "solve", bad, "--solver", "CLARABEL")
    assert code == 2 and "solver.name: unknown or uninstalled solver 'NOPE'" in err
    text = path.read_text(encoding="utf-8").replace(
        "[reference]", '[solver]\nname = "symmetric"\n\n[reference]'
    )
    wrong = write(tmp_path, "wrong_solver.toml", text)
    code, _, err = run(capsys, "solve", wrong)
    assert code == 2 and "solver.name: symmetric does not apply" in err


def test_notions_and_solvers_lists(capsys):
    code, data, _ = run_json(capsys, "notions")
    assert code == 0 and {r["name"] for r in data} == set(notion_names())
    code, data, _ = run_json(capsys, "solvers")
    assert code == 0 and "CLARABEL" in {r["name"] for r in data}
    assert {"symmetric", "blahut-arimoto", "sparse-highs-simplex"} <= {r["name"] for r in data}


# --- the files module ------------------------------------------------------------------------
def test_check_reference_flags_a_mismatch():
    ref = {"distortion": 0.5, "tolerance": 1e-6, "leakage": {"pml": 0.1}}
    good = {"status": "optimal", "distortion": 0.5000001, "leakage": {"pml": 0.1}}
    assert all(c["ok"] for c in check_reference(ref, good))
    bad = {"status": "optimal", "distortion": 0.51, "leakage": {"pml": 0.1}}
    assert [c["key"] for c in check_reference(ref, bad) if not c["ok"]] == ["distortion"]


def test_optional_keys(tmp_path):
    text = """
[prior]
joint = [[0.3, 0.2], [0.1, 0.4]]
[distortion]
kind = "hamming"
[[distortion.extra]]
kind = "matrix"
matrix = [[0, 2], [1, 0]]
budget = 0.5
[privacy]
notion = "mutual_information"
epsilon = 0.1
observe_secret = true
[solver]
name = "clarabel"
tolerance = 1e-6
"""
    spec = load_problem(write(tmp_path, "opt.toml", text))
    assert spec.observe_secret and spec.solver == "clarabel" and spec.tolerance == 1e-6
    ((extra, budget),) = spec.extra_distortions
    assert budget == 0.5 and extra.matrix.tolist() == [[0, 2], [1, 0]]
    result = spec.solve()
    assert result.verified and result.distortion <= 1.0


# --- real processes --------------------------------------------------------------------------
def test_python_dash_m_privopt_subprocess(tmp_path):
    bad = write(tmp_path, "bad.toml", GOOD.replace("0.5, 0.3, 0.2", "0.5, 0.3, 0.1"))
    proc = subprocess.run(
        [sys.executable, "-m", "privopt", "solve", str(bad), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "prior.probs" in proc.stderr and str(bad) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["status"] == "error"


def test_console_script_subprocess():
    exe = shutil.which("privopt")
    if exe is None:
        pytest.skip("the privopt console script is not on PATH (package not installed)")
    path = ROOT / "problems" / "pml_uniform_ternary.toml"
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        [exe, "solve", str(path), "--json"], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["distortion"] == pytest.approx(1 / 3, abs=1e-8)  # 1 - e^ε/3 at ε = ln 2


def test_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    code, out, err = run(capsys, "demo", "--out-dir", tmp_path)
    assert code == 0 and "privopt[plot]" in err and "optimal mechanism" in out
    assert list(tmp_path.iterdir()) == []
    path = ROOT / "problems" / "maximal_leakage.toml"
    code, _, err = run(capsys, "curve", path, "--epsilon", "0:1:2", "--plot", tmp_path / "c.png")
    assert code == 2 and "--plot" in err and "matplotlib" in err


def test_a_reference_mismatch_exits_4(tmp_path, capsys):
    """A file whose [reference] does not match the answer exits with its own code (4) for
    `solve` and `audit`, so that scripts can rely on it; a match keeps 0 (or 1)."""
    good = Path("problems/pml_uniform_ternary.toml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(good.replace("distortion = 0.333333333333", "distortion = 0.4"))
    assert main(["solve", "problems/pml_uniform_ternary.toml"]) == 0
    capsys.readouterr()
    assert main(["solve", str(bad)]) == 4
    out, err = capsys.readouterr()
    assert "MISMATCH" in out and "does not match [reference]: distortion" in err
    assert main(["solve", str(bad), "--json"]) == 4
    out, _ = capsys.readouterr()
    assert json.loads(out)["reference_check"]["ok"] is False
    audit = Path("problems/audit/pml_example5.toml").read_text(encoding="utf-8")
    bad_audit = tmp_path / "bad_audit.toml"
    bad_audit.write_text(audit.replace("pml             = 1.3862943611198906", "pml = 1.5"))
    assert main(["audit", "problems/audit/pml_example5.toml"]) == 0
    capsys.readouterr()
    assert main(["audit", str(bad_audit)]) == 4
    _, err = capsys.readouterr()
    assert "leakage.pml: expected 1.5" in err


# --- --max-memory ------------------------------------------------------------------------------
def test_max_memory_bounds_the_methods_for_one_command(capsys, monkeypatch):
    """``--max-memory`` sets the memory bound for the command only (an input error naming the
    bound when nothing fits; PRIVOPT_MAX_MEMORY is restored afterwards)."""
    monkeypatch.setenv("PRIVOPT_MAX_MEMORY", "4G")
    path = ROOT / "problems" / "wang_product_dp.toml"
    code, out, err = run(capsys, "solve", path, "--max-memory", "1K")
    assert code == 2
    assert "memory bound of 1 KB" in err and "--max-memory" in err
    assert os.environ["PRIVOPT_MAX_MEMORY"] == "4G"
    code, result, _ = run_json(capsys, "solve", path, "--max-memory", "inf")
    assert code == 0 and result["status"] == "optimal"
    code, records, _ = run_json(capsys, "curve", path, "--epsilon", "1:2:2", "--max-memory", "8G")
    assert code == 0 and [r["status"] for r in records] == ["optimal", "optimal"]


@pytest.mark.parametrize("size", ["lots", "-1G", "0"])
def test_max_memory_rejects_a_size_it_cannot_read(capsys, size):
    code, _, err = run(
        capsys, "solve", ROOT / "problems" / "wang_product_dp.toml", "--max-memory", size
    )
    assert code == 2
    assert "--max-memory" in err


# --- levels in bits and limits counted from the command's start -------------------------------
def _ternary_pml(tmp_path) -> Path:
    path = tmp_path / "ternary.toml"
    path.write_text(
        '[prior]\nprobs = [0.5, 0.3, 0.2]\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "pml"\nepsilon = 1.0\n',
        encoding="utf-8",
    )
    return path


def test_curve_levels_are_given_in_the_unit_of_the_table(capsys, tmp_path):
    """``--unit bits``: the --epsilon range is in bits, as po.sweep(unit="bits") takes it."""
    path = _ternary_pml(tmp_path)
    code, records, _ = run_json(capsys, "curve", path, "--epsilon", "0.5:1.5:3", "--unit", "bits")
    assert code == 0
    assert [r["requested_epsilon"] for r in records] == pytest.approx([0.5, 1.0, 1.5])
    import privopt as po

    want = po.sweep([0.5, 0.3, 0.2], "hamming", "pml", epsilons=[0.5, 1.0, 1.5], unit="bits")
    assert [r["distortion"] for r in records] == pytest.approx(want.column("distortion"), abs=1e-9)
    assert all(r["epsilon"] <= r["requested_epsilon"] + 1e-9 for r in records)


def test_a_time_limit_counts_from_the_start_of_the_command(capsys, tmp_path, monkeypatch):
    """A command that started 5 s ago with --time-limit 2 has no time left for its solve:
    exit 3 with status time_limit."""
    import time

    from privopt.cli import _common

    def started_five_seconds_ago() -> None:
        _common.COMMAND_START[:] = [time.perf_counter() - 5.0]

    monkeypatch.setattr("privopt.cli._started", started_five_seconds_ago)
    started_five_seconds_ago()
    assert _common._time_left_of(2.0) == 0.0 and _common._time_left_of(None) is None
    assert _common._time_left_of(10.0) <= 5.0
    code, out, err = run(capsys, "solve", _ternary_pml(tmp_path), "--time-limit", "2", "--json")
    assert code == 3
    result = json.loads(out)
    assert result["status"] == "time_limit"
