"""The one solve pipeline: fallback, names, time limits, progress, statuses, notion options.

Oracles: the cvxpy program with another solver (an independent route through the driver),
and closed forms where they hold; time limits are reached by counting iterations, not by a
clock (tests/solve/test_limits.py runs limited solves in subprocesses).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import privopt as po
from privopt.cli import main
from privopt.methods import METHODS, Answer, ProgressEvent
from privopt.status import Status

P3 = [0.5, 0.3, 0.2]


def _fail(task):
    return Answer(Status.FAILED, "patched", message="made to fail by the test")


def _raise(task):
    raise RuntimeError("a bug inside the method")


def _false_infeasible(task):
    return Answer(Status.INFEASIBLE, "patched", message="claims infeasible")


# an instance on which each fast path applies, and its notion
FAST_PATH_CASES = {
    "blahut-arimoto": (P3, "hamming", "mutual_information", {"epsilon": 0.3}),
    "symmetric": (po.DatabasePrior(2, 3, row_probs=[0.6, 0.4]), "hamming", "dp", {"epsilon": 1.0}),
    "sparse-highs": (P3, "hamming", "pml", {"epsilon": 0.4}),
    "sparse-highs-simplex": (P3, "hamming", "pml", {"epsilon": 0.4}),
    "sparse-highs-ipm": (P3, "hamming", "ldp", {"epsilon": 0.8}),
    "sparse-highs-ipm-crossover": (P3, "hamming", "information_privacy", {"epsilon": 0.8}),
    "sparse-highs-pdlp": (P3, "hamming", "maximal_leakage", {"epsilon": 0.2}),
    "sparse-clarabel": (P3, "hamming", "ldp", {"epsilon": 0.8}),
    "block-ipm": (P3, "hamming", "pml", {"epsilon": 0.4}),
    "sparse-highs-translation": (
        po.DatabasePrior(2, 3, row_probs=[0.5, 0.5]),
        "hamming",
        "dp",
        {"epsilon": 0.7},
    ),
    "wang-identifiability": (
        po.DatabasePrior(2, 2, row_probs=[0.6, 0.4]),
        "hamming",
        "identifiability",
        {"epsilon": 1.0},
    ),
    "sparse-highs-symmetry": ([0.3, 0.2, 0.2, 0.3], "absolute", "ldp", {"epsilon": 0.8}),
}


def test_every_fast_path_has_a_fallback_case():
    fast = {name for name, m in METHODS.items() if m.family == "privopt"}
    assert fast == set(FAST_PATH_CASES)


@pytest.mark.parametrize("name", sorted(FAST_PATH_CASES))
@pytest.mark.parametrize("failure", [_fail, _raise, _false_infeasible])
def test_a_failing_fast_path_falls_back(name, failure, monkeypatch):
    prior, dist, notion, point = FAST_PATH_CASES[name]
    reference = po.design(prior, dist, notion, solver="CLARABEL", **point)
    method = METHODS[name]
    monkeypatch.setattr(method, "solve", failure)
    res = po.design(prior, dist, notion, solver=[name, "CLARABEL"], **point)
    assert res.status == "optimal" and res.verified
    assert res.solver.name == "CLARABEL" and res.solver.tried == [name, "CLARABEL"]
    assert res.solver.attempts[0].method == name
    assert res.solver.attempts[0].status in ("failed", "infeasible")
    assert res.distortion == pytest.approx(reference.distortion, abs=1e-6)
    # alone, the failing method is an explicit error (never a silent answer)
    with pytest.raises(po.SolverError, match=name):
        po.design(prior, dist, notion, solver=name, **point)


def test_automatic_chain_falls_back_from_blahut_arimoto():
    """The issue's case: Blahut–Arimoto cannot certify ε = 1e-12 on a near-uniform bit; the
    automatic chain hands over to the exponential-cone program, which answers verified."""
    res = po.design([0.5005, 0.4995], "hamming", "mutual_information", epsilon=1e-12)
    assert res.verified and res.status in ("optimal", "optimal_inaccurate")
    assert res.solver.tried[0] == "blahut-arimoto" and res.solver.name != "blahut-arimoto"
    assert res.epsilon <= 1e-12 + 1e-9
    # D*(ε) → D*(0) = 0.4995 (the best constant output) as ε → 0
    assert res.distortion == pytest.approx(0.4995, abs=1e-5)
    assert res.to_dict()["solver"]["fallbacks"][0]["method"] == "blahut-arimoto"


def test_a_false_infeasibility_is_not_believed_where_a_constant_mechanism_is_feasible(
    monkeypatch,
):
    monkeypatch.setattr(METHODS["HIGHS"], "solve", _false_infeasible)
    res = po.design(P3, "hamming", "pml", epsilon=0.4, solver=["HIGHS", "CLARABEL"])
    assert res.status == "optimal" and res.solver.name == "CLARABEL"
    assert res.solver.attempts[0].status == "infeasible"


# --- one namespace ----------------------------------------------------------------------------
def test_names_are_one_namespace():
    assert po.methods.lookup("highs") is METHODS["HIGHS"]  # cvxpy's HiGHS, everywhere
    assert po.methods.lookup("Clarabel") is METHODS["CLARABEL"]
    assert po.methods.lookup("blahut_arimoto") is METHODS["blahut-arimoto"]  # old spelling
    res = po.design(P3, "hamming", "pml", epsilon=0.4, solver="highs")
    assert res.solver.name == "HIGHS"
    pp = po.build_problem(P3, "hamming", "pml", epsilon=0.4)
    assert po.solve_problem(pp, "highs").solver.name == "HIGHS"


def test_solve_problem_accepts_every_applicable_method():
    pp = po.build_problem(P3, "hamming", "mutual_information", max_distortion=0.3)
    res = po.solve_problem(pp, "blahut-arimoto")
    assert res.solver.name == "blahut-arimoto" and res.status == "optimal"
    ref = po.solve_problem(pp, "CLARABEL")
    assert res.epsilon == pytest.approx(ref.epsilon, abs=1e-6)


def test_added_constraints_keep_to_the_cvxpy_methods():
    pp = po.build_problem(P3, "hamming", "pml", epsilon=0.4)
    pp.add_constraints(pp.W[0, 1] == 0)
    res = po.solve_problem(pp)
    assert res.mechanism.matrix[0, 1] == pytest.approx(0.0, abs=1e-9)
    assert po.METHODS[res.solver.name].family == "cvxpy"
    with pytest.raises(po.InputError, match="does not apply.*added constraints"):
        po.solve_problem(pp, "sparse-highs-simplex")


def test_unknown_and_inapplicable_names_list_what_applies():
    with pytest.raises(po.InputError, match="unknown solver 'nope'.*use one of: .*CLARABEL"):
        po.design(P3, "hamming", "pml", epsilon=0.4, solver="nope")
    with pytest.raises(po.InputError) as info:
        po.design(P3, "hamming", "pml", epsilon=0.4, solver="blahut-arimoto")
    message = str(info.value)
    assert "mutual_information only" in message and "sparse-highs-simplex" in message
    assert "blahut-arimoto" not in message.split("use one of:")[1]
    with pytest.raises(po.InputError, match="exponential cone"):
        po.design(P3, "hamming", "mutual_information", epsilon=0.4, solver="HIGHS")


# --- time limits ------------------------------------------------------------------------------
# No clock here: block-ipm is stopped as a time limit would stop it after a number of its
# iterations (tests/methods/test_block_ipm.py), or the limit is 0 (reached before any point).
# How long a limited run takes, in a subprocess, is in tests/solve/test_limits.py.


def test_time_limit_from_the_api(monkeypatch):
    from tests.methods.test_block_ipm import TIME_LIMITED_PRIOR, stop_block_ipm_after

    stop_block_ipm_after(monkeypatch)
    res = po.design(TIME_LIMITED_PRIOR, "hamming", "dp", epsilon=1.0, time_limit=600)
    assert res.status == "time_limit" and "time limit of 600 s" in res.message
    assert res.to_dict()["status"] == "time_limit"
    if res.mechanism is None:  # nothing feasible in time
        assert not res.verified and res.message == "time limit of 600 s reached"
    else:  # block-ipm's best iterate, handed over: feasible, re-measured, not certified
        assert res.verified and res.message.endswith(
            "(the mechanism is the best feasible one found)"
        )
        assert res.leakage["dp"] <= 1.0 + 1e-9
        assert res.certificate is not None and not res.certificate.certified
    nothing = po.design(TIME_LIMITED_PRIOR, "hamming", "dp", epsilon=1.0, time_limit=0)
    assert nothing.status == "time_limit" and nothing.mechanism is None


def test_time_limit_in_a_sweep_keeps_what_was_computed():
    curve = po.sweep(P3, "hamming", "pml", epsilons=[0.1, 0.2], time_limit=600)
    assert [r["status"] for r in curve.records] == ["optimal", "optimal"]
    late = po.sweep(P3, "hamming", "dp", epsilons=[0.5, 1.0, 1.5], time_limit=0)
    assert [r["status"] for r in late.records] == ["time_limit"] * 3
    assert "before this point" in late.records[-1]["message"]


def test_time_limit_from_a_file_and_the_cli(tmp_path, capsys, monkeypatch):
    from tests.methods.test_block_ipm import TIME_LIMITED_PRIOR, stop_block_ipm_after

    probs = ", ".join(repr(float(v)) for v in TIME_LIMITED_PRIOR.probs)
    path = tmp_path / "large.toml"
    path.write_text(
        f"""
[prior.database]
m = 2
n = 5
probs = [{probs}]
[distortion]
kind = "hamming"
[privacy]
notion = "dp"
epsilon = 1.0
[solver]
name = "block-ipm"
time_limit = 600
"""
    )
    from privopt.io.files import load_problem

    spec = load_problem(path)
    assert spec.time_limit == 600
    stop_block_ipm_after(monkeypatch)
    code = main(["solve", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 3
    assert json.loads(out)["status"] == "time_limit"
    assert "time limit of 600 s reached" in err
    code = main(["solve", str(path), "--time-limit", "0"])
    assert code == 3
    out, err = capsys.readouterr()
    assert "time_limit" in out and "time limit of 0 s" in err and "Traceback" not in err
    assert main(["solve", str(path), "--time-limit", "-1"]) == 2
    assert "--time-limit" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [-1, -1e-9, float("nan"), float("-inf"), "soon", True])
def test_time_limit_is_validated(bad):
    with pytest.raises(po.InputError, match="time_limit"):
        po.design(P3, "hamming", "pml", epsilon=0.4, time_limit=bad)


# --- progress ---------------------------------------------------------------------------------
def test_progress_events_report_methods_and_iterations():
    events: list[ProgressEvent] = []
    k = 40
    rng = np.random.default_rng(1)
    prior = rng.dirichlet(np.ones(k))
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    po.design(
        prior, d, "pml", epsilon=0.5, solver="sparse-highs-simplex", on_progress=events.append
    )
    assert events[0].stage == "start" and events[0].method == "sparse-highs-simplex"
    assert any(e.stage == "iteration" and e.iteration for e in events)
    assert events[-1].stage == "done"
    events.clear()
    po.design(P3, "hamming", "pml", max_distortion=0.3, on_progress=events.append)
    assert sum(e.stage == "start" for e in events) > 3  # one per line-search point


# --- statuses and typed answers -------------------------------------------------------------
def test_statuses_are_one_enum_with_the_json_strings():
    res = po.design(P3, "hamming", "pml", epsilon=0.4)
    assert isinstance(res.status, po.Status) and res.status == "optimal"
    assert f"{res.status}" == "optimal" and json.dumps(res.to_dict())
    assert res.to_dict()["status"] == "optimal"
    assert isinstance(res.solver, po.SolverRun) and isinstance(
        res.certificate, po.CertificateReport
    )
    bad = po.design(
        po.DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12]),
        "hamming",
        "identifiability",
        epsilon=0.1,
        raise_on_infeasible=False,
    )
    assert bad.status == po.Status.INFEASIBLE and bad.least_achievable_quantity == "epsilon"
    assert {s.value for s in po.Status} >= {"optimal", "optimal_inaccurate", "infeasible"}


# --- notion options ---------------------------------------------------------------------------
def test_notion_options_are_declared_once_and_validated_everywhere(tmp_path):
    priors = [[0.5, 0.5], [0.2, 0.8]]
    res = po.design([0.5, 0.5], "hamming", "robust_pml", epsilon=0.4, priors=priors)
    assert res.verified
    with pytest.raises(po.InputError, match="privacy.priors: missing: robust_pml needs priors"):
        po.design([0.5, 0.5], "hamming", "robust_pml", epsilon=0.4)
    with pytest.raises(po.InputError, match="takes no option 'priors'.*robust_pml"):
        po.design([0.5, 0.5], "hamming", "pml", epsilon=0.4, priors=priors)
    with pytest.raises(po.InputError, match=r"privacy.priors\[1\]: has 3 entries"):
        po.design([0.5, 0.5], "hamming", "robust_pml", epsilon=0.4, priors=[[0.5, 0.5], [1, 0, 0]])
    path = tmp_path / "p.toml"
    path.write_text(
        '[prior]\nprobs = [0.5, 0.5]\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "pml"\nepsilon = 0.4\npriors = [[0.5, 0.5]]\n'
    )
    from privopt.io.files import load_problem

    with pytest.raises(po.InputError, match=r"p.toml: privacy.priors: the notion 'pml' takes no"):
        load_problem(path)
