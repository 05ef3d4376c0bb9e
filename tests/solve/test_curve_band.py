"""Certified curve bands (privopt.solve.curve_band, curve_sweep): the band's soundness against
closed forms and independent solves, every notion and both modes; its pieces on synthetic
evidence; the dual points every method hands over; the API around it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import privopt as po
from privopt import closed_forms as cf
from privopt.errors import InputError
from privopt.methods import lookup
from privopt.methods.base import Task
from privopt.methods.multipliers import MULTIPLIERS_KEY
from privopt.request import prepare_request
from privopt.solve.curve_band import (
    CurveEvidence,
    DualBound,
    _convex_secant_lower,
)

ABS = np.abs(np.arange(4)[:, None] - np.arange(4)[None, :]).astype(float)


def _cell(band, x: float) -> tuple[float, float]:
    """``(lower, upper)``: the band's certified bounds at ``x`` (its cell's)."""
    j = int(np.searchsorted(band.x, x, side="right")) - 1
    j = min(max(j, 0), band.x.size - 2)
    return float(band.lower[j + 1]), float(band.upper[j])


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# --- the pieces -------------------------------------------------------------------------------
def _evidence(notion="pml"):
    return CurveEvidence(prepare_request([0.5, 0.3, 0.2], "hamming", notion, epsilon=1.0))


def test_upper_envelope_is_the_least_distortion_of_the_mechanisms_at_or_below_a_level():
    ev = _evidence()
    ev.add_witness(0.5, 0.4)
    ev.add_witness(1.0, 0.3)
    ev.add_witness(0.8, 0.35)
    ev.add_witness(0.2, 0.6)
    grid = np.array([0.1, 0.2, 0.5, 0.79, 0.8, 1.5])
    assert ev.upper(grid).tolist() == [math.inf, 0.6, 0.4, 0.4, 0.35, 0.3]


def test_lower_steps_hold_at_and_below_their_level_and_strict_ones_only_below():
    ev = _evidence()
    ev.add_step(1.0, 0.5, False, "certificate")
    ev.add_step(2.0, 0.2, True, "certificate")
    grid = np.array([0.5, 1.0, 1.5, 2.0, 2.5])
    raw = ev._step_lower(grid)
    assert raw.tolist() == [0.5, 0.5, 0.2, -math.inf, -math.inf]


def test_lower_envelope_is_made_non_increasing_and_never_below_the_unconstrained_optimum():
    ev = _evidence()
    ev.add_step(0.3, 0.55, False, "certificate")
    grid = np.linspace(0.0, 3.0, 31)
    lower = ev.lower(grid)
    assert np.all(np.diff(lower) <= 0)
    assert lower.min() >= ev.request.least_distortion()
    assert lower[grid <= 0.3].min() == 0.55


def test_budget_envelopes_invert_the_level_ones():
    ev = _evidence()
    ev.add_witness(0.4, 0.5)  # ε*(D) ≤ 0.4 for D ≥ 0.5
    ev.add_witness(1.0, 0.3)
    ev.add_step(0.9, 0.35, True, "certificate")  # D*(ε) > 0.35 for ε < 0.9: ε*(0.35) ≥ 0.9
    budgets = np.array([0.3, 0.35, 0.4, 0.5, 0.6])
    assert ev.level_upper(budgets).tolist() == [1.0, 1.0, 1.0, 0.4, 0.4]
    lower = ev.level_lower(budgets, np.array([]), np.array([]))
    assert lower.tolist() == [0.9, 0.9, 0.0, 0.0, 0.0]


@given(
    st.lists(st.floats(0.05, 5.0), min_size=3, max_size=7, unique=True),
    st.floats(0.1, 3.0),
    st.floats(-1.0, 1.0),
    st.floats(0.0, 0.05),
)
@example([1.0, 0.05, 0.05000000000000001], 1.0, 0.0, 0.0)  # two points 1e-17 apart
@settings(max_examples=60, deadline=None)
def test_convex_secants_never_exceed_a_convex_function(xs, curvature, slope, slack):
    """Secants of neighbouring points, extended beyond their interval, bound a convex
    function from below even when its values are only known within ``[lower, upper]``."""
    x = np.sort(np.array(xs))
    f = lambda t: curvature * (t - 2.0) ** 2 + slope * t  # noqa: E731
    lower, upper = f(x) - slack, f(x) + slack
    grid = np.linspace(0.0, 6.0, 121)
    assert np.all(_convex_secant_lower(x, lower, upper, grid) <= f(grid) + 1e-12)


# --- dual points --------------------------------------------------------------------------------
LINEAR_CASES = [
    ("pml", 12, {}),
    ("information_privacy", 12, {}),
    ("ldp", 12, {}),
    ("maximal_leakage", 12, {}),
    ("dp", 12, {}),
    ("identifiability", 10, {"neighbors": "all"}),
    ("metric_dp", 12, "metric"),
]


@pytest.mark.parametrize("method", ["sparse-highs", "block-ipm", "CLARABEL"])
@pytest.mark.parametrize(("notion", "k", "opts"), LINEAR_CASES, ids=[c[0] for c in LINEAR_CASES])
def test_every_method_hands_over_multipliers_that_reproduce_its_certificate(
    notion, k, opts, method
):
    """At the level they were found at, the notion-form multipliers a method hands over give
    the bound it certified its answer with (the row mapping is right), and a valid bound at
    other levels."""
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(k))
    d = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(float)
    if opts == "metric":
        opts = {"metric": d}
    request = prepare_request(p, d, notion, epsilon=1.0, **opts)
    eps = request.least_level() + 1.0
    found = lookup(method)
    assert found.unsupported(request) is None
    cache = {MULTIPLIERS_KEY: []}
    answer = found.solve(Task(request.at(epsilon=eps), epsilon=eps, cache=cache, tol=1e-9))
    assert cache[MULTIPLIERS_KEY], "no multipliers handed over"
    evidence = CurveEvidence(request)
    dual = DualBound(cache[MULTIPLIERS_KEY][0], 1.0, eps)
    bound = evidence.evaluator.combined_bounds([dual], np.array([eps]))[0]
    certified = answer.certificate.lower_bound
    assert bound == pytest.approx(certified, rel=1e-6, abs=1e-9)
    for other in (eps - 0.3, eps + 0.4):
        if other < request.least_level():
            continue
        truth = po.design(p, d, notion, epsilon=other, solver="sparse-highs", **opts)
        value = evidence.evaluator.combined_bounds([dual], np.array([other]))[0]
        assert value <= truth.distortion + 1e-7 * (1 + truth.distortion)


@pytest.mark.parametrize("notion", ["dp", "identifiability"])
def test_database_pair_multipliers_reproduce_the_certificate(notion):
    """Pairs of neighbouring databases (not every pair): the pair-by-pair mapping."""
    rng = np.random.default_rng(3)
    prior = po.DatabasePrior(2, 3, probs=rng.dirichlet(np.ones(8)))
    request = prepare_request(prior, "hamming", notion, epsilon=1.0)
    eps = request.least_level() + 0.8
    for method in ("sparse-highs", "block-ipm"):
        cache = {MULTIPLIERS_KEY: []}
        answer = lookup(method).solve(
            Task(request.at(epsilon=eps), epsilon=eps, cache=cache, tol=1e-9)
        )
        dual = DualBound(cache[MULTIPLIERS_KEY][0], 1.0, eps)
        bound = CurveEvidence(request).evaluator.combined_bounds([dual], np.array([eps]))[0]
        assert bound == pytest.approx(answer.certificate.lower_bound, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("notion", ["maximal_leakage", "mutual_information"])
def test_budget_point_multipliers_bound_the_level_curve_by_a_line(notion):
    """A budget point's multipliers (least level within ``E[d] ≤ D``) say
    ``ℓ(W) + ν E[d](W) ≥ a`` for every ``W``: ``D*(ε) ≥ (a − ℓ(ε)) / ν`` at every level,
    nearly tight at the point's own level."""
    p = np.array([0.4, 0.3, 0.2, 0.1])
    request = prepare_request(p, ABS, notion, max_distortion=0.6)
    cache = {MULTIPLIERS_KEY: []}
    answer = lookup("CLARABEL").solve(Task(request, budget=0.6, cache=cache, tol=1e-9))
    found = [m for m in cache[MULTIPLIERS_KEY] if m.budget is not None]
    assert found and found[0].budget_multiplier > 0
    level = float(answer.objective)
    evidence = CurveEvidence(request)
    dual = DualBound(found[0], 1.0, level)
    at_home = evidence.evaluator.budget_bounds(dual, np.array([level]))[0]
    assert at_home == pytest.approx(0.6, abs=1e-4)
    for eps in (0.5 * level, 1.5 * level, level + 0.5):
        truth = _quiet(po.design, p, ABS, notion, epsilon=eps).distortion
        assert evidence.evaluator.budget_bounds(dual, np.array([eps]))[0] <= truth + 1e-7


# --- soundness against closed forms --------------------------------------------------------------
CLOSED = {
    "pml": lambda eps, k: cf.pml_uniform_hamming_distortion(eps, k),
    "ldp": lambda eps, k: cf.krr_distortion(eps, k),
    "maximal_leakage": lambda eps, k: cf.maximal_leakage_hamming_distortion(np.full(k, 1 / k), eps),
}


@pytest.mark.parametrize("notion", sorted(CLOSED))
def test_band_contains_the_closed_form_everywhere_and_the_points_pass_their_checks(notion):
    k = 5
    curve = _quiet(
        po.sweep, np.full(k, 1 / k), "hamming", notion, epsilon_range=(0.05, 2.5), band=0.03
    )
    band = curve.band
    assert band.met
    for x in np.linspace(0.05, 2.5, 301):
        lower, upper = _cell(band, x)
        truth = CLOSED[notion](x, k)
        assert lower <= truth + 1e-7 and truth <= upper + 1e-7
    assert all(r.get("closed_form_ok", True) for r in curve.records)
    assert any("closed_form_ok" in r for r in curve.records)


def test_mutual_information_band_contains_the_rate_distortion_function():
    """Uniform prior, Hamming distortion: ε*(D) = ln k − h(D) − D ln(k − 1) (budget curve)."""
    k = 4
    curve = _quiet(
        po.sweep,
        np.full(k, 1 / k),
        "hamming",
        "mutual_information",
        max_distortion_range=(0.05, 0.6),
        band=0.03,
    )
    assert curve.band.met
    for x in np.linspace(0.05, 0.6, 201):
        lower, upper = _cell(curve.band, x)
        truth = cf.rate_distortion_hamming_uniform(k, x)
        assert lower <= truth + 1e-7 and truth <= upper + 1e-7


# --- soundness against independent solves, every notion, both modes -------------------------
NOTIONS = [
    "pml",
    "ldp",
    "dp",
    "identifiability",
    "information_privacy",
    "maximal_leakage",
    "metric_dp",
    "robust_pml",
    "mutual_information",
    "max_information_leakage",
]
#: Budget curves of max-information leakage: each point is a line search of exponential-cone
#: programs (about 45 s for three examples); a fixed instance stands for it in the fast suite.
SLOW_CASE = ("max_information_leakage", "max_distortion")
#: The band's upper envelope counts mechanisms that meet a level (or budget) in the sense
#: every verified answer does (within the verification's tolerance), the lower one bounds the
#: exact optimum: they may cross by that tolerance times the curve's slope.
CROSSING = 1e-6


def _options(notion, k, p):
    if notion == "metric_dp":
        return {"metric": ABS[:k, :k]}
    if notion == "robust_pml":
        return {"priors": [p, np.full(k, 1.0 / k)]}
    return {}


@st.composite
def instances(draw):
    k = draw(st.integers(3, 4))
    weights = draw(st.lists(st.floats(0.2, 1.0), min_size=k, max_size=k))
    p = np.array(weights) / sum(weights)
    distortion = draw(st.sampled_from(["hamming", "absolute"]))
    d = (1.0 - np.eye(k)) if distortion == "hamming" else ABS[:k, :k]
    xs = draw(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3))
    return p, d, xs


def _reference(p, d, notion, opts, mode, value):
    """A cold solve of its own: by the cvxpy program at a level (another method than the
    curve's), by the default methods at a budget (a line search of ε points of its own)."""
    if mode == "epsilon":
        kwargs = {"epsilon": value, "solver": "CLARABEL"}
    else:
        kwargs = {"max_distortion": value}
    return _quiet(po.design, p, d, notion, raise_on_infeasible=False, **kwargs, **opts)


SOUNDNESS_CASES = [
    pytest.param(
        notion,
        mode,
        marks=[pytest.mark.slow] if (notion, mode) == SLOW_CASE else [],
        id=f"{notion}-{mode}",
    )
    for notion in NOTIONS
    for mode in ("epsilon", "max_distortion")
]


@pytest.mark.parametrize(("notion", "mode"), SOUNDNESS_CASES)
@given(case=instances())
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_band_is_sound_against_independent_solves(notion, mode, case):
    """At random values between the points, an independent solve (another method, cold) lies
    within the band: its value is above the band's lower envelope, its certified lower bound
    below the upper one."""
    p, d, xs = case
    opts = _options(notion, p.size, p)
    request = prepare_request(p, d, notion, epsilon=1.0, **opts)
    least = request.least_level()
    slow = notion == "max_information_leakage"
    if mode == "epsilon":
        lo, hi = least + 0.1, least + 2.0
        curve = _quiet(
            po.sweep,
            p,
            d,
            notion,
            epsilon_range=(lo, hi),
            band=0.2 if slow else 0.05,
            max_points=8 if slow else 40,
            **opts,
        )
    else:
        top = _quiet(po.design, p, d, notion, epsilon=least + 0.1, **opts).distortion
        bottom = _quiet(po.design, p, d, notion, epsilon=least + 2.0, **opts).distortion
        if not top > bottom * 1.01 + 1e-6:
            return  # a flat curve: nothing between its ends
        lo, hi = bottom * 1.005 + 1e-7, top * 0.995
        curve = _quiet(
            po.sweep,
            p,
            d,
            notion,
            max_distortion_range=(lo, hi),
            band=0.3 if slow else 0.15,
            max_points=4 if slow else 8,
            **opts,
        )
    band = curve.band
    assert np.all(band.lower <= band.upper + CROSSING * (1 + np.abs(band.upper)))
    for fraction in xs:
        x = lo + fraction * (hi - lo)
        lower, upper = _cell(band, x)
        ref = _reference(p, d, notion, opts, mode, x)
        if ref.status not in ("optimal", "optimal_inaccurate"):
            continue
        value = ref.distortion if mode == "epsilon" else ref.epsilon
        tol = CROSSING * (1 + abs(value))
        assert lower <= value + tol, (x, lower, value)
        cert = ref.certificate
        if mode == "epsilon" and cert is not None and cert.lower_bound is not None:
            assert cert.lower_bound <= upper + tol, (x, cert.lower_bound, upper)
        if mode == "max_distortion" and ref.status == "optimal" and ref.line_search is None:
            assert cert.lower_bound <= upper + tol, (x, cert.lower_bound, upper)


def test_max_information_leakage_budget_band_is_sound_on_a_fixed_instance():
    p = np.array([0.5, 0.3, 0.2])
    d = 1.0 - np.eye(3)
    curve = _quiet(
        po.sweep,
        p,
        d,
        "max_information_leakage",
        max_distortion_range=(0.15, 0.45),
        band=0.5,
        max_points=3,
    )
    for x in (0.2, 0.33):
        lower, upper = _cell(curve.band, x)
        ref = _quiet(po.design, p, d, "max_information_leakage", max_distortion=x)
        assert lower <= ref.epsilon + CROSSING * (1 + ref.epsilon)
        assert curve.band.lower.max() <= curve.band.upper.max() + CROSSING


# --- the API -------------------------------------------------------------------------------------
def test_adaptive_sweep_records_are_sorted_and_carry_the_envelopes():
    curve = _quiet(po.sweep, [0.5, 0.3, 0.2], "hamming", "pml", epsilon_range=(0.1, 1.5), band=0.05)
    asked = curve.column("requested_epsilon")
    assert np.all(np.diff(asked) > 0)
    assert asked[0] == pytest.approx(0.1) and asked[-1] == pytest.approx(1.5)
    for record in curve.records:
        assert record["distortion_lower"] <= record["distortion"] + 1e-9
        assert record["distortion_upper"] >= record["distortion_lower"]
    assert curve.band.met and curve.band.stopped == "tolerance"
    assert curve.band.points == len(curve)


def test_a_fixed_grid_gets_its_band_without_new_points():
    eps = [0.2, 0.6, 1.0, 1.4]
    curve = _quiet(po.sweep, [0.5, 0.3, 0.2], "hamming", "ldp", epsilons=eps, band=0.01)
    assert curve.column("requested_epsilon").tolist() == pytest.approx(eps)
    assert curve.band.stopped == ""
    assert curve.band.width >= 0


def test_the_point_budget_stops_the_refinement_and_says_where_the_band_is_wide():
    with pytest.warns(UserWarning):
        curve = po.sweep(
            [0.4, 0.3, 0.2, 0.1],
            ABS,
            "pml",
            epsilon_range=(0.05, 3.0),
            band=1e-4,
            max_points=4,
        )
    assert len(curve) == 4
    assert curve.band.stopped == "max_points"
    wide = curve.band.wide()
    assert wide and all(a < b and w > curve.band.tolerance for a, b, w in wide)


def test_a_spent_time_limit_stops_the_refinement():
    curve = _quiet(
        po.sweep,
        [0.5, 0.3, 0.2],
        "hamming",
        "pml",
        epsilon_range=(0.1, 1.5),
        band=1e-4,
        time_limit=1e-9,
    )
    assert curve.band.stopped == "time_limit"
    assert {r["status"] for r in curve.records} == {"time_limit"}


def test_absolute_tolerance_and_bits():
    curve = _quiet(
        po.sweep,
        [0.5, 0.3, 0.2],
        "hamming",
        "pml",
        epsilon_range=(0.1, 2.0),
        band_abs=0.02,
        unit="bits",
    )
    assert curve.unit == "bits" and curve.band.unit == "bits"
    assert curve.band.tolerance == pytest.approx(0.02)
    assert curve.band.width <= 0.02
    assert curve.band.x[0] == pytest.approx(0.1) and curve.band.x[-1] == pytest.approx(2.0)


def test_budget_curve_band_is_on_levels():
    curve = _quiet(
        po.sweep,
        [0.5, 0.3, 0.2],
        "hamming",
        "maximal_leakage",
        max_distortion_range=(0.1, 0.45),
        band=0.05,
    )
    assert curve.mode == "max_distortion" and curve.band.met
    assert curve.band.names == ("max_distortion", "epsilon_lower", "epsilon_upper")
    frame = curve.to_frame(band=True)
    assert list(frame.columns) == ["max_distortion", "epsilon_lower", "epsilon_upper", "solved"]
    assert "epsilon_lower" in curve.to_frame().columns


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"epsilon_range": (1.0, 0.5)}, "epsilon_range"),
        ({"epsilon_range": (0.1,)}, "epsilon_range"),
        ({"epsilon_range": (0.1, 1.0), "band": 0.0}, "band"),
        ({"epsilon_range": (0.1, 1.0), "band": 2.0}, "band"),
        ({"epsilon_range": (0.1, 1.0), "band": 0.1, "band_abs": 0.1}, "band"),
        ({"epsilon_range": (0.1, 1.0), "max_points": 1}, "max_points"),
        ({"epsilon_range": (0.1, 1.0), "epsilons": [0.5]}, "sweep"),
        ({"epsilons": [0.5], "max_points": 5}, "max_points"),
        ({"epsilon_range": (0.1, 1.0), "executor": object()}, "executor"),
        ({"max_distortion_range": (0.0, 0.3)}, "max_distortion_range"),
    ],
)
def test_bad_band_requests_name_their_field(kwargs, field):
    with pytest.raises(InputError) as info:
        po.sweep([0.5, 0.3, 0.2], ABS[:3, :3] + 0.1, "pml", **kwargs)
    assert info.value.field == field


def test_a_range_below_the_least_level_is_an_input_error():
    prior = po.DatabasePrior(2, 2, probs=[0.4, 0.3, 0.2, 0.1])
    least = prepare_request(prior, "hamming", "identifiability", epsilon=5.0).least_level()
    with pytest.raises(InputError) as info:
        po.sweep(prior, "hamming", "identifiability", epsilon_range=(least / 2, least + 1))
    assert info.value.field == "epsilon_range"


# --- the command line and the figure -------------------------------------------------------------
PROBLEM = """
[prior]
probs = [0.4, 0.3, 0.2, 0.1]

[distortion]
kind = "absolute"

[privacy]
notion = "pml"
epsilon = 0.5
"""


def _cli(capsys, *argv):
    from privopt.cli import main

    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_cli_band_certifies_a_range_and_writes_points_then_band_rows(tmp_path, capsys):
    import csv
    import json

    problem = tmp_path / "p.toml"
    problem.write_text(PROBLEM, encoding="utf-8")
    table, figure = tmp_path / "c.csv", tmp_path / "c.png"
    code, out, _ = _cli(
        capsys,
        "curve",
        problem,
        "--epsilon",
        "0.1:2",
        "--band",
        "5%",
        "--csv",
        table,
        "--plot",
        figure,
    )
    assert code == 0
    with open(table, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    kinds = [r["kind"] for r in rows]
    points = kinds.count("point")
    assert points >= 5 and kinds[:points] == ["point"] * points
    assert set(kinds[points:]) == {"band"}
    band = [r for r in rows if r["kind"] == "band"]
    assert float(band[0]["requested_epsilon"]) == pytest.approx(0.1)
    assert float(band[-1]["requested_epsilon"]) == pytest.approx(2.0)
    for r in band:
        assert float(r["distortion_lower"]) <= float(r["distortion_upper"]) + 1e-9
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, _ = _cli(capsys, "curve", problem, "--epsilon", "0.1:2", "--band", "0.05", "--json")
    found = json.loads(out)
    assert code == 0 and found["bands"][0]["met"] is True
    assert found["bands"][0]["notion"] == "pml"
    assert len(found["records"]) == found["bands"][0]["points"]


def test_cli_band_budget_spent_is_reported_on_stderr(tmp_path, capsys):
    problem = tmp_path / "p.toml"
    problem.write_text(PROBLEM, encoding="utf-8")
    code, out, err = _cli(
        capsys, "curve", problem, "--epsilon", "0.1:2", "--band-abs", "1e-5", "--max-points", "3"
    )
    assert code == 0
    assert "max_points" in err


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--epsilon", "0.1:2", "--band", "150%"], "--band"),
        (["--epsilon", "0.1:2", "--band", "x"], "--band"),
        (["--epsilon", "2:0.1", "--band", "0.1"], "--epsilon"),
        (["--epsilon", "0.1:2", "--band-abs", "-1"], "--band-abs"),
        (["--epsilon", "0.1:2", "--band", "0.1", "--max-points", "1"], "--max-points"),
    ],
)
def test_cli_band_errors_name_their_option(tmp_path, capsys, argv, field):
    problem = tmp_path / "p.toml"
    problem.write_text(PROBLEM, encoding="utf-8")
    code, _, err = _cli(capsys, "curve", problem, *argv)
    assert code == 2
    assert err.startswith(f"privopt: error: {field}:") or f"{field}:" in err


def test_figure_shades_the_band_of_each_curve():
    pytest.importorskip("matplotlib")
    from privopt.plotting import plot_curves

    prior = [0.4, 0.3, 0.2, 0.1]
    curves = [
        _quiet(po.sweep, prior, "absolute", n, epsilon_range=(0.1, 2.0), band=0.1)
        for n in ("pml", "maximal_leakage")
    ]
    budget = _quiet(po.sweep, prior, "absolute", "pml", max_distortion_range=(0.3, 0.8), band=0.2)
    fig = plot_curves(curves, prior=prior, distortion="absolute")
    gids = {c.get_gid() for c in fig.axes[0].collections}
    assert {"band:pml", "band:maximal_leakage"} <= gids
    fig = budget.plot(prior=prior, distortion="absolute")
    assert "band:pml" in {c.get_gid() for c in fig.axes[0].collections}


def test_the_docs_figure_script_draws(tmp_path):
    """docs/_scripts/curve_band_figure.py (the figure of docs/curves.md) still runs."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "docs" / "_scripts" / "curve_band_figure.py"
    spec = importlib.util.spec_from_file_location("curve_band_figure", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.draw(tmp_path / "figure.png", k=6, band=0.2)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
