"""Reference values (the papers' worked examples and independently verified test cases) for the
measures and closed forms, to 1e-9 (GitHub issue "Foundation", item 6)."""

from __future__ import annotations

import itertools
from math import comb, log

import numpy as np
import pytest

from privopt import (
    DatabasePrior,
    Distortion,
    InfeasibleError,
    InputError,
    JointPrior,
    Mechanism,
)
from privopt import closed_forms as cf
from privopt import measures as ms

TOL = 1e-9
ln = np.log


def approx(value, tol=TOL):
    return pytest.approx(value, abs=tol)


# =============================================================================================
# worked examples
# =============================================================================================

# --- [Saeidian-PML] introduction ---------------------------------------------------------------
UNIFORM3 = np.full(3, 1 / 3)
P_INTRO = np.array([[1, 0, 0], [0.5, 0.5, 0], [0, 0.5, 0.5]])
Q_INTRO = np.array([[2 / 3, 1 / 6, 1 / 6], [1 / 6, 2 / 3, 1 / 6], [1 / 6, 1 / 6, 2 / 3]])


def test_4_1_maximal_leakage_equal():
    assert ms.maximal_leakage(UNIFORM3, P_INTRO) == approx(0.69314718056)
    assert ms.maximal_leakage(UNIFORM3, Q_INTRO) == approx(0.69314718056)


def test_4_1_pml_differs():
    assert ms.pml_per_output(UNIFORM3, P_INTRO) == approx(
        [0.69314718056, 0.405465108108, 1.098612288668]
    )
    assert ms.pml_per_output(UNIFORM3, Q_INTRO) == approx([0.69314718056] * 3)
    # P's y3 reaches eps_max = ln 3
    assert ms.epsilon_max(UNIFORM3) == approx(1.098612288668)
    assert ms.pml_level(UNIFORM3, P_INTRO) == approx(ms.epsilon_max(UNIFORM3))


# --- [Saeidian-PML] Remark 5 (side information) -------------------------------------------------
def test_4_2_conditional_pml_side_information():
    p_x = np.array([0.5, 0.5])
    p_z_given_x = np.array([[0.4, 0.6], [0.6, 0.4]])
    joint_xz = p_x[:, None] * p_z_given_x
    channel = np.empty((2, 2, 2))  # channel[x, z, y]
    channel[0, 0] = [1 / 2, 1 / 2]
    channel[0, 1] = [1 / 3, 2 / 3]
    channel[1, 0] = [2 / 3, 1 / 3]
    channel[1, 1] = [1 / 2, 1 / 2]
    cond = ms.conditional_pml(joint_xz, channel)  # [z, y]
    assert cond[0, 0] == approx(0.105360515658)  # ln 10/9
    assert cond[1, 0] == approx(0.223143551314)  # ln 5/4
    # ℓ(X→y0) without Z: marginalise Z out of the channel
    w_xy = np.einsum("xz,xzy->xy", p_z_given_x, channel)
    assert ms.pml_per_output(p_x, w_xy)[0] == approx(0.182321556794)  # ln 6/5
    # bits: same values / ln 2
    assert ms.conditional_pml(joint_xz, channel, unit="bits")[1, 0] == approx(
        0.223143551314 / log(2)
    )


def test_4_2_conditional_pml_rejects_bad_shapes():
    with pytest.raises(InputError, match="channel"):
        ms.conditional_pml(np.full((2, 2), 0.25), np.full((2, 2), 0.5))
    with pytest.raises(InputError, match="joint_xz"):
        ms.conditional_pml(np.full((2, 2), 0.3), np.full((2, 2, 2), 0.5))


# --- [Saeidian-PML] Example 5 -------------------------------------------------------------------
UNIFORM4 = np.full(4, 0.25)
EX5_Y = np.array(
    [[0, 0, 1 / 2, 1 / 2], [0, 0, 1 / 2, 1 / 2], [0, 1 / 3, 1 / 3, 1 / 3], [1 / 3, 0, 1 / 3, 1 / 3]]
)
EX5_ZY = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)


def test_4_3_example5_channel_y():
    assert UNIFORM4 @ EX5_Y == approx([1 / 12, 1 / 12, 5 / 12, 5 / 12])
    assert ms.pml_per_output(UNIFORM4, EX5_Y) == approx([ln(4), ln(4), ln(6 / 5), ln(6 / 5)])
    # (ln 6/5, 1/6)-PML: the two ln 4 outputs have mass exactly 1/6
    assert ms.pml_tail_level(UNIFORM4, EX5_Y, 1 / 6) == approx(0.182321556794)
    assert ms.pml_tail_level(UNIFORM4, EX5_Y, 0.1) == approx(ln(4))


def test_4_3_example5_post_processing_breaks_tail_pml():
    w_z = Mechanism(EX5_Y).then(EX5_ZY).matrix
    assert w_z == approx(np.array([[1 / 2, 1 / 2], [1 / 2, 1 / 2], [1 / 3, 2 / 3], [2 / 3, 1 / 3]]))
    assert UNIFORM4 @ w_z == approx([0.5, 0.5])
    assert ms.pml_per_output(UNIFORM4, w_z) == approx([0.287682072452] * 2)  # ln 4/3
    assert ms.pml_level(UNIFORM4, w_z) == approx(0.287682072452)
    # not (ln 6/5, 1/6)-PML any more
    assert ms.pml_tail_level(UNIFORM4, w_z, 1 / 6) == approx(0.287682072452)
    assert ms.pml_tail_level(UNIFORM4, w_z, 1 / 6) > ln(6 / 5) + 0.1


def test_4_3_example5_lemma3_bound():
    assert ms.maximal_leakage(UNIFORM4, EX5_Y) == approx(0.510825623766)  # ln 5/3
    bound = cf.maximal_leakage_bound(ln(6 / 5), 1 / 6, ms.epsilon_max(UNIFORM4))
    assert bound == approx(0.624154309073)  # ln(1.2 + 4/6)
    assert ms.maximal_leakage(UNIFORM4, EX5_Y) <= bound


# --- [Saeidian-PML] Example 6 (EML) -------------------------------------------------------------
def test_4_4_example6_eml():
    reduced = np.array([[0, 0, 1], [0, 0, 1], [0, 1 / 3, 2 / 3], [1 / 3, 0, 2 / 3]])
    assert ms.eml_level(UNIFORM4, reduced, 1 / 6) == approx(0.875468737354)  # ln 12/5
    assert ms.eml_level(UNIFORM4, EX5_Y, 1 / 6) == approx(0.875468737354)
    w_z = EX5_Y @ EX5_ZY
    assert ms.eml_level(UNIFORM4, w_z, 1 / 6) == approx(0.287682072452)  # ln 4/3


# --- [Saeidian-PML] BSC(0.4) EML curve ----------------------------------------------------------
BSC = np.array([[0.6, 0.4], [0.4, 0.6]])


@pytest.mark.parametrize(
    "delta, exp_eps",
    [(0.0, 1.2), (0.1, 1.2), (0.3, 1.2), (0.5, 1.2), (0.6, 34 / 30), (0.9, 46 / 45), (1, 1)],
)
def test_4_5_bsc_eml_curve(delta, exp_eps):
    assert np.exp(ms.eml_level([0.5, 0.5], BSC, delta)) == approx(exp_eps)


def test_4_5_bsc_values():
    assert ms.eml_level([0.5, 0.5], BSC, 0.6) == approx(0.125163142954)
    for delta in [0.0, 0.1, 0.5, 0.6, 0.9, 0.999]:
        assert ms.pml_tail_level([0.5, 0.5], BSC, delta) == approx(0.182321556794)


# --- [Saeidian-PML] §IV-B zero-probability channel ----------------------------------------------
def test_4_6_zero_probability_channel():
    n = 5
    w = np.full((n, n), 1 / n)
    w[0] = [0] + [1 / (n - 1)] * (n - 1)
    p = np.full(n, 1 / n)
    pml = ms.pml_per_output(p, w)
    assert pml[0] == approx(0.223143551314)  # ln n/(n-1)
    assert pml[1:] == approx([0.174353387145] * (n - 1))  # ln n²/(n²-n+1)
    assert ms.ldp_level(p, w) == np.inf
    assert ms.information_privacy_level(p, w) == np.inf
    assert ms.ldi_level(p, w) == np.inf
    assert ms.leakage_capacity(w) == np.inf
    assert ms.pml_level(p, w) <= ms.epsilon_max(p)


# --- [Saeidian-PML] LIP remark ------------------------------------------------------------------
@pytest.mark.parametrize("q", [0.05, 0.2, 0.35, 0.49])
def test_4_7_binary_posterior(q):
    # posteriors (q, 1-q) and (1-q, q) with p_U = (1/2, 1/2): W[x,u] = p(x|u)
    w = np.array([[q, 1 - q], [1 - q, q]])
    assert ms.pml_per_output([0.5, 0.5], w) == approx([ln(2 * (1 - q))] * 2)


# --- [Saeidian-Rethinking] Example 3.11 / Figure 1 ------------------------------------------------
# the spec's table holds 7 significant digits: checked to that relative precision
THRESHOLD_TABLE = {
    (0.3, 200): [
        (0.10, 9.876888e-12, 7.878084e-11),
        (0.15, 6.516971e-07, 4.969931e-06),
        (0.20, 9.287457e-04, 5.837216e-03),
        (0.25, 7.208187e-02, 3.445486e-01),
        (0.28, 3.526353e-01, 1.739988e00),
    ],
    (0.3, 500): [
        (0.10, 4.400223e-27, 5.508730e-26),
        (0.15, 4.630376e-15, 5.506470e-14),
        (0.20, 2.694358e-07, 2.584328e-06),
        (0.25, 7.680210e-03, 4.694630e-02),
        (0.28, 1.950038e-01, 9.603208e-01),
    ],
    (0.3, 1000): [
        (0.10, 1.718340e-52, 3.034611e-51),
        (0.15, 1.811844e-28, 3.032121e-27),
        (0.20, 4.986259e-13, 6.678735e-12),
        (0.25, 2.598368e-04, 2.105480e-03),
        (0.28, 9.275093e-02, 4.796060e-01),
    ],
    (0.3, 2000): [
        (0.10, 3.691926e-103, 9.208862e-102),
        (0.15, 3.894540e-55, 9.193757e-54),
        (0.20, 2.370692e-24, 4.460550e-23),
        (0.25, 3.971504e-07, 4.423733e-06),
        (0.28, 2.674962e-02, 1.568179e-01),
    ],
    (0.5, 200): [
        (0.30, 7.535308e-09, 7.128530e-08),
        (0.35, 1.326447e-05, 1.072815e-04),
        (0.40, 2.846626e-03, 1.798670e-02),
        (0.45, 9.374163e-02, 4.577026e-01),
        (0.48, 3.715920e-01, 1.911269e00),
    ],
    (0.5, 500): [
        (0.30, 9.171233e-20, 1.356750e-18),
        (0.35, 9.513470e-12, 1.191938e-10),
        (0.40, 4.470043e-06, 4.242658e-05),
        (0.45, 1.426433e-02, 8.527723e-02),
        (0.48, 2.203417e-01, 1.109416e00),
    ],
    (0.5, 1000): [
        (0.30, 8.832839e-38, 1.840772e-36),
        (0.35, 8.078155e-22, 1.420715e-20),
        (0.40, 1.364232e-10, 1.799938e-09),
        (0.45, 8.656426e-04, 6.704230e-03),
        (0.48, 1.151013e-01, 5.964435e-01),
    ],
    (0.5, 2000): [
        (0.30, 1.151987e-73, 3.388440e-72),
        (0.35, 8.146749e-42, 2.018431e-40),
        (0.40, 1.752503e-19, 3.239777e-18),
        (0.45, 4.228554e-06, 4.464754e-05),
        (0.48, 3.940991e-02, 2.254090e-01),
    ],
}


@pytest.mark.parametrize("p, n", sorted(THRESHOLD_TABLE))
def test_4_8_threshold_query_table(p, n):
    for ratio, exact, bound in THRESHOLD_TABLE[(p, n)]:
        m = round(ratio * n)
        value = cf.threshold_query_pml(n, p, m)
        chernoff = cf.threshold_query_chernoff_bound(n, p, m)
        assert value == pytest.approx(exact, rel=6e-7)
        assert chernoff == pytest.approx(bound, rel=6e-7)
        assert value <= chernoff


def test_4_8_threshold_query_is_pml_of_deterministic_answer():
    # deterministic answer "K > m" on X = K ~ Bin(n, p): ℓ(X→1) = −ln P(K > m)
    n, p, m = 30, 0.3, 12
    prior = np.array([comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])
    w = np.zeros((n + 1, 2))
    w[np.arange(n + 1), (np.arange(n + 1) > m).astype(int)] = 1.0
    assert ms.pml_per_output(prior, w)[1] == approx(cf.threshold_query_pml(n, p, m))
    # deterministic mechanism: ℓ(X→y) = −ln p_Y(y)
    assert ms.pml_per_output(prior, w) == approx(-ln(prior @ w))


def test_4_8_threshold_and_chernoff_validation():
    assert -ln(0.7) == approx(0.356674943939)
    with pytest.raises(InputError):
        cf.threshold_query_chernoff_bound(100, 0.3, 40)


# --- [Saeidian-Rethinking] Prop 4.6 ---------------------------------------------------------------
def test_4_9_laplace_counting():
    assert cf.laplace_counting_pml_bound(10, 0.5, 0.3) == approx(0.135691979693)
    assert cf.laplace_counting_pml_sup(10, 0.5, 0.3) == approx(0.135691979693)
    assert cf.laplace_counting_pml_bound_simplified(10, 0.5, 0.3) == approx(0.1418)
    a = 1 / (10 * 0.5)
    assert a - ln(0.3 + 0.7 * np.exp(a)) == approx(0.0559153005537)  # y ≤ 0 branch
    assert cf.laplace_counting_pml_sup(10, 0.5, 0.5) == approx(0.0950083111784)
    assert cf.laplace_counting_pml_sup(50, 0.1, 0.2) == approx(0.156671819023)
    # symmetric in p ↔ 1-p, equal to the DP parameter at c = 0
    assert cf.laplace_counting_pml_sup(10, 0.5, 0.7) == approx(0.135691979693)
    assert cf.laplace_counting_pml_bound(10, 0.5, 0.0) == approx(0.2)


# =============================================================================================
# reference values
# =============================================================================================


# --- h and h^{-1} ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "eps, value",
    [(0, 1), (0.5, 0.755081337596), (log(2), 2 / 3), (1, 0.53788284274), (2, 0.238405844044)],
)
def test_5_1_h(eps, value):
    assert cf.h(eps, 2, 2) == approx(value)


@pytest.mark.parametrize(
    "D, value", [(0.25, 1.94591014906), (0.5, 1.09861228867), (2 / 3, 0.69314718056), (1, 0.0)]
)
def test_5_1_h_inv(D, value):
    assert cf.h_inv(D, 2, 2) == approx(value)
    assert cf.h(cf.h_inv(D, 2, 2), 2, 2) == approx(D)


def test_5_1_other_alphabets():
    assert cf.h(1, 3, 2) == approx(0.847766230468)
    assert cf.h_inv(0.5, 3, 2) == approx(1.79175946923)
    assert cf.h(0, 3, 2) == approx(4 / 3)
    assert cf.h(1.5, 3, 3) == approx(0.925684637891)


def test_5_1_h_vectorised_and_edges():
    eps = np.array([0.0, 0.5, 1.0])
    assert cf.h(eps, 2, 2) == approx([1, 0.755081337596, 0.53788284274])
    assert cf.h_inv(0.0, 2, 2) == np.inf
    # a subnormal budget: ln(n/D − 1) without overflowing n/D (found by the API fuzz)
    subnormal = 5e-324
    with np.errstate(over="raise", invalid="raise"):
        tiny = cf.h_inv(subnormal, 2, 3)
    assert tiny == approx(np.log(3.0) - np.log(subnormal))
    with pytest.raises(InputError):
        cf.h_inv(2.0, 2, 2)
    with pytest.raises(InputError):
        cf.h_inv(-0.1, 2, 2)
    with pytest.raises(InputError):
        cf.h(1.0, 1, 2)


def test_5_1_eq57_typo():
    n, m, eps = 2, 2, 1.0
    N = [comb(n, k) * (m - 1) ** k for k in range(n + 1)]
    Z = (1 + (m - 1) * np.exp(-eps)) ** n
    printed = sum(k * N[k] * np.exp(-(n - k) * eps) for k in range(n + 1)) / Z
    fixed = sum(k * N[k] * np.exp(-k * eps) for k in range(n + 1)) / Z
    assert printed == approx(1.46211715726)
    assert fixed == approx(cf.h(eps, m, n))


# --- exponential mechanism E_d ---------------------------------------------------------
PRIORS_22 = [np.full(4, 0.25), np.array([0.42, 0.18, 0.28, 0.12]), np.array([0.1, 0.2, 0.3, 0.4])]


def test_5_2_exponential_mechanism_ln2():
    mech = cf.exponential_mechanism(log(2), 2, 2)
    expected = np.array([[4, 2, 2, 1], [2, 4, 1, 2], [2, 1, 4, 2], [1, 2, 2, 4]]) / 9
    assert mech.matrix == approx(expected)
    assert mech.input_labels == mech.output_labels == ("00", "01", "10", "11")
    dist = Distortion.database_hamming(2, 2)
    for probs in PRIORS_22:
        prior = DatabasePrior(2, 2, probs=probs)
        assert ms.dp_level(prior, mech) == approx(log(2))
        assert ms.expected_distortion(prior, mech, dist) == approx(2 / 3)


def test_5_2_exponential_mechanism_eps1():
    mech = cf.exponential_mechanism(1.0, 2, 2)
    d = Distortion.database_hamming(2, 2).matrix
    values = {0: 0.534446645389, 1: 0.196611933241, 2: 0.072329488129}
    for (x, y), dxy in np.ndenumerate(d):
        assert mech.matrix[x, y] == approx(values[int(dxy)])
    for probs in PRIORS_22:
        prior = DatabasePrior(2, 2, probs=probs)
        assert ms.dp_level(prior, mech) == approx(1.0)
        assert ms.expected_distortion(prior, mech, Distortion.database_hamming(2, 2)) == approx(
            0.53788284274
        )


def test_5_2_exponential_kernel():
    r = np.exp(-1.0)
    kernel = cf.exponential_kernel(1.0, 3)
    assert kernel == approx(((1 - r) * np.eye(3) + r * np.ones((3, 3))) / (1 + 2 * r))
    assert kernel.sum(axis=1) == approx(np.ones(3))
    with pytest.raises(InputError):
        cf.exponential_mechanism(-0.1, 2, 2)


@pytest.mark.parametrize("eps, mi", [(1.0, 0.221888143343), (log(2), 0.113266024530)])
def test_5_2_uniform_prior_identifiability_equals_exponential(eps, mi):
    prior = DatabasePrior(2, 2, row_probs=[0.5, 0.5])
    e_i = cf.identifiability_mechanism(prior, eps)
    e_d = cf.exponential_mechanism(eps, 2, 2)
    assert e_i.matrix == approx(e_d.matrix)
    assert ms.mutual_information(prior, e_i) == approx(mi)
    assert cf.pdmip_value(prior, cf.h(eps, 2, 2)) == approx(mi)


# --- ε_X, ε̃_X, E_i ----------------------------------------------------------------------
P_42 = DatabasePrior(2, 2, probs=np.kron([0.6, 0.4], [0.7, 0.3]))
P_532 = DatabasePrior(3, 2, row_probs=[0.5, 0.3, 0.2])
P_MIXED = DatabasePrior(3, 2, probs=np.kron([0.5, 0.3, 0.2], [0.6, 0.25, 0.15]))
P_NONPRODUCT = DatabasePrior(2, 2, probs=[0.4, 0.1, 0.2, 0.3])
P_64_CUBED = DatabasePrior(2, 3, row_probs=[0.6, 0.4])


@pytest.mark.parametrize(
    "prior, eps_x, eps_tilde, h_tilde",
    [
        (P_42, 0.847297860387, 0.847297860387, 0.6),
        (P_532, 0.916290731874, 1.09861228867, 0.8),
        (P_MIXED, 1.38629436112, 1.54044504095, None),
        (P_NONPRODUCT, 1.38629436112, 1.90234065127, 0.259687576257),
        (P_64_CUBED, 0.405465108108, 0.405465108108, 1.2),
    ],
    ids=["(.6,.4)x(.7,.3)", "(.5,.3,.2)^2", "(.5,.3,.2)x(.6,.25,.15)", "non-product", "(.6,.4)^3"],
)
def test_5_3_epsilon_x_and_tilde(prior, eps_x, eps_tilde, h_tilde):
    assert cf.epsilon_x(prior) == approx(eps_x)
    assert cf.epsilon_tilde_x(prior) == approx(eps_tilde)
    if h_tilde is not None:
        assert cf.h(cf.epsilon_tilde_x(prior), prior.m, prior.n) == approx(h_tilde)


def test_5_3_closed_forms_of_the_table():
    assert cf.epsilon_x(P_42) == approx(log(7 / 3))
    assert cf.epsilon_tilde_x(P_532) == approx(log(3))
    assert cf.epsilon_tilde_x(P_MIXED) == approx(log(0.7 / 0.15))
    assert cf.epsilon_tilde_x(P_NONPRODUCT) == approx(-log((0.7 - np.sqrt(0.41)) / 0.4))


def test_5_3_epsilon_x_non_full_support_and_uniform():
    zero = DatabasePrior(2, 2, probs=[0.5, 0.5, 0.0, 0.0])
    assert cf.epsilon_x(zero) == np.inf
    assert cf.epsilon_tilde_x(zero) == np.inf
    uniform = DatabasePrior(3, 2, row_probs=[1 / 3] * 3)
    assert cf.epsilon_x(uniform) == approx(0.0)
    assert cf.epsilon_tilde_x(uniform) == approx(0.0)
    with pytest.raises(InfeasibleError):
        cf.identifiability_mechanism(zero, 1.0)
    with pytest.raises(InputError):
        cf.epsilon_x([0.25] * 4)


E_I_PY = [0.668246899597, 0.048148441776, 0.26454378315, 0.019060875476]
E_I_W = [
    [0.850338842336, 0.022539424334, 0.123839201505, 0.003282531825],
    [0.729918415625, 0.142959851045, 0.106301757905, 0.020819975425],
    [0.469233267187, 0.012437686242, 0.504944776654, 0.013384269916],
    [0.402782968261, 0.078887985169, 0.433437205268, 0.084891841302],
]


def test_5_3_identifiability_mechanism_at_eps1():
    assert cf.identifiability_output_pmf(P_42, 1.0) == approx(E_I_PY)
    mech = cf.identifiability_mechanism(P_42, 1.0)
    assert mech.matrix == approx(np.array(E_I_W))
    assert P_42.probs @ mech.matrix == approx(E_I_PY)
    assert ms.identifiability_level(P_42, mech) == approx(1.0)
    assert ms.dp_level(P_42, mech) == approx(1.847297860387)
    assert ms.dp_level(P_42, mech) == approx(1 + cf.epsilon_x(P_42))
    dist = Distortion.database_hamming(2, 2)
    assert ms.expected_distortion(P_42, mech, dist) == approx(0.53788284274)
    assert ms.mutual_information(P_42, mech) == approx(0.119469751288)
    assert cf.pdmip_value(P_42, cf.h(1.0, 2, 2)) == approx(0.119469751288)


def test_5_3_identifiability_mechanism_infeasible_below_tilde():
    p_y = cf.identifiability_output_pmf(P_42, 0.7)
    assert p_y == pytest.approx([0.8727, -0.0754, 0.2219, -0.0192], abs=5e-5)
    assert p_y.sum() == approx(1.0)
    with pytest.raises(InfeasibleError) as excinfo:
        cf.identifiability_mechanism(P_42, 0.7)
    assert excinfo.value.least_achievable == approx(0.847297860387)
    assert excinfo.value.quantity == "epsilon"
    with pytest.raises(InputError):
        cf.identifiability_output_pmf(P_42, 0.0)


# --- PD-MIP closed form ----------------------------------------------------------------
@pytest.mark.parametrize(
    "prior, D, value",
    [
        (P_42, 0.2, 0.633710022281),
        (P_42, 0.3, 0.438457793452),
        (P_42, 0.53788284274, 0.119469751288),
        (P_42, 0.6, 0.0621473649544),
        (P_NONPRODUCT, 0.2, 0.629688279051),
        (P_532, 0.2, 1.27051064523),
        (P_532, 0.3, 1.00594369835),
        (P_532, 0.8, 0.158764949663),
        (DatabasePrior(2, 2, row_probs=[0.5, 0.5]), 0.2, 0.736128414337),
        (DatabasePrior(2, 2, row_probs=[0.5, 0.5]), 0.3, 0.540876185508),
        (DatabasePrior(2, 2, row_probs=[0.5, 0.5]), 0.75, 0.0631678848039),
    ],
)
def test_5_4_pdmip_value(prior, D, value):
    assert cf.pdmip_value(prior, D) == approx(value)


def test_5_4_pdmip_entropy_and_range():
    p = P_42.probs
    assert -np.sum(p * ln(p)) == approx(1.28387596906)
    assert cf.pdmip_valid_range(P_42) == approx((0.0, 0.6))
    assert cf.pdmip_valid_range(P_NONPRODUCT) == approx((0.0, 0.259687576257))


def test_5_4_pdmip_outside_range_strict():
    with pytest.raises(InputError) as excinfo:
        cf.pdmip_value(P_42, 0.75)
    assert excinfo.value.field == "max_distortion"
    assert cf.pdmip_value(P_42, 0.75, strict=False) == pytest.approx(-0.039, abs=5e-4)
    with pytest.raises(InputError):
        cf.pdmip_value(P_NONPRODUCT, 0.3)
    assert cf.pdmip_value(P_NONPRODUCT, 0.3, strict=False) == approx(0.434436050222)


def test_5_4_pdmip_attained_by_identifiability_mechanism():
    for prior, D in [(P_42, 0.3), (P_532, 0.3), (P_NONPRODUCT, 0.2)]:
        eps = cf.h_inv(D, prior.m, prior.n)
        mech = cf.identifiability_mechanism(prior, eps)
        dist = Distortion.database_hamming(prior.m, prior.n)
        assert ms.expected_distortion(prior, mech, dist) == approx(D)
        assert ms.mutual_information(prior, mech) == approx(cf.pdmip_value(prior, D))


# --- PML family on one reference channel -----------------------------------------------
P55 = np.array([0.5, 0.3, 0.2])
W55 = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])


def test_5_5_pml_and_maximal_leakage():
    assert P55 @ W55 == approx([0.33, 0.34, 0.33])
    assert ms.pml_per_output(P55, W55) == approx([0.41551544396, 0.38566248081, 0.75198768058])
    assert ms.pml_level(P55, W55) == approx(0.751987680583)
    assert ms.epsilon_max(P55) == approx(1.609437912434)
    assert ms.maximal_leakage(P55, W55) == approx(0.530628251062)
    assert ms.maximal_leakage(P55, W55) == approx(log(1.7))


@pytest.mark.parametrize(
    "delta, pml, eml",
    [
        (0.0, 0.751987680583, 0.751987680583),
        (0.1, 0.751987680583, 0.751987680583),
        (0.2, 0.751987680583, 0.751987680583),
        (0.3, 0.751987680583, 0.751987680583),
        (0.5, 0.415515443962, 0.470003629246),
    ],
)
def test_5_5_tail_and_eml_levels(delta, pml, eml):
    assert ms.pml_tail_level(P55, W55, delta) == approx(pml)
    assert ms.eml_level(P55, W55, delta) == approx(eml)


def test_5_5_eml_half_is_ln_1_6():
    assert ms.eml_level(P55, W55, 0.5) == approx(log(1.6))


def test_5_5_ldp_lip_ldi_mi():
    assert ms.ldp_level(P55, W55) == approx(1.609437912434)
    assert ms.leakage_capacity(W55) == approx(1.609437912434)
    assert ms.information_privacy_level(P55, W55) == approx(1.193922468472)
    assert ms.ldi_level(P55, W55) == approx(2.525728644308)
    assert ms.mutual_information(P55, W55) == approx(0.114426495290)
    assert ms.mutual_information(P55, W55, unit="bits") == approx(0.114426495290 / log(2))
    expected_pml = (P55 @ W55) @ ms.pml_per_output(P55, W55)
    assert expected_pml == approx(0.516401274576)


def test_5_5_bounds_from_ldp_and_ldi():
    p_min = P55.min()
    assert cf.pml_bound_from_ldp(ms.ldp_level(P55, W55), p_min) == approx(1.021651247532)
    assert cf.pml_bound_from_ldi(ms.ldi_level(P55, W55), p_min, 3) == approx(1.461017907316)


def test_5_5_per_output_information_leakage():
    terms = ms.information_leakage_per_output(P55, W55)
    assert terms == approx([0.339471113149, 0.055842003494, -0.050258343142])
    assert ms.max_information_leakage(P55, W55) == approx(0.339471113149)
    assert ms.information_leakage_per_output(P55, W55, unit="bits") == approx(terms / log(2))


@pytest.mark.parametrize(
    "eps, value", [(0.5, 0.21907019638), (1.0, 0.379885493042), (2.0, 0.566219169517)]
)
def test_5_5_prop6_tightness_randomised_response(eps, value):
    rr = np.array([[np.exp(eps), 1], [1, np.exp(eps)]]) / (1 + np.exp(eps))
    assert ms.pml_level([0.5, 0.5], rr) == approx(value)
    assert ms.pml_level([0.5, 0.5], rr) == approx(log(2 * np.exp(eps) / (1 + np.exp(eps))))
    assert cf.pml_bound_from_ldp(eps, 0.5) == approx(value)
    assert ms.ldp_level([0.5, 0.5], rr) == approx(eps)


def test_5_5_prop6_tightness_skewed_prior():
    rr = np.array([[np.e, 1], [1, np.e]]) / (1 + np.e)
    assert ms.pml_level([0.2, 0.8], rr) == approx(0.70460547088)
    assert cf.pml_bound_from_ldp(1.0, 0.2) == approx(0.70460547088)


# --- leakage capacity and [Saeidian-Rethinking] items ---------------------------------------------
def test_5_6_leakage_capacity():
    assert ms.leakage_capacity(W55) == approx(1.60943791243)
    assert ms.leakage_capacity(Mechanism(W55)) == approx(log(5))


@pytest.mark.parametrize(
    "t, value", [(1e-2, 1.58474529984), (1e-4, 1.60918794368), (1e-6, 1.60943541244)]
)
def test_5_6_concentrated_priors_approach_capacity(t, value):
    best = 0.0
    for y in range(3):
        prior = np.full(3, t / 2)
        prior[np.argmin(W55[:, y])] = 1 - t
        best = max(best, ms.pml_level(prior, W55))
    assert best == approx(value)
    assert best < ms.leakage_capacity(W55)


@pytest.mark.parametrize(
    "alpha, values",
    [(0.1, (0.223143551314, 0.083381608939)), (0.01, (0.223143551314, 0.008032171697))],
)
def test_5_6_prop_3_8_mechanism(alpha, values):
    x_min = int(np.argmin(P55))
    w = np.zeros((3, 2))
    w[:, 0] = [alpha if x != x_min else 0.0 for x in range(3)]
    w[:, 1] = 1 - w[:, 0]
    pml = ms.pml_per_output(P55, w)
    assert pml == approx(values)
    p_min = P55.min()
    assert pml[0] == approx(log(1 / (1 - p_min)))
    assert pml[1] == approx(log(1 / (1 - alpha * (1 - p_min))))
    assert ms.leakage_capacity(w) == np.inf


# --- [Calmon-Fawaz] programs: closed forms only -------------------------------------------------
@pytest.mark.parametrize(
    "delta, value", [(0.1, 0.704214597221), (0.3, 0.279803832445), (0.5, 0.058891517828)]
)
def test_5_7_rate_distortion_uniform(delta, value):
    assert cf.rate_distortion_hamming_uniform(3, delta) == approx(value)


def test_5_7_rate_distortion_edges():
    assert cf.rate_distortion_hamming_uniform(3, 0.0) == approx(log(3))
    assert cf.rate_distortion_hamming_uniform(3, 2 / 3) == approx(0.0)
    assert cf.rate_distortion_hamming_uniform(3, 0.9) == 0.0


def counting_query_prior(n: int = 4, p: float = 0.3) -> JointPrior:
    """S ∈ {0,1}^n i.i.d. Bernoulli(p), Y = number of ones."""
    states = np.array(list(itertools.product([0, 1], repeat=n)))
    p_s = np.prod(np.where(states == 1, p, 1 - p), axis=1)
    joint = np.zeros((2**n, n + 1))
    joint[np.arange(2**n), states.sum(axis=1)] = p_s
    return JointPrior(joint)


def test_5_7_counting_query_zeta():
    prior = counting_query_prior()
    assert cf.zeta(prior) == approx(np.array([1, 4, 6, 4, 1]) / 16)
    assert cf.zeta(counting_query_prior(4, 0.5)) == approx(np.array([1, 4, 6, 4, 1]) / 16)
    with pytest.raises(InputError):
        cf.zeta([0.5, 0.5])


def test_5_7_counting_query_entropy_and_constant_output():
    prior = counting_query_prior()
    p_s = prior.p_s
    assert -np.sum(p_s * ln(p_s)) == approx(2.44345720822)
    p_y = prior.p_y
    assert p_y == approx([comb(4, k) * 0.3**k * 0.7 ** (4 - k) for k in range(5)])
    zeta = cf.zeta(prior)
    assert np.sum(p_y * ln(p_y / zeta)) == approx(0.32913151402)
    assert 4 * log(2) - 4 * cf.binary_entropy(0.3) == approx(0.32913151402)
    # D*(0) closed form: min_u E|u − Y|
    assert min(np.sum(p_y * np.abs(np.arange(5) - u)) for u in range(5)) == approx(0.6802)
    # a constant output leaks nothing
    constant = np.ones((5, 1))
    assert ms.mutual_information(prior, constant) == approx(0.0)
    assert ms.max_information_leakage(prior, constant) == approx(0.0)


def test_5_7_counting_query_identity_40():
    """H(S) − H(S|U=u) = H(S) + D(p_{Y|U=u} ‖ ζ) − ln Σ_y e^{H(S|Y=y)} (eqs (38)–(40))."""
    prior = counting_query_prior()
    p_y, zeta = prior.p_y, cf.zeta(prior)
    h_s = -np.sum(prior.p_s * ln(prior.p_s))
    rng = np.random.default_rng(11)
    for _ in range(20):
        w = rng.dirichlet(np.ones(3), size=5)
        p_u = p_y @ w
        post = p_y[:, None] * w / p_u  # p(y|u)
        kl = np.sum(post * ln(post / zeta[:, None]), axis=0)
        expected = h_s + kl - ln(16)  # Σ_y C(4,y) = 16
        assert ms.information_leakage_per_output(prior, w) == pytest.approx(expected, abs=1e-12)
        # Y = f(S): I(S;U) = I(Y;U)
        assert ms.mutual_information(prior, w) == pytest.approx(
            ms.mutual_information(p_y, w), abs=1e-12
        )


# --- [Calmon-Fawaz] Theorem 3 counterexample and Theorem 4 --------------------------------------
def test_5_8_theorem3_counterexample():
    K, eps = 10**4, 0.1
    p_s = np.concatenate([[0.5], np.full(K, 1 / (2 * K))])
    q1 = np.concatenate([[0.5 * (2 - np.exp(-eps))], np.full(K, np.exp(-eps) / (2 * K))])
    q2 = 2 * p_s - q1
    p_u = np.array([0.5, 0.5])
    w = np.column_stack([q1 * p_u[0] / p_s, q2 * p_u[1] / p_s])  # W[s,u] = p(s|u)p(u)/p(s)
    assert w.sum(axis=1) == approx(np.ones(K + 1))
    assert p_s @ w == approx(p_u)
    assert ms.information_privacy_level(p_s, w) == approx(0.1)
    terms = ms.information_leakage_per_output(p_s, w)
    assert terms == approx([0.442774702798, -0.433705067767])
    assert ms.max_information_leakage(p_s, w) == approx(0.442774702798)
    assert ms.mutual_information(p_s, w) == approx(0.004534817516)
    # Theorem 3 proper: I ≤ ε and 2ε-LDP; the "max leakage ≤ ε" side claim fails
    assert ms.mutual_information(p_s, w) <= 0.1
    assert ms.ldp_level(p_s, w) <= 2 * 0.1 + TOL
    assert ms.max_information_leakage(p_s, w) > 0.1


@pytest.mark.parametrize(
    "eps, k, n, bound, alpha",
    [
        (1.0, 10, 1000, 5.613348807, 0.993262053001),
        (0.5, 20, 2000, 5.613348807, 0.993262053001),  # same kε and n/k
        (2.0, 5, 500, 5.613348807, 0.993262053001),
        (1.0, 4, 400, 4.757120546, 1 - np.exp(-2)),
    ],
)
def test_5_8_theorem4_bound(eps, k, n, bound, alpha):
    value = cf.dp_mutual_information_lower_bound(eps, k, n)
    assert value == pytest.approx(bound, abs=1e-9)
    assert value == approx(alpha * np.log2(1 + n / k) - 1)
    assert 1 - np.exp(-k * eps / 2) == approx(alpha)


def test_5_8_theorem4_log2_101():
    assert np.log2(101) == approx(6.658211483)
    assert cf.dp_mutual_information_lower_bound(1.0, 10, 1000) < np.log2(101)


# --- non-convexity certificates (uniform binary prior) ---------------------------------
UNIFORM2 = np.array([0.5, 0.5])


def test_5_9_tail_pml_not_convex():
    w1 = np.array([[0.2, 0, 0.8], [0, 0, 1]])
    w2 = np.array([[0.6, 0, 0.4], [0.4, 0, 0.6]])
    mid = (w1 + w2) / 2
    eps, delta = log(1.2), 0.1
    assert ms.pml_tail_level(UNIFORM2, w1, delta) == approx(log(10 / 9))
    assert ms.pml_tail_level(UNIFORM2, w2, delta) == approx(log(1.2))
    assert UNIFORM2 @ mid == approx([0.3, 0.0, 0.7])
    assert ms.pml_per_output(UNIFORM2, mid)[0] == approx(log(4 / 3))
    assert ms.pml_tail_level(UNIFORM2, mid, delta) == approx(log(4 / 3))
    assert ms.pml_tail_level(UNIFORM2, w1, delta) <= eps + TOL
    assert ms.pml_tail_level(UNIFORM2, w2, delta) <= eps + TOL
    assert ms.pml_tail_level(UNIFORM2, mid, delta) > eps


def test_5_9_eml_not_quasiconvex():
    a = np.array([[1, 0, 0], [0.8, 0.2, 0]])
    b = np.array([[0.7, 0.2, 0.1], [0.3, 0.5, 0.2]])
    mid = (a + b) / 2
    assert mid == approx(np.array([[0.85, 0.1, 0.05], [0.55, 0.35, 0.1]]))
    level_a = ms.eml_level(UNIFORM2, a, 0.2)
    level_b = ms.eml_level(UNIFORM2, b, 0.2)
    level_mid = ms.eml_level(UNIFORM2, mid, 0.2)
    assert level_a == approx(0.367724780125)  # ln 13/9
    assert level_b == approx(0.356674943939)  # ln 10/7
    assert level_mid == approx(0.441832752279)  # ln 14/9
    assert level_mid > max(level_a, level_b)


# --- [Bon-Persuasive] persuasive privacy ---------------------------------------------------------
W_PDP = np.array([[0.5, 0.3, 0.15, 0.05], [0.35, 0.35, 0.2, 0.1]])


@pytest.mark.parametrize("eps, probs", [(0.2, (0.5, 0.7)), (0.4, (1.0, 0.9)), (0.8, (1.0, 1.0))])
def test_5_10_pdp_equals_pp_with_two_point_priors(eps, probs):
    priors = ms.neighbor_pair_priors(2, weight=1e-6)
    for x in range(2):
        q = priors[x]
        assert q[x] == 1e-6  # the prior puts weight w on x
        pp = 1 - ms.persuasive_privacy_delta(W_PDP, [q], eps)
        assert pp == approx(probs[x])
        # the PDP probability P_{T~W[x]}[W[x,T] ≤ e^ε W[x',T]]
        pdp = W_PDP[x][W_PDP[x] <= np.exp(eps) * W_PDP[1 - x]].sum()
        assert pp == approx(pdp)
    assert ms.persuasive_privacy_delta(W_PDP, priors, eps) == approx(1 - min(probs))


def test_5_10_pp_larger_at_half_weight():
    # at w = 1/2 the probability is at least as large, and strictly larger somewhere
    strictly = False
    for eps in (0.2, 0.4, 0.8):
        small = ms.neighbor_pair_priors(2, weight=1e-6)
        half = ms.neighbor_pair_priors(2, weight=0.5)
        for x in range(2):
            p_small = 1 - ms.persuasive_privacy_delta(W_PDP, [small[x]], eps)
            p_half = 1 - ms.persuasive_privacy_delta(W_PDP, [half[x]], eps)
            assert p_half >= p_small - TOL
            strictly |= p_half > p_small + 1e-3
    assert strictly


def test_5_10_pp_level_approaches_dp_level():
    priors = ms.neighbor_pair_priors(2, weight=1e-9)
    dp = ms.dp_level([0.5, 0.5], W_PDP)
    assert ms.persuasive_privacy_level(W_PDP, priors) == pytest.approx(dp, abs=1e-8)
    assert ms.persuasive_privacy_level(W_PDP, priors) <= dp


def test_5_10_pp_single_prior_equals_pml_on_random_channels():
    rng = np.random.default_rng(5)
    for _ in range(20):
        size, outputs = rng.integers(2, 6), rng.integers(2, 6)
        prior = rng.dirichlet(np.ones(size))
        w = rng.dirichlet(np.ones(outputs), size=size)
        w[rng.random(w.shape) < 0.2] = 0.0
        w[:, 0] += 1e-3
        w /= w.sum(axis=1, keepdims=True)
        assert ms.persuasive_privacy_level(w, [prior]) == approx(ms.pml_level(prior, w))
        assert ms.persuasive_privacy_delta(w, [prior], ms.pml_level(prior, w)) == 0.0


def test_5_10_pp_and_tail_pml_differ():
    # 1: the channel [[.3,.1,.6],[.1,.3,.6]] with a uniform prior at κ = ln 1.2
    # needs δ_PML = 0.4 but δ_PP = 0.3; Example 5 needs δ_PML = 1/6 but δ_PP = 1/3
    w = np.array([[0.3, 0.1, 0.6], [0.1, 0.3, 0.6]])
    kappa = log(1.2)
    assert ms.persuasive_privacy_delta(w, [UNIFORM2], kappa) == approx(0.3)
    assert ms.pml_tail_level(UNIFORM2, w, 0.4) <= kappa + TOL
    assert ms.pml_tail_level(UNIFORM2, w, 0.39) > kappa
    assert ms.persuasive_privacy_delta(EX5_Y, [UNIFORM4], kappa) == approx(1 / 3)
    assert ms.pml_tail_level(UNIFORM4, EX5_Y, 1 / 6) <= kappa + TOL
    assert ms.pml_tail_level(UNIFORM4, EX5_Y, 1 / 6 - 1e-3) > kappa


# --- units and argument checks --------------------------------------------------------------
def test_units():
    nats = ms.pml_level(P55, W55)
    assert ms.pml_level(P55, W55, unit="bits") == approx(nats / log(2))
    assert ms.pml_level(P55, W55, unit="nats") == nats
    assert ms.epsilon_max(P55, unit="bits") == approx(np.log2(5))
    assert ms.maximal_leakage(P55, W55, unit="bits") == approx(np.log2(1.7))
    assert ms.pml_per_output(P55, W55, unit="bits") == approx(ms.pml_per_output(P55, W55) / log(2))
    assert ms.to_bits(log(2)) == approx(1.0)
    with pytest.raises(InputError) as excinfo:
        ms.pml_level(P55, W55, unit="dits")
    assert excinfo.value.field == "unit"


@pytest.mark.parametrize("delta", [-0.1, 1.5, float("nan")])
def test_delta_validation(delta):
    with pytest.raises(InputError) as excinfo:
        ms.pml_tail_level(P55, W55, delta)
    assert excinfo.value.field == "delta"
    with pytest.raises(InputError):
        ms.eml_level(P55, W55, delta)
    with pytest.raises(InputError):
        ms.persuasive_privacy_level(W55, [P55], delta)


def test_measures_accept_prior_objects_and_mechanisms():
    from privopt import Prior

    mech = Mechanism(W55)
    assert ms.pml_level(Prior(P55), mech) == approx(0.751987680583)
    assert ms.mutual_information(Prior(P55), mech) == approx(0.114426495290)


def test_joint_prior_measures_use_induced_channel():
    joint = np.array([[0.3, 0.1, 0.0], [0.0, 0.2, 0.4]])
    prior = JointPrior(joint)
    w = np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8]])
    channel = prior.p_y_given_s @ w
    assert ms.pml_level(prior, w) == approx(ms.pml_level(prior.p_s, channel))
    assert ms.mutual_information(prior, w) == approx(ms.mutual_information(prior.p_s, channel))
    assert ms.maximal_leakage(prior, w) == approx(ms.maximal_leakage(prior.p_s, channel))
    assert ms.ldp_level(prior, w) == approx(ms.ldp_level(prior.p_s, channel))
    assert ms.information_privacy_level(prior, w) == approx(
        ms.information_privacy_level(prior.p_s, channel)
    )
    d = Distortion.absolute(values=[0.0, 1.0, 2.0]).matrix[:, [0, 2]]
    assert ms.expected_distortion(prior, w, d) == approx(np.sum(prior.p_y[:, None] * w * d))


# --- regressions: outputs of negligible mass and tiny δ -------------------------------------
def test_tail_level_at_delta0_counts_outputs_of_tiny_mass():
    # output 0 has mass 5e-14 > 0 and leaks ln 2: at δ = 0 it must count
    w = np.array([[1e-13, 1 - 1e-13], [0.0, 1.0]])
    assert ms.pml_level(UNIFORM2, w) == approx(log(2))
    assert ms.pml_tail_level(UNIFORM2, w, 0.0) == approx(log(2))
    assert ms.pml_tail_level(UNIFORM2, w, 1e-14) == approx(log(2))
    assert ms.pml_tail_level(UNIFORM2, w, 1e-13) == approx(0.0)
    # (L, {P_X}, κ, 0)-PP ⇔ κ-PML
    assert ms.persuasive_privacy_level(w, [UNIFORM2]) == approx(log(2))


def test_eml_level_tiny_delta():
    # δ far below every output mass: h_x(δ) is the largest ratio, i.e. the PML level
    p = np.array([0.0, 0.0, 0.0, 0.4, 0.6])
    w = np.array([[1, 0], [1, 0], [1, 0], [1, 0], [0, 1]], dtype=float)
    for delta in (5e-324, 1e-310, 1e-200, 1e-16):
        assert ms.eml_level(p, w, delta) == approx(log(2.5))
    # δ above the mass of the leakiest output: the knapsack must spill onto the next output
    w = np.array([[1e-20, 1 - 1e-20], [0.0, 1.0]])
    ratio_1 = (1 - 1e-20) / (1 - 5e-21)
    h = (1e-20 + (1e-16 - 5e-21) * ratio_1) / 1e-16
    assert ms.eml_level(UNIFORM2, w, 1e-16) == pytest.approx(log(h), rel=1e-6)
    assert ms.eml_level(UNIFORM2, w, 1e-16) < ms.eml_level(UNIFORM2, w, 1e-21)


def test_identifiability_mechanism_near_uniform_prior_at_epsilon_tilde():
    # P_ε⁻¹ is ill-conditioned here: rounding alone pushed p_Y below −1e-12 just above ε̃_X
    prior = DatabasePrior(2, 3, row_probs=[0.49411765, 0.50588235])
    tilde = cf.epsilon_tilde_x(prior)
    assert tilde == approx(log(0.50588235 / 0.49411765))
    for eps in (tilde, tilde * (1 + 1e-6) + 1e-9):
        mech = cf.identifiability_mechanism(prior, eps)
        assert ms.identifiability_level(prior, mech) == approx(eps)
        dist = Distortion.database_hamming(2, 3)
        assert ms.expected_distortion(prior, mech, dist) == approx(cf.h(eps, 2, 3))
    with pytest.raises(InfeasibleError):
        cf.identifiability_mechanism(prior, tilde * (1 - 1e-6))
