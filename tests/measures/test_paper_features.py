"""The papers' notions and tools as library functions, checked against the papers' numbers,
brute force and independent computations written here."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import privopt as po
from privopt import closed_forms as CF
from privopt import counting, disclosure, f_information, gain, guarantees, persuasive
from privopt import measures as M
from privopt.errors import InputError

LN = np.log
P_REF = np.array([0.5, 0.3, 0.2])
W_REF = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
U4 = np.full(4, 0.25)
EX5 = np.array(
    [[0, 0, 1 / 2, 1 / 2], [0, 0, 1 / 2, 1 / 2], [0, 1 / 3, 1 / 3, 1 / 3], [1 / 3, 0, 1 / 3, 1 / 3]]
)
BSC = np.array([[0.6, 0.4], [0.4, 0.6]])


def _random_case(rng, zeros=False):
    k, n = rng.integers(2, 6, 2)
    p = rng.dirichlet(np.ones(k))
    W = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0, 5.0])), size=k)
    if zeros:
        W[rng.random(W.shape) < 0.2] = 0.0
        W[W.sum(axis=1) == 0, 0] = 1.0
        W /= W.sum(axis=1, keepdims=True)
    return p, W


# --- [Saeidian-PML] Section IV: f-information, TV, approximate max-information ------------
def test_reference_channel_information_measures():
    assert f_information.total_variation_privacy(P_REF, W_REF) == pytest.approx(0.207, abs=1e-12)
    assert f_information.chi_square_information(P_REF, W_REF) == pytest.approx(
        0.237076648841, abs=1e-11
    )
    assert f_information.expected_pml(P_REF, W_REF) == pytest.approx(0.516401274576, abs=1e-11)
    ami = f_information.approximate_max_information
    assert ami(P_REF, W_REF, 0.05) == pytest.approx(0.386527907088, abs=1e-11)
    assert ami(P_REF, W_REF, 0.1) == pytest.approx(0.278632236932, abs=1e-11)
    assert ami(P_REF, W_REF, 0.0) == pytest.approx(M.pml_level(P_REF, W_REF), abs=1e-12)
    kl = f_information.f_information(
        P_REF, W_REF, lambda t: np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0)
    )
    assert kl == pytest.approx(M.mutual_information(P_REF, W_REF), abs=1e-14)
    with pytest.raises(InputError, match="f"):
        f_information.f_information(P_REF, W_REF, lambda t: t)


def _brute_force_ami(p, W, delta):
    joint = (p[:, None] * W).ravel()
    prod = (p[:, None] * (p @ W)[None, :]).ravel()
    best = -np.inf
    cells = np.flatnonzero(prod > 0)
    for r in range(1, cells.size + 1):
        for E in itertools.combinations(cells, r):
            E = list(E)
            if joint[E].sum() >= delta:
                best = max(best, (joint[E].sum() - delta) / prod[E].sum())
    return np.log(best)


def test_approximate_max_information_brute_force_and_prop5():
    rng = np.random.default_rng(12)
    for _ in range(25):
        k, n = rng.integers(2, 4), rng.integers(2, 4)
        p = rng.dirichlet(np.ones(k))
        W = rng.dirichlet(np.ones(n), size=k)
        for delta in (0.0, 0.03, 0.2, 0.6):
            got = f_information.approximate_max_information(p, W, delta)
            assert got == pytest.approx(_brute_force_ami(p, W, delta), abs=1e-10)
            # Prop. 5: (ε, δ)-PML ⇒ I_∞^δ ≤ ε
            assert got <= M.pml_tail_level(p, W, delta) + 1e-12
            # the hockey-stick characterisation
            assert f_information.hockey_stick_divergence(p, W, got) == pytest.approx(
                delta, abs=1e-10
            ) or (delta == 0 and f_information.hockey_stick_divergence(p, W, got) < 1e-12)


def test_props_7_to_9_on_random_channels():
    rng = np.random.default_rng(7)
    for _ in range(300):
        p, W = _random_case(rng, zeros=True)
        eps_max = M.epsilon_max(p)
        mi, tv = M.mutual_information(p, W), f_information.total_variation_privacy(p, W)
        assert mi <= f_information.expected_pml(p, W) + 1e-12  # Prop. 7
        chi2 = f_information.chi_square_information(p, W)
        assert (
            chi2 <= f_information.f_information_pml_bound(p, W, lambda t: (t - 1) ** 2, 1.0) + 1e-12
        )  # Prop. 8 with χ²
        assert tv <= f_information.total_variation_pml_bound(p, W) + 1e-12  # eq. (26)
        assert tv <= f_information.total_variation_maximal_leakage_bound(p, W) + 1e-12  # Prop 9
        for delta in (0.0, 0.1, 0.3):
            eps = M.pml_tail_level(p, W, delta)
            assert mi <= f_information.mutual_information_tail_bound(eps, delta, eps_max) + 1e-12
            assert tv <= f_information.total_variation_tail_bound(eps, delta, eps_max) + 1e-12


# --- least δ and composition ([Saeidian-PML] Defs 5, 11, Theorems 3–4) ---------------------
def test_least_delta_paper_examples():
    assert guarantees.pml_least_delta(U4, EX5, LN(6 / 5)) == pytest.approx(1 / 6, abs=1e-14)
    assert guarantees.eml_least_delta(U4, EX5, LN(12 / 5)) == pytest.approx(1 / 6, abs=1e-12)
    u2 = [0.5, 0.5]
    assert guarantees.eml_least_delta(u2, BSC, LN(17 / 15)) == pytest.approx(0.6, abs=1e-12)
    assert guarantees.eml_least_delta(u2, BSC, LN(1.2)) == 0.0
    assert guarantees.eml_least_delta(u2, BSC, 0.0) == pytest.approx(1.0)
    assert guarantees.pml_least_delta(P_REF, W_REF, 0.5) == pytest.approx(0.33, abs=1e-12)


def test_least_delta_inverts_the_levels():
    rng = np.random.default_rng(3)
    for _ in range(200):
        p, W = _random_case(rng, zeros=True)
        eps = rng.uniform(0, 1.5)
        d_eml = guarantees.eml_least_delta(p, W, eps)
        assert M.eml_level(p, W, d_eml) <= eps + 1e-9
        if d_eml > 1e-6:  # least: any smaller δ breaks the level
            assert M.eml_level(p, W, d_eml * (1 - 1e-6)) > eps - 1e-12
        d_pml = guarantees.pml_least_delta(p, W, eps)
        assert M.pml_tail_level(p, W, d_pml) <= eps + 1e-12
        if d_pml > 0:
            assert M.pml_tail_level(p, W, d_pml * (1 - 1e-9)) > eps


def test_theorem4_composition_on_random_pairs():
    rng = np.random.default_rng(4)
    for _ in range(100):
        k = rng.integers(2, 5)
        p = rng.dirichlet(np.ones(k))
        W1 = rng.dirichlet(np.ones(3), size=k)
        W2 = rng.dirichlet(np.ones(3), size=k)  # Z independent of Y given X (non-adaptive)
        pair = np.einsum("xy,xz->xyz", W1, W2).reshape(k, 9)
        e1, e2 = M.pml_level(p, W1), None
        # conditional PML of Z given each y: the prior is p(x|y)
        post = p[:, None] * W1 / (p @ W1)[None, :]
        e2 = max(M.pml_level(post[:, y], W2) for y in range(3))
        assert M.pml_level(p, pair) <= CF.adaptive_composition_pml(e1, e2) + 1e-12  # Thm 4(1)
        eps, delta = CF.adaptive_composition_eml(0.2, 0.1, 0.3, 0.05, M.epsilon_max(p))
        assert delta == pytest.approx(0.15)
        assert eps == pytest.approx(
            np.log(0.05 / 0.15 * np.exp(M.epsilon_max(p)) + np.exp(0.5)), abs=1e-14
        )
    assert CF.adaptive_composition_pml_delta(0.1, 0.2, 0.3, 0.5) == pytest.approx((0.4, 0.6))
    assert CF.adaptive_composition_eml_pml(0.1, 0.2, 0.3) == pytest.approx((0.4, 0.2))
    # Theorem 4(5): δ₁ + δ₂ above 1 is capped (every mechanism is (ε, 1)-EML); with
    # δ₁ = δ₂ = 0 it is part 1 (the two theorems were once written twice and disagreed)
    assert CF.adaptive_composition_eml(1.0, 0.7, 1.0, 0.6, 2.0)[1] == 1.0
    assert CF.adaptive_composition_eml(0.1, 0.0, 0.3, 0.0, 2.0) == pytest.approx((0.4, 0.0))


# --- [Saeidian-PML] Section II-B: gain functions ------------------------------------------
def test_gain_view_theorem2_corollary1():
    assert np.allclose(
        gain.g_leakage_per_output(P_REF, W_REF, gain.pml_gain(P_REF)),
        [0.41551544396, 0.38566248081, 0.75198768058],
        atol=1e-10,
    )
    # Example 1: dynamic min-entropy leakage ln max p(x|y) / max p(x)
    post = P_REF[:, None] * W_REF / (P_REF @ W_REF)[None, :]
    assert np.allclose(
        gain.g_leakage_per_output(P_REF, W_REF, gain.identity_gain(3)),
        np.log(post.max(axis=0) / P_REF.max()),
        atol=1e-14,
    )
    rng = np.random.default_rng(9)
    for _ in range(100):
        p, W = _random_case(rng)
        g = rng.random((p.size, 4)) * (rng.random((p.size, 4)) < 0.7)
        if (p @ g).max() == 0:
            continue
        lg = gain.g_leakage_per_output(p, W, g)
        assert (lg <= M.pml_per_output(p, W) + 1e-12).all()  # Corollary 1
        for y in range(W.shape[1]):  # Theorem 2, converse
            K = gain.randomized_function_of_gain(p, W, g, y)
            assert np.allclose(K.sum(axis=1), 1) and (K >= 0).all()
            assert gain.randomized_function_leakage_per_output(p, W, K)[y] == pytest.approx(
                lg[y], abs=1e-9
            )
        K = rng.dirichlet(np.ones(3), size=p.size)  # Theorem 2, first direction
        assert np.allclose(
            gain.randomized_function_leakage_per_output(p, W, K),
            gain.g_leakage_per_output(p, W, gain.gain_of_randomized_function(K)),
            atol=1e-12,
        )


def test_example_gains():
    assert np.array_equal(
        gain.membership_gain([[1, 0], [0, 1], [1, 1]]),
        [[1, 0, 2, 1], [1, 2, 0, 1], [0, 1, 1, 2]],
    )
    g = gain.k_tries_gain(4, 2)
    assert g.shape == (4, 6) and np.array_equal(g.sum(axis=0), np.full(6, 2))
    # k tries on the uniform prior after a noiseless release: ln (1 / (k/|X|)) when k < |X|
    assert gain.g_leakage_per_output(U4, np.eye(4), g)[0] == pytest.approx(LN(2))
    assert np.allclose(
        gain.metric_gain(np.abs(np.subtract.outer(range(3), range(3)))).diagonal(), 1
    )
    with pytest.raises(InputError, match="gain"):
        gain.g_leakage_per_output(P_REF, W_REF, -np.eye(3))


# --- [Saeidian-Rethinking]: min-entropy, disclosure, singling out, entry PML ----------------
def test_prop38_disclosure_and_prop36():
    for alpha, ref in [
        (0.1, (0.223143551314, 0.083381608939)),
        (0.01, (0.223143551314, 0.008032171697)),
    ]:
        W = disclosure.minimal_disclosure_mechanism(P_REF, alpha)
        assert np.allclose(M.pml_per_output(P_REF, W), ref, atol=1e-11)
    assert disclosure.disclosure_threshold(P_REF) == pytest.approx(LN(1 / 0.8))
    W = disclosure.minimal_disclosure_mechanism(P_REF, 0.1)
    U = np.array([1, 1, 0])  # 1{X ≠ x_min}
    assert disclosure.discloses(P_REF, W, U)
    # Theorem 3.4: every adversary of the same support sees the disclosure
    rng = np.random.default_rng(1)
    for _ in range(20):
        assert disclosure.discloses(rng.dirichlet(np.ones(3)), W, U)
    assert not disclosure.discloses(P_REF, W, np.array([0, 1, 1]))
    # Prop. 3.6: a disclosed attribute of smaller min-entropy
    Wk = disclosure.lower_entropy_disclosed_attribute(P_REF, W, U)
    k_u = disclosure.attribute_kernel(U, 3)
    assert disclosure.min_entropy(P_REF @ Wk) < disclosure.min_entropy(P_REF @ k_u)
    assert disclosure.discloses(P_REF, W, Wk)
    with pytest.raises(InputError, match="not disclosed"):
        disclosure.lower_entropy_disclosed_attribute(P_REF, W_REF, U)


def test_min_entropy_singling_out_and_theorems_35_37():
    assert disclosure.min_entropy([0.7, 0.3]) == pytest.approx(0.356674943939, abs=1e-12)
    assert disclosure.min_entropy([0.25] * 4, unit="bits") == pytest.approx(2.0)
    assert disclosure.singling_out_threshold(P_REF) == pytest.approx(LN(2))
    assert disclosure.singles_out(P_REF, np.eye(3))
    assert not disclosure.singles_out(P_REF, W_REF)
    rng = np.random.default_rng(5)
    for _ in range(300):
        p, W = _random_case(rng, zeros=True)
        labels = rng.integers(0, 2, p.size)
        if labels.min() == labels.max():
            continue
        # Theorem 3.5 / Corollary 3.10: the sufficient condition is never contradicted
        if disclosure.pml_prevents_disclosure(p, W, labels):
            assert not disclosure.discloses(p, W, labels)
        if M.pml_level(p, W) < disclosure.singling_out_threshold(p):
            assert not disclosure.singles_out(p, W)
        # Theorem 3.7 for a full-support adversary
        q = rng.dirichlet(np.ones(p.size))
        bound = disclosure.absolute_disclosure_bound(W, q)
        assert disclosure.remaining_uncertainty(q, W, labels) >= bound - 1e-12


def test_entry_pml_from_database_prior():
    db = po.DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12])
    rng = np.random.default_rng(2)
    W = rng.dirichlet(np.ones(3), size=4)
    for i in (0, 1):
        # by hand: the joint of (D_i, Y)
        joint = (db.probs[:, None] * W).reshape(2, 2, 3).sum(axis=1 - i)
        ref = M.pml_per_output(joint.sum(axis=1), joint / joint.sum(axis=1, keepdims=True))
        assert np.allclose(disclosure.entry_pml_per_output(db, W, i), ref, atol=1e-14)
    # Theorem 4.2(3): under product priors the entry PML never exceeds the DP level, and
    # near-degenerate product priors approach it
    dp = M.dp_level(db, W)
    for t in (1e-2, 1e-4):
        best = 0.0
        for a, b in itertools.product((0, 1), repeat=2):
            ra, rb = np.where(np.arange(2) == a, 1 - t, t), np.where(np.arange(2) == b, 1 - t, t)
            prod = po.DatabasePrior(2, 2, probs=np.kron(ra, rb))
            best = max(best, disclosure.entry_pml_level(prod, W))
        assert best <= dp + 1e-12
    assert dp - best < 1e-3
    with pytest.raises(InputError, match="entry"):
        disclosure.entry_pml_per_output(db, W, 2)


# --- Laplace counting mechanism ([Saeidian-Rethinking] Prop. 4.6) ---------------------------
@pytest.mark.parametrize(
    ("n", "b", "p", "ref"),
    [
        (10, 0.5, 0.3, 0.135691979693),
        (10, 0.5, 0.5, 0.0950083111784),
        (50, 0.1, 0.2, 0.156671819023),
    ],
)
def test_laplace_counting_entry_pml(n, b, p, ref):
    lap = counting.LaplaceCounting(n, b)
    y = np.linspace(-2, 3, 2001)
    assert lap.entry_pml_sup(p) == pytest.approx(ref, abs=1e-11)
    assert lap.entry_pml(p, y).max() == pytest.approx(ref, abs=1e-10)
    edges = np.linspace(-1, 2, 25)
    assert lap.binned_entry_pml(p, edges).max() <= lap.entry_pml_sup(p) + 1e-12  # post-proc.
    assert lap.dp_level == pytest.approx(1 / (n * b))


def test_laplace_counting_bound_and_database_form():
    lap = counting.LaplaceCounting(10, 0.5)
    assert lap.pml_bound(0.3) == pytest.approx(0.135691979693, abs=1e-11)
    assert lap.entry_pml(0.3, np.linspace(-2, 0, 801)).max() == pytest.approx(
        0.0559153005537, abs=1e-10
    )
    small = counting.LaplaceCounting(4, 0.5)
    edges = np.linspace(-1, 2, 13)
    db = po.DatabasePrior(2, 4, row_probs=[0.7, 0.3])
    mech = small.database_mechanism(edges)
    for i in range(4):
        assert np.allclose(
            disclosure.entry_pml_per_output(db, mech, i), small.binned_entry_pml(0.3, edges)
        )
    # the binned count mechanism's rows are exact Laplace probabilities
    W = small.count_mechanism([0.5]).matrix
    assert W[0, 0] == pytest.approx(stats.laplace.cdf(0.5, loc=0, scale=0.5))


# --- [Calmon-Fawaz]: counting-query prior and Theorem 4's number -----------------------------
def test_counting_query_prior_and_laplace_mutual_information():
    prior = counting.counting_query_prior(4, 0.3)
    assert stats.entropy(prior.p_s) == pytest.approx(2.44345720822, abs=1e-10)
    assert np.allclose(po.closed_forms.zeta(prior), np.array([1, 4, 6, 4, 1]) / 16)
    assert np.allclose(prior.p_y, stats.binom.pmf(range(5), 4, 0.3))
    i_bits = counting.laplace_mutual_information(1.0, 10, 1000, unit="bits")
    assert i_bits == pytest.approx(6.628103, abs=1e-6)
    assert i_bits >= po.closed_forms.dp_mutual_information_lower_bound(1.0, 10, 1000)
    assert counting.laplace_mutual_information(1.0, 4, 400, unit="bits") == pytest.approx(
        6.093294, abs=1e-6
    )
    # scale invariance: same kε and n/k
    assert counting.laplace_mutual_information(0.5, 20, 2000) == pytest.approx(
        counting.laplace_mutual_information(1.0, 10, 1000), abs=1e-9
    )
    with pytest.raises(InputError, match="k"):
        counting.laplace_mutual_information(1.0, 3, 10)


# --- [Bon-Persuasive] -------------------------------------------------------------------------
def test_probabilistic_dp_exact_prop6():
    W = np.array([[0.5, 0.3, 0.15, 0.05], [0.35, 0.35, 0.2, 0.1]])
    ref = {0.2: (0.5, 0.7), 0.4: (1.0, 0.9), 0.8: (1.0, 1.0)}  # P_x[W[x,T] ≤ e^ε W[x',T]]
    for eps, (ok0, ok1) in ref.items():
        assert persuasive.probabilistic_dp_delta(W, eps) == pytest.approx(
            max(1 - ok0, 1 - ok1), abs=1e-12
        )
        # Prop. 6: the two-point class with a vanishing weight gives the same δ
        pairs = M.neighbor_pair_priors(2, weight=1e-9)
        assert M.persuasive_privacy_delta(W, pairs, eps) == pytest.approx(
            persuasive.probabilistic_dp_delta(W, eps), abs=1e-12
        )
    assert persuasive.probabilistic_dp_level(W) == pytest.approx(M.dp_level([0.5, 0.5], W))
    assert persuasive.probabilistic_dp_level(W, 0.3) <= persuasive.probabilistic_dp_level(W)


def test_dawid_sebastiani_prop7():
    mu = np.zeros(2)
    cov = np.array([[1.0, 0.6], [0.6, 4.0]])  # σ = (1, 2), ρ = 0.3
    x = np.array([1.0, -0.5])
    gains = persuasive.average_release_dss_gain(mu, cov, x)
    assert np.allclose(gains, [0.24047061, 0.68926497], atol=1e-8)
    r1, r2, kappa = persuasive.average_release_kappa(mu, cov, x.mean())
    assert r1 == pytest.approx(0.0403225806, abs=1e-9) and r2 == pytest.approx(9.2857142857)
    assert kappa == pytest.approx(r1 + np.log(r2))
    rng = np.random.default_rng(11)
    for _ in range(300):  # Prop. 7: Δ_i ≤ r₁ + ln r₂ on random Gaussian priors
        n = rng.integers(2, 5)
        A = rng.normal(size=(n, n))
        cov = A @ A.T + 0.1 * np.eye(n)
        mu, x = rng.normal(size=n), rng.normal(size=n)
        assert persuasive.average_release_dss_gain(mu, cov, x).max() <= (
            persuasive.average_release_kappa(mu, cov, x.mean())[2] + 1e-9
        )
    # the score itself (Def. 8)
    assert persuasive.marginal_dawid_sebastiani([0, 1], np.diag([1.0, 4.0]), [1, 1]) == (
        pytest.approx([1.0, np.log(4.0)])
    )


def test_persuasive_conjugacy_and_composition():
    W = np.eye(3)  # a noiseless release: posteriors are point masses
    cls = [np.full(3, 1 / 3), *np.eye(3)]
    assert persuasive.is_conjugate(cls, W)
    assert not persuasive.is_conjugate([np.full(3, 1 / 3)], W)
    W1 = np.array([[0.7, 0.3], [0.3, 0.7], [0.5, 0.5]])
    W2 = np.array([[0.6, 0.4], [0.4, 0.6], [0.5, 0.5]])
    pairs = M.neighbor_pair_priors(3, weight=1e-9)
    k1, k2 = M.persuasive_privacy_level(W1, pairs), M.persuasive_privacy_level(W2, pairs)
    kappa, delta = persuasive.compose_persuasive(k1, 0.0, k2, 0.0)
    both = np.einsum("xa,xb->xab", W1, W2).reshape(3, 4)
    assert M.persuasive_privacy_level(both, pairs) <= kappa + 1e-9 and delta == 0.0


# --- audits with δ (CLI and files) and the non-convex refusals --------------------------------
def _cli(capsys, *argv):
    from privopt.cli import main

    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.out, captured.err


def test_audit_file_with_delta_and_epsilon(capsys):
    import json

    code, out, _ = _cli(capsys, "audit", "problems/audit/pml_example5_tail.toml", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["tail"]["pml_tail"] == pytest.approx(LN(6 / 5), abs=1e-12)  # Example 5
    assert data["tail"]["eml"] == pytest.approx(0.875468737354, abs=1e-11)  # Example 6
    assert data["tail"]["approximate_max_information"] <= data["tail"]["pml_tail"] + 1e-12
    assert data["least_delta"]["pml_tail"] == pytest.approx(1 / 6, abs=1e-12)
    assert data["least_delta"]["eml"] == pytest.approx(
        guarantees.eml_least_delta(U4, EX5, LN(6 / 5)), abs=1e-12
    )
    info = data["information"]
    assert info["total_variation"] == pytest.approx(
        f_information.total_variation_privacy(U4, EX5), abs=1e-14
    )
    assert info["singles_out"] is True and info["min_entropy"] == pytest.approx(LN(4))
    code, out, _ = _cli(capsys, "audit", "problems/audit/pml_example5_tail.toml")
    assert code == 0 and "tail and event audits" in out and "least δ" in out


def test_delta_in_a_solve_file_is_refused(tmp_path, capsys):
    path = tmp_path / "tail.toml"
    path.write_text(
        '[prior]\nprobs = [0.5, 0.3, 0.2]\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "pml"\nepsilon = 0.5\ndelta = 0.1\n',
        encoding="utf-8",
    )
    code, _, err = _cli(capsys, "solve", str(path))
    assert code == 2 and "privacy.delta" in err and "not a convex" in err
    assert "maximal_leakage" in err  # the stand-in is named
    path.write_text(path.read_text(encoding="utf-8").replace("0.1\n", "2.0\n"), "utf-8")
    code, _, err = _cli(capsys, "solve", str(path))
    assert code == 2 and "privacy.delta" in err


def test_nonconvex_designs_refused_with_reason():
    for name in ("eml", "pml_tail", "pdp", "persuasive_privacy"):
        with pytest.raises(InputError, match="cannot be designed") as info:
            po.design(P_REF, "hamming", name, epsilon=0.3)
        assert info.value.field == "privacy.notion" and "convex" in str(info.value)
    with pytest.raises(InputError, match="not a convex constraint") as info:
        po.design(P_REF, "hamming", "pml", epsilon=0.3, delta=0.2)
    assert info.value.field == "privacy.delta"
    with pytest.raises(InputError, match="no δ-version"):
        po.design(P_REF, "hamming", "mutual_information", epsilon=0.3, delta=0.2)
    with pytest.raises(InputError, match="unknown notion"):
        po.design(P_REF, "hamming", "no_such_notion", epsilon=0.3)
    # δ = 0 is the notion itself
    assert po.design(P_REF, "hamming", "pml", epsilon=0.3, delta=0.0).verified


def test_convex_stand_ins_bracket_the_tail_guarantee():
    """ε-PML (sufficient) meets (ε,δ)-PML; maximal leakage at ln(e^ε + δe^ε_max) (necessary,
    Lemma 3(2)) is a relaxation: its least distortion is at most the sufficient one's."""
    eps, delta = 0.3, 0.1
    sufficient = po.design(P_REF, "hamming", "pml", epsilon=eps)
    assert M.pml_tail_level(P_REF, sufficient.mechanism, delta) <= eps + 1e-7
    assert M.eml_level(P_REF, sufficient.mechanism, delta) <= eps + 1e-7
    relaxed_level = po.closed_forms.maximal_leakage_bound(eps, delta, M.epsilon_max(P_REF))
    necessary = po.design(P_REF, "hamming", "maximal_leakage", epsilon=relaxed_level)
    assert necessary.distortion <= sufficient.distortion + 1e-7


# --- robust PML: hull, product classes, every prior ([Saeidian-Rethinking] Def. 2.6, Thms 2.8,
# 4.2(3)) -------------------------------------------------------------------------------------
def test_robust_pml_hull_warning_on_the_issue_example():
    vertices = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
    with pytest.warns(UserWarning, match="convex hull"):
        res = po.design(np.full(3, 1 / 3), "hamming", "robust_pml", epsilon=0.3, priors=vertices)
    W = res.mechanism.matrix
    assert M.robust_pml_level(np.full(3, 1 / 3), W, vertices) <= 0.3 + 1e-7
    mid = M.pml_level([0.25, 0.5, 0.25], W)
    assert mid == pytest.approx(0.6, abs=1e-6)  # the midpoint prior (the issue's number)
    hull = res.extra["robust_pml_hull_level"]
    assert hull >= mid - 1e-9 and "convex hull" in res.extra["robust_pml_hull"]
    # the supremum is approached inside the hull (brute force over mixtures)
    lam = np.linspace(1e-6, 1 - 1e-6, 20001)
    mixes = [
        M.pml_level(l * np.array(vertices[0]) + (1 - l) * np.array(vertices[1]), W)
        for l in lam[::50]
    ]
    assert max(mixes) <= hull + 1e-9 and max(mixes) > hull - 1e-2
    assert "notes" in res.to_dict()
    # point-mass vertices: the identity is "verified" at the vertices, infinite on the hull
    with pytest.warns(UserWarning, match="inf"):
        ident = po.design(np.full(3, 1 / 3), "hamming", "robust_pml", epsilon=0.3, priors=np.eye(3))
    assert ident.extra["robust_pml_hull_level"] == np.inf
    assert M.leakage_capacity(ident.mechanism) == np.inf


def test_robust_pml_same_support_class_covers_its_hull():
    vertices = [[0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.3, 0.5, 0.2]]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = po.design(P_REF, "hamming", "robust_pml", epsilon=0.4, priors=vertices)
    assert "robust_pml_hull" not in res.extra
    rng = np.random.default_rng(26)
    for _ in range(200):
        q = rng.dirichlet(np.ones(3)) @ np.array(vertices)
        assert M.pml_level(q, res.mechanism) <= 0.4 + 1e-7
    assert M.robust_pml_hull_level(P_REF, res.mechanism, vertices) <= 0.4 + 1e-7


def test_robust_pml_all_priors_is_leakage_capacity():
    res = po.design(P_REF, "hamming", "robust_pml", epsilon=0.7, priors="all")
    ldp = po.design(P_REF, "hamming", "ldp", epsilon=0.7)
    assert res.notion == "ldp" and "robust_pml_all_priors" in res.extra
    assert res.distortion == pytest.approx(ldp.distortion, abs=1e-9)
    assert M.leakage_capacity(res.mechanism) <= 0.7 + 1e-7
    # measured as the leakage capacity (Theorem 2.8)
    notion = po.get_notion("robust_pml")
    assert notion.measure(po.Prior(P_REF), W_REF, priors="all") == pytest.approx(LN(5))


def test_robust_pml_product_class_of_entries_approaches_dp():
    db = po.DatabasePrior(2, 2, row_probs=[0.5, 0.5])
    eps = 1.0
    dp = po.design(db, "hamming", "dp", epsilon=eps)
    gaps = []
    for t in (1e-1, 1e-2, 1e-3):
        sets = [[[1 - t, t], [t, 1 - t]]]
        res = po.design(
            db, "hamming", "robust_pml", epsilon=eps, entry_priors=sets, about="entries"
        )
        assert res.verified
        # every product of vertices sees ℓ(D_i→y) ≤ ε (checked with the entry-PML measure)
        for a, b in itertools.product(sets[0], repeat=2):
            prod = po.DatabasePrior(2, 2, probs=np.kron(a, b))
            assert disclosure.entry_pml_level(prod, res.mechanism) <= eps + 1e-7
        assert res.distortion <= dp.distortion + 1e-7  # a smaller class than DP's
        gaps.append(M.dp_level(db, res.mechanism) - eps)
    # Theorem 4.2(3): over all product priors the entry-PML guarantee is ε-DP
    assert gaps[-1] < gaps[0] and gaps[-1] < 0.01
    # the class of products on X itself (about the whole database)
    whole = po.design(
        db, "hamming", "robust_pml", epsilon=eps, entry_priors=[[[0.9, 0.1], [0.1, 0.9]]]
    )
    assert (
        len(
            po.get_notion("robust_pml").validate_options(
                db, {"entry_priors": [[[0.9, 0.1], [0.1, 0.9]]]}
            )["priors"]
        )
        == 4
    )
    assert whole.verified
    with pytest.raises(InputError, match="database"):
        po.design(P_REF, "hamming", "robust_pml", epsilon=eps, entry_priors=[[[0.5, 0.5]]])
    with pytest.raises(InputError, match="priors"):
        po.design(P_REF, "hamming", "robust_pml", epsilon=eps)


# --- Blahut–Arimoto for a joint prior ([Calmon-Fawaz] Theorem 1, Remark 2) -------------------
def _clarabel_joint(prior, d, budget=None, eps=None):
    import cvxpy as cp

    W = cp.Variable(d.shape, nonneg=True)
    p_us = prior.p_y_given_s @ W
    p_u = prior.p_s @ p_us
    ref = np.ones((prior.n_secrets, 1)) @ cp.reshape(p_u, (1, d.shape[1]), order="C")
    info = cp.sum(cp.multiply(prior.p_s[:, None], cp.rel_entr(p_us, ref)))
    dist = cp.sum(cp.multiply(prior.p_y[:, None] * d, W))
    rows = [cp.sum(W, axis=1) == 1]
    if budget is not None:
        problem = cp.Problem(cp.Minimize(info), [*rows, dist <= budget])
    else:
        problem = cp.Problem(cp.Minimize(dist), [*rows, info <= eps])
    problem.solve(solver="CLARABEL")
    return problem.value


def test_blahut_arimoto_joint_prior_matches_clarabel():
    prior = counting.counting_query_prior(4, 0.3)
    d = po.Distortion.absolute(5)
    res = po.design(prior, d, "mutual_information", max_distortion=0.5, solver="blahut-arimoto")
    assert res.status == "optimal" and res.verified and res.solver.name == "blahut-arimoto"
    assert "Frank–Wolfe" in res.certificate.source and res.certificate.gap < 1e-8
    ref = _clarabel_joint(prior, d.matrix, budget=0.5)
    assert res.epsilon == pytest.approx(ref, abs=1e-7)
    assert res.epsilon <= ref + 1e-9  # BA's answer is certified; Clarabel's is approximate
    assert M.mutual_information(prior, res.mechanism) == pytest.approx(res.epsilon, abs=1e-12)
    res_eps = po.design(prior, d, "mutual_information", epsilon=0.3, solver="blahut-arimoto")
    assert res_eps.verified and res_eps.distortion == pytest.approx(
        _clarabel_joint(prior, d.matrix, eps=0.3), abs=1e-6
    )
    assert res_eps.certificate.certified


def test_blahut_arimoto_joint_step_is_classical_ba_when_s_is_y():
    """With S = Y the update W' ∝ W e^{−g} is the classical BA step W' ∝ p_U e^{−λd}."""
    from privopt.methods.blahut_arimoto.joint import JointLagrangian

    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4))
    d = rng.uniform(0, 2, (4, 3))
    model = JointLagrangian(po.JointPrior(np.diag(p)), d)
    W = rng.dirichlet(np.ones(3), size=4)
    g = model.evaluate(np.log(W), 1.7)["g"]
    step = W * np.exp(-g)
    step /= step.sum(axis=1, keepdims=True)
    classical = (p @ W)[None, :] * np.exp(-1.7 * d)
    classical /= classical.sum(axis=1, keepdims=True)
    assert np.allclose(step, classical, atol=1e-13)


@pytest.mark.slow
def test_blahut_arimoto_joint_prior_random_instances():
    from privopt.methods.blahut_arimoto.joint import joint_rate_distortion

    rng = np.random.default_rng(5)
    for _ in range(3):
        prior = po.JointPrior(rng.dirichlet(np.ones(12)).reshape(4, 3))
        d = rng.uniform(0, 2, (3, 4))
        budget = 0.5 * (prior.p_y @ d.min(axis=1) + (prior.p_y @ d).min())
        sol = joint_rate_distortion(prior, d, budget)
        assert sol.status == "optimal"
        ref = _clarabel_joint(prior, d, budget=budget)
        assert sol.certificate["lower_bound"] <= ref + 1e-7
        assert sol.objective == pytest.approx(ref, abs=1e-6)


def test_robust_pml_files_and_cli_notes(tmp_path, capsys):
    import json

    hull = tmp_path / "hull.toml"
    hull.write_text(
        "[prior]\nprobs = [0.3333333333333333, 0.3333333333333334, 0.3333333333333333]\n"
        '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "robust_pml"\nepsilon = 0.3\n'
        "priors = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]\n",
        encoding="utf-8",
    )
    code, out, err = _cli(capsys, "solve", str(hull))
    assert code == 0 and "privopt: warning:" in err and "convex hull" in err
    assert "notes" in out and "robust_pml_hull_level" in out
    code, out, _ = _cli(capsys, "solve", str(hull), "--json")
    assert json.loads(out)["notes"]["robust_pml_hull_level"] > 1.0
    every = tmp_path / "all.toml"
    every.write_text(
        '[prior]\nprobs = [0.5, 0.3, 0.2]\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "robust_pml"\nepsilon = 0.7\npriors = "all"\n',
        encoding="utf-8",
    )
    code, out, _ = _cli(capsys, "solve", str(every), "--json")
    data = json.loads(out)
    assert code == 0 and data["notion"] == "ldp" and "robust_pml_all_priors" in data["notes"]
    entries = tmp_path / "entries.toml"
    entries.write_text(
        "[prior.database]\nm = 2\nn = 2\nrow_probs = [0.5, 0.5]\n"
        '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "robust_pml"\nepsilon = 1.0\n'
        'entry_priors = [[[0.99, 0.01], [0.01, 0.99]]]\nabout = "entries"\n',
        encoding="utf-8",
    )
    code, out, _ = _cli(capsys, "solve", str(entries), "--json")
    assert code == 0 and json.loads(out)["status"] == "optimal"
    entries.write_text(entries.read_text(encoding="utf-8").replace('"entries"', '"rows"'), "utf-8")
    code, _, err = _cli(capsys, "solve", str(entries))
    assert code == 2 and "privacy.about" in err


def test_audit_reports_the_hull_level_of_a_prior_class(tmp_path, capsys):
    import json

    path = tmp_path / "audit.toml"
    path.write_text(
        "[prior]\nprobs = [0.3333333333333333, 0.3333333333333334, 0.3333333333333333]\n"
        '[privacy]\npriors = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]\nabout = "secret"\n'
        "[mechanism]\nmatrix = [[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]]\n",
        encoding="utf-8",
    )
    code, out, _ = _cli(capsys, "audit", str(path), "--json")
    data = json.loads(out)
    assert code == 0
    # by hand: output 0, max_x W[x,0] = 0.5 over min_i Q_i,U(0) = min(0.35, 0.15)
    assert data["information"]["robust_pml_hull"] == pytest.approx(np.log(0.5 / 0.15))
    assert data["leakage"]["robust_pml"] == pytest.approx(
        M.robust_pml_level(np.full(3, 1 / 3), W_REF, [[0.5, 0.5, 0], [0, 0.5, 0.5]])
    )


def test_sweep_warns_once_for_a_class_that_does_not_cover_its_hull():
    vertices = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
    with pytest.warns(UserWarning, match="2 point") as caught:
        curve = po.sweep(
            np.full(3, 1 / 3), "hamming", "robust_pml", epsilons=[0.2, 0.3], priors=vertices
        )
    assert len([w for w in caught if "convex hull" in str(w.message)]) == 1
    for result in curve.results:
        assert result.extra["robust_pml_hull_level"] > result.epsilon + 0.1


@pytest.mark.parametrize(
    "call",
    [
        lambda: CF.krr_distortion("a", 3),
        lambda: CF.pml_bound_from_ldp("x", 0.1),
        lambda: CF.pml_bound_from_ldi(1.0, 1.5, 3),
        lambda: CF.maximal_leakage_bound(1.0, 2.0, 1.0),
        lambda: CF.adaptive_composition_pml("x", 1.0),
        lambda: CF.adaptive_composition_eml(1.0, 0.1, 1.0, 0.1, float("nan")),
        lambda: CF.h("x", 2, 2),
        lambda: CF.h_inv(-1.0, 2, 2),
        lambda: CF.binary_entropy(1.5),
        lambda: CF.exponential_kernel(-1.0, 3),
        lambda: CF.rate_distortion_hamming_uniform(4, "D"),
        lambda: guarantees.eml_least_delta([0.5, 0.5], np.eye(2), "x"),
        lambda: f_information.hockey_stick_divergence([0.5, 0.5], np.eye(2), "x"),
        lambda: persuasive.probabilistic_dp_delta(np.eye(2), "x"),
        lambda: gain.g_leakage_per_output([0.5, 0.5], np.eye(2), "x"),
    ],
)
def test_closed_forms_refuse_bad_scalars_with_input_error(call):
    """Non-numbers, nan and out-of-range values: privopt's InputError (one validation
    module), never a bare ValueError or TypeError from numpy."""
    with pytest.raises(InputError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: CF.laplace_counting_pml_bound(10, 0.0, 0.2),
        lambda: CF.laplace_counting_pml_bound_simplified(0, 1.0, 0.2),
        lambda: CF.laplace_counting_pml_sup(10, 1.0, 1.5),
        lambda: CF.threshold_query_pml(10, -0.1, 3),
        lambda: CF.threshold_query_chernoff_bound(10, 0.5, "3"),
        lambda: CF.dp_mutual_information_lower_bound(1.0, 0, 3),
        lambda: CF.maximal_leakage_hamming_distortion([0.0, 0.0], 1.0),
        lambda: CF.epsilon_tilde_x(po.DatabasePrior(2, 2, probs=[0.4, 0.3, 0.2, 0.1]), tol=0.0),
        lambda: po.Mechanism.from_json("5"),
        lambda: po.Mechanism.from_json('"a mechanism"'),
        lambda: M.persuasive_privacy_delta(np.eye(2), [], 1.0),
        lambda: M.persuasive_privacy_level(np.eye(2), []),
        lambda: M.neighbor_pair_priors(3, None, 2.0),
    ],
)
def test_more_closed_forms_refuse_bad_arguments(call):
    """Found by reading them while documenting: a zero noise scale divided by zero, an
    all-zero prior gave nan, a zero tolerance looped forever, a JSON scalar raised
    TypeError/AttributeError. Each is now privopt's InputError."""
    with pytest.raises(InputError):
        call()


def test_pdmip_value_names_the_budget_and_tolerance_zero_ends():
    prior = po.DatabasePrior(2, 2, probs=[0.4, 0.3, 0.2, 0.1])
    with pytest.raises(InputError, match="max_distortion"):
        CF.pdmip_value(prior, 3.0, strict=False)
    tight = CF.epsilon_tilde_x(prior, tol=1e-15)
    assert tight == pytest.approx(CF.epsilon_tilde_x(prior), rel=1e-12)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: counting.LaplaceCounting(10, "0.5"), "b"),
        (lambda: counting.LaplaceCounting(10, 0.5).entry_pml("0.3", [0.5]), "p"),
        (lambda: counting.LaplaceCounting(10, 0.5).entry_pml(0.3, ["a"]), "y"),
        (lambda: counting.LaplaceCounting(10, 0.5).entry_pml(0.3, [np.inf]), "y"),
        (lambda: counting.laplace_mutual_information("1", 1, 10), "eps"),
        (lambda: counting.laplace_mutual_information(1.0, 1, 10**6), "n"),
        (
            lambda: disclosure.absolute_disclosure_bound(np.eye(2), [0.2, 0.3, 0.5]),
            "adversary_prior",
        ),
        (lambda: disclosure.entry_pml_level([0.5, 0.5], np.eye(2)), "prior"),
        (lambda: disclosure.minimal_disclosure_mechanism([0.5, 0.5], "0.5"), "alpha"),
        (
            lambda: disclosure.entry_pml_per_output(
                po.DatabasePrior(2, 2, probs=[0.25] * 4), np.eye(4), "0"
            ),
            "entry",
        ),
        (
            lambda: disclosure.entry_pml_per_output(
                po.DatabasePrior(2, 2, probs=[0.25] * 4), np.eye(4), 2
            ),
            "entry",
        ),
        (lambda: disclosure.attribute_kernel([1, 2.5], 2), "attribute"),
        (lambda: disclosure.attribute_kernel([[0.5, 0.6], [1.0, 0.0]], 2), "attribute"),
        (
            lambda: disclosure.lower_entropy_disclosed_attribute(
                [0.5, 0.5], np.eye(2), [0, 1], lam="x"
            ),
            "lam",
        ),
        (lambda: gain.membership_gain(np.zeros((0, 2))), "membership"),
        (lambda: gain.identity_gain("x"), "size"),
        (lambda: gain.identity_gain(float("inf")), "size"),
        (lambda: gain.identity_gain(None), "size"),
        (lambda: gain.k_tries_gain("x", 1), "size"),
        (lambda: gain.k_tries_gain(3, float("inf")), "k"),
        (lambda: gain.k_tries_gain(3, None), "k"),
        (lambda: gain.metric_gain(np.zeros((2, 2)), "x"), "scale"),
        (lambda: gain.metric_gain(np.zeros((0, 2))), "distance"),
        (lambda: gain.gain_of_randomized_function([[0.5, 0.6]]), "kernel"),
        (
            lambda: gain.randomized_function_leakage_per_output(
                [0.5, 0.5], np.eye(2), [[0.5, 0.6], [1.0, 0.0]]
            ),
            "kernel",
        ),
        (lambda: gain.randomized_function_of_gain([0.5, 0.5], np.eye(2), np.eye(2), "0"), "output"),
        (lambda: persuasive.gaussian_posterior_given_average([], np.zeros((0, 0)), 0.0), "mean"),
        (lambda: persuasive.gaussian_posterior_given_average([0, 0], np.eye(2), "1"), "average"),
        (lambda: persuasive.average_release_kappa([0, 0], [1, 1], 1.0), "cov"),
        (lambda: persuasive.average_release_kappa([0, 0], np.zeros((2, 2)), 1.0), "cov"),
        (lambda: persuasive.marginal_dawid_sebastiani(["a"], [[1.0]], [0.0]), "mean"),
        (lambda: persuasive.probabilistic_dp_delta(np.eye(2), 1.0, po.all_pairs(3)), "neighbors"),
        (lambda: persuasive.probabilistic_dp_delta(np.eye(2), 1.0, "hamming"), "neighbors"),
        (lambda: persuasive.probabilistic_dp_level(np.eye(2), 0.0, [(0, 5)]), "neighbors[0]"),
        (lambda: persuasive.probabilistic_dp_delta(np.eye(2), "1"), "eps"),
        (lambda: persuasive.is_conjugate([[0.5, 0.5], [1.0]], np.eye(2)), "priors[1]"),
        (lambda: persuasive.compose_persuasive("x", 0.0, 0.1, 0.0), "kappa1"),
        (lambda: f_information.f_information([0.5, 0.5], np.eye(2), lambda t: 0.0), "f"),
        (lambda: f_information.f_information([0.5, 0.5], np.eye(2), "t ln t"), "f"),
        (
            lambda: f_information.f_information_pml_bound([0.5, 0.5], np.eye(2), abs, "1"),
            "f_at_zero",
        ),
        (
            lambda: f_information.f_information_pml_bound(
                [0.5, 0.5], np.eye(2), lambda t: 0.0, 0.5
            ),
            "f",
        ),
        (lambda: f_information.hockey_stick_divergence([0.5, 0.5], np.eye(2), "x"), "eps"),
        (lambda: f_information.total_variation_tail_bound(np.nan, 0.1, 1.0), "eps"),
        (lambda: f_information.mutual_information_tail_bound(-1.0, 0.1, 1.0), "eps"),
    ],
)
def test_paper_modules_refuse_bad_arguments_naming_the_field(call, field):
    """Audit of counting, disclosure, gain, persuasive and f_information: each raised a bare
    AttributeError / ValueError / TypeError / IndexError / ZeroDivisionError, answered a
    mismatched question silently, or named the wrong field. Each is now an InputError naming
    the argument."""
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field


def test_laplace_entry_pml_far_outside_is_the_supremum_not_nan():
    lap = counting.LaplaceCounting(10, 0.001)
    sup = lap.entry_pml_sup(0.3)
    far = lap.entry_pml(0.3, [-5.0, 2.0, 100.0])
    assert not np.isnan(far).any()
    # left of every centre output 0 is likelier under D_i = 0: ln 1/(0.7 + 0.3 e^{-100})
    assert far == pytest.approx([-np.log(0.7), sup, sup], abs=1e-9)
    assert sup == pytest.approx(1.2039728043, abs=1e-9)
    # the log-space form agrees with the densities where they do not underflow
    lap = counting.LaplaceCounting(10, 0.5)
    y = np.linspace(-3, 4, 57)
    f0, f1 = lap._entry_mixtures(0.3, lap.density(y))
    direct = np.log(np.maximum(f0, f1) / (0.7 * f0 + 0.3 * f1))
    assert lap.entry_pml(0.3, y) == pytest.approx(direct, abs=1e-13)


class _CountingLogs:
    """numpy, with the number of entries ``log`` is taken of counted (the quadrature's
    density evaluations: one ``−f ln f`` per quadrature point)."""

    def __init__(self):
        self.entries = 0

    def log(self, values, *args, **kwargs):
        self.entries += np.size(values)
        return np.log(values, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(np, name)


def test_laplace_mutual_information_is_linear_time_and_capped(monkeypatch):
    counted = _CountingLogs()
    monkeypatch.setattr(counting, "np", counted)
    value = counting.laplace_mutual_information(1.0, 1, 8000, unit="bits")
    monkeypatch.undo()
    # (n/k + 240)·60 quadrature points, linear in n/k (it was (n/k)² work: ~40 s)
    assert 0 < counted.entries <= (8000 + 240) * 60 + 16  # (+ the unit conversion)
    # between ln(n/k + 1) and the Calmon–Fawaz lower bound
    assert CF.dp_mutual_information_lower_bound(1.0, 1, 8000) <= value <= np.log2(8001)
    # the same value as summing every Laplace density at every quadrature point
    ys = np.arange(0, 31, 3, dtype=float)
    u = np.linspace(-40, 70, 200001)
    f = np.exp(-np.abs(u[:, None] - ys[None, :]) / 2.0).sum(axis=1) / (4.0 * ys.size)
    h_u = float(np.sum(-f * np.log(f)) * (u[1] - u[0]))
    assert counting.laplace_mutual_information(0.5, 3, 30) == pytest.approx(
        h_u - (1 + np.log(4.0)), abs=1e-6
    )
    with pytest.raises(InputError, match="n/k ≤"):
        counting.laplace_mutual_information(1.0, 1, counting.MAX_QUADRATURE_POINTS)


def test_absolute_disclosure_bound_single_secret_is_infinite():
    assert disclosure.absolute_disclosure_bound([[1.0]], [1.0]) == np.inf
    assert disclosure.absolute_disclosure_bound(np.full((2, 2), 0.5), [0.5, 0.5]) == (
        pytest.approx(np.log(2.0))
    )


def test_probabilistic_dp_accepts_named_and_listed_neighbours():
    W = np.array([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]])
    default = persuasive.probabilistic_dp_delta(W, 0.5)
    assert persuasive.probabilistic_dp_delta(W, 0.5, "all") == default == pytest.approx(0.9)
    # only rows 0 and 1: δ = P_{T∼W[0]}[ln W[0,T]/W[1,T] > 0.5] = W[0, 0]
    assert persuasive.probabilistic_dp_delta(W, 0.5, [(0, 1)]) == pytest.approx(0.5)
    assert persuasive.probabilistic_dp_level(W, 0.0, [(0, 1)]) == pytest.approx(np.log(2.5))
    assert persuasive.probabilistic_dp_level(W, 0.0, "all") == pytest.approx(np.log(8.0))
    assert persuasive.is_conjugate([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]], np.eye(2))
