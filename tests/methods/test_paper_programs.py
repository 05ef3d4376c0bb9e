"""The programs of the papers (R-PD, the distance-profile LPs, the ζ program of Calmon & Fawaz
Corollary 2) against their closed forms and the 12-digit reference values recomputed for this
project."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from privopt import Distortion, JointPrior
from privopt import closed_forms as cf
from privopt import measures as ms
from privopt import paper_programs as pp
from privopt.errors import InputError
from privopt.model import database_digits, hamming_neighbors

ln = math.log


# --- R-PD (Wang, Ying & Zhang (2016), eqs. (22)–(27)) -----------------------------------------
@pytest.mark.parametrize(
    ("m", "n", "eps", "value"),
    [
        (2, 2, ln(7 / 3) / 2, 0.791287847478),
        (2, 2, ln(7 / 3), 0.6),
        (2, 2, ln(7 / 3) + 0.5, 0.412624979351),
        (2, 2, 2.0, 0.238405844044),
        (3, 2, ln(2.5) / 2, 1.11696311978),
        (3, 2, ln(2.5), 0.888888888889),
        (3, 2, (ln(2.5) + ln(3)) / 2, 0.84412890003),
        (3, 2, ln(3), 0.8),
        (2, 2, ln(4), 0.4),
        (2, 2, 1.90234065127, 0.259687576257),
    ],
)
def test_rpd_reference_values(m, n, eps, value):
    result = pp.relaxed_privacy_distortion(m, n, eps)
    assert result.value == pytest.approx(value, abs=1e-9)
    assert result.value == pytest.approx(cf.h(eps, m, n), abs=1e-10)  # Lemma 1


@pytest.mark.parametrize(("m", "n", "eps"), [(2, 3, 0.7), (3, 1, 1.5), (4, 2, 0.2), (2, 2, 0.0)])
def test_rpd_solution_is_feasible_and_attains_h(m, n, eps):
    result = pp.relaxed_privacy_distortion(m, n, eps)
    q = result.joint
    assert q.sum() == pytest.approx(1.0) and (q >= 0).all()
    rel = hamming_neighbors(m, n)
    assert (q[rel.left] <= math.exp(eps) * q[rel.right] + 1e-9).all()  # (23) in joint form
    digits = database_digits(m, n)
    dist = (digits[:, None, :] != digits[None, :, :]).sum(axis=2)
    assert float((q * dist).sum()) == pytest.approx(cf.h(eps, m, n), abs=1e-9)
    assert np.allclose(result.posterior.sum(axis=0), 1.0)
    assert result.output_pmf.sum() == pytest.approx(1.0)


def test_rpd_size_guard():
    with pytest.raises(InputError):
        pp.relaxed_privacy_distortion(2, 9, 1.0)
    with pytest.raises(InputError):
        pp.relaxed_privacy_distortion(2, 2, -1.0)


# --- distance-profile LPs (proof of Lemma 1) -----------------------------------------------------
@pytest.mark.parametrize(
    ("m", "n", "eps", "value"),
    [(2, 2, 1.0, 0.53788284274), (3, 3, 0.7, 1.49486040553), (4, 5, 0.2, 3.5533212203)],
)
def test_profile_lp_reference_values(m, n, eps, value):
    lp = pp.distance_profile_lp(m, n, eps)
    assert lp.value == pytest.approx(value, abs=1e-9)
    assert lp.value == pytest.approx(cf.h(eps, m, n), abs=1e-10)
    closed = pp.distance_profile_closed_form(m, n, eps)
    assert closed.value == pytest.approx(lp.value, abs=1e-10)
    assert np.allclose(lp.profile, closed.profile, atol=1e-9)  # P_l ∝ N_l e^{−lε}


@pytest.mark.parametrize(("m", "n", "eps"), [(2, 4, 0.5), (3, 3, 1.2)])
def test_profile_lp_truncations_50_and_56(m, n, eps):
    z = (1 + (m - 1) * math.exp(-eps)) ** n
    sizes = [math.comb(n, ell) * (m - 1) ** ell for ell in range(n + 1)]
    tail_n = sizes[n] * math.exp(-n * eps) / z
    tail_n1 = sizes[n - 1] * math.exp(-(n - 1) * eps) / z
    p50 = pp.distance_profile_lp(m, n, eps, levels=n - 1, mass=1 - tail_n)
    p56 = pp.distance_profile_lp(m, n, eps, levels=n - 2, mass=1 - tail_n - tail_n1)
    # (52) and (55): peeling the last shell adds l·P*_l each time, and ends at h(ε)
    assert p50.value + n * tail_n == pytest.approx(cf.h(eps, m, n), abs=1e-10)
    assert p56.value + (n - 1) * tail_n1 + n * tail_n == pytest.approx(cf.h(eps, m, n), abs=1e-10)
    for levels, mass, lp in ((n - 1, 1 - tail_n, p50), (n - 2, 1 - tail_n - tail_n1, p56)):
        closed = pp.distance_profile_closed_form(m, n, eps, levels=levels, mass=mass)
        assert np.allclose(lp.profile, closed.profile, atol=1e-10)


def test_profile_eq57_typo():
    """(57) as printed (e^{−(n−l)ε}) gives 1.46211715726 at n = m = 2, ε = 1; e^{−lε} gives h."""
    n, m, eps = 2, 2, 1.0
    z = (1 + (m - 1) * math.exp(-eps)) ** n
    printed = sum(
        ell * math.comb(n, ell) * (m - 1) ** ell * math.exp(-(n - ell) * eps) / z
        for ell in range(n + 1)
    )
    assert printed == pytest.approx(1.46211715726, abs=1e-10)
    assert pp.distance_profile_closed_form(m, n, eps).value == pytest.approx(0.53788284274)


def test_profile_input_errors():
    with pytest.raises(InputError):
        pp.distance_profile_lp(2, 3, 1.0, levels=4)
    with pytest.raises(InputError):
        pp.distance_profile_closed_form(2, 3, 1.0, mass=-1)


# --- the ζ program (Calmon & Fawaz (2012), Corollary 2) ---------------------------------------
def counting_query(n: int = 4, p: float = 0.3) -> JointPrior:
    joint = np.zeros((2**n, n + 1))
    for s, bits in enumerate(itertools.product((0, 1), repeat=n)):
        y = sum(bits)
        joint[s, y] = p**y * (1 - p) ** (n - y)
    return JointPrior(joint)


@pytest.mark.parametrize(
    ("eps", "value"),
    [(0.0, 0.6802), (0.3, 0.448144506), (0.8, 0.251214458), (1.5, 0.0808711461)],
)
def test_zeta_program_reference_values(eps, value):
    prior, dist = counting_query(), Distortion.absolute(5)
    result = pp.zeta_program(prior, dist, eps)
    assert result.distortion == pytest.approx(value, abs=2e-6)
    assert np.allclose(result.zeta, np.array([1, 4, 6, 4, 1]) / 16)  # binomial, independent of p
    # the optimal mechanism meets the maximum-information-leakage constraint of Theorem 2 on
    # every output it uses (an interior-point answer leaves ~1e-8 on the others, where the
    # p_U-multiplied constraint (32) is vacuous), and identity (40) holds output by output
    per_u = ms.information_leakage_per_output(prior, result.mechanism)
    p_y = prior.p_y
    p_u = p_y @ result.mechanism
    used = p_u > 1e-4
    assert used.any() and (per_u[used] <= eps + 1e-5).all()
    post = (p_y[:, None] * result.mechanism)[:, used] / p_u[used]  # p(y|u), columns
    kl = (post * np.log(np.where(post > 0, post, 1.0) / result.zeta[:, None])).sum(axis=0)
    assert np.allclose(per_u[used], eps - result.divergence_bound + kl, atol=1e-9)
    assert ms.expected_distortion(prior, result.mechanism, dist) == pytest.approx(
        result.distortion, abs=1e-6
    )


def test_zeta_program_at_large_budget_has_d_bin_zeta():
    """At ε = 0 the release is constant: its only posterior is Bin(4, .3), and
    D(Bin(4, .3) ‖ Bin(4, ½)) = 4 ln 2 − 4 h_b(.3) = 0.32913151402 = t."""
    result = pp.zeta_program(counting_query(), Distortion.absolute(5), 0.0)
    assert result.divergence_bound == pytest.approx(0.32913151402, abs=1e-10)


@pytest.mark.parametrize(("budget", "level"), [(0.5, 0.2150013), (0.25, 0.8036169)])
def test_zeta_program_line_search(budget, level):
    result = pp.zeta_program_level(counting_query(), Distortion.absolute(5), budget, tol=1e-7)
    assert result.level == pytest.approx(level, abs=2e-6)
    assert result.distortion <= budget + 1e-8


def test_zeta_program_needs_y_function_of_s():
    joint = JointPrior([[0.2, 0.1], [0.3, 0.4]])
    with pytest.raises(InputError):
        pp.zeta_program(joint, Distortion.hamming(2), 0.5)
    with pytest.raises(InputError):
        pp.zeta_program(counting_query(), Distortion.hamming(3), 0.5)
