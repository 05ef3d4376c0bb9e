"""Model layer: validation, mechanisms (composition, sampling, JSON), neighbours, database
priors and distortions (GitHub issue "Foundation", item 6)."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from privopt import (
    DatabasePrior,
    Distortion,
    InputError,
    JointPrior,
    Mechanism,
    NeighborRelation,
    Prior,
    PrivoptError,
    all_pairs,
    hamming_neighbors,
    measures,
)
from privopt.model import as_prior, database_digits


def raises_field(field: str):
    """``pytest.raises(InputError)`` whose error names ``field``."""
    return pytest.raises(InputError, match="^" + re.escape(field) + ": ")


def check_field(excinfo, field: str) -> None:
    assert excinfo.value.field == field
    assert str(excinfo.value).startswith(f"{field}: ")


# --- error hierarchy ------------------------------------------------------------------------
def test_input_error_is_privopt_and_value_error():
    err = InputError("bad", "prior.probs")
    assert isinstance(err, PrivoptError)
    assert isinstance(err, ValueError)
    assert err.exit_code == 2
    assert err.field == "prior.probs"
    assert str(err) == "prior.probs: bad"
    assert str(InputError("bad")) == "bad"


# --- Prior validation -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "probs, fragment",
    [
        ([0.5, 0.4], "sums to 0.9"),
        ([0.6, 0.6], "sums to 1.2"),
        ([1.2, -0.2], "< 0"),
        ([0.5, float("nan"), 0.5], "finite"),
        ([0.5, float("inf")], "finite"),
        ([[0.5, 0.5]], "flat list"),
        ([], "empty"),
        (0.5, "flat list"),
        (["a", "b"], "got the string 'a'"),
    ],
)
def test_prior_rejects_bad_probs(probs, fragment):
    with pytest.raises(InputError, match=fragment) as excinfo:
        Prior(probs)
    check_field(excinfo, "prior.probs")


def test_prior_negative_entry_is_reported_even_if_sum_is_one():
    with pytest.raises(InputError, match="entry 1") as excinfo:
        Prior([0.7, -0.1, 0.4])
    check_field(excinfo, "prior.probs")


def test_prior_accepts_sum_within_tolerance_and_renormalises():
    prior = Prior([0.5, 0.5 + 5e-10])
    assert prior.probs.sum() == pytest.approx(1.0, abs=1e-15)
    assert prior.probs[0] < prior.probs[1]


def test_prior_rejects_sum_just_outside_tolerance():
    with raises_field("prior.probs"):
        Prior([0.5, 0.5 + 5e-9])


@pytest.mark.parametrize(
    "labels, fragment",
    [
        (["a", "b", "a"], "appears twice"),
        (["a", "b"], "has 2 labels"),
        (["a", "b", "c", "d"], "has 4 labels"),
        ("abc", "single string"),
    ],
)
def test_prior_rejects_bad_labels(labels, fragment):
    with pytest.raises(InputError, match=fragment) as excinfo:
        Prior([0.2, 0.3, 0.5], labels=labels)
    check_field(excinfo, "prior.labels")


def test_prior_protocol_and_support():
    prior = Prior([0.5, 0.0, 0.5], labels=["a", "b", "c"])
    assert prior.labels == ("a", "b", "c")
    assert prior.input_labels == prior.secret_labels == ("a", "b", "c")
    np.testing.assert_array_equal(prior.support, [0, 2])
    np.testing.assert_array_equal(prior.secret_support, [0, 2])
    assert prior.size == prior.n_inputs == prior.n_secrets == 3
    assert prior.observation is None
    w = np.eye(3)
    assert prior.induced_channel(w) is w
    assert Prior([0.25, 0.75]).labels == ("0", "1")


def test_as_prior_accepts_objects_and_pmfs():
    prior = Prior([0.3, 0.7])
    assert as_prior(prior) is prior
    db = DatabasePrior(2, 1, row_probs=[0.3, 0.7])
    assert as_prior(db) is db
    converted = as_prior([0.3, 0.7])
    assert isinstance(converted, Prior)
    np.testing.assert_allclose(converted.probs, [0.3, 0.7])
    with raises_field("prior.probs"):
        as_prior([0.3, 0.3])


# --- JointPrior -----------------------------------------------------------------------------
def test_joint_prior_marginals_and_conditionals():
    joint = np.array([[0.1, 0.2, 0.0], [0.3, 0.0, 0.4]])
    jp = JointPrior(joint, secret_labels=["s0", "s1"], labels=["a", "b", "c"])
    np.testing.assert_allclose(jp.p_s, [0.3, 0.7], atol=1e-15)
    np.testing.assert_allclose(jp.p_y, [0.4, 0.2, 0.4], atol=1e-15)
    np.testing.assert_allclose(jp.p_y_given_s, [[1 / 3, 2 / 3, 0], [3 / 7, 0, 4 / 7]], atol=1e-15)
    np.testing.assert_allclose(jp.p_s_given_y, [[0.25, 0.75], [1, 0], [0, 1]], atol=1e-15)
    assert jp.input_labels == ("a", "b", "c")
    assert jp.secret_labels == ("s0", "s1")
    assert (jp.n_secrets, jp.n_inputs) == (2, 3)
    w = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    np.testing.assert_allclose(jp.induced_channel(w), jp.p_y_given_s @ w)


def test_joint_prior_zero_mass_secret_row_is_zero():
    jp = JointPrior([[0.0, 0.0], [0.5, 0.5]])
    np.testing.assert_array_equal(jp.p_y_given_s[0], [0.0, 0.0])
    np.testing.assert_array_equal(jp.secret_support, [1])


@pytest.mark.parametrize(
    "joint, fragment",
    [
        ([[0.1, 0.2], [0.3, 0.3]], "sum"),
        ([[0.6, -0.1], [0.3, 0.2]], "< 0"),
        ([[0.5, float("nan")], [0.25, 0.25]], "finite"),
        ([0.5, 0.5], "matrix"),
        ([[]], "empty"),
    ],
)
def test_joint_prior_rejects_bad_joint(joint, fragment):
    with pytest.raises(InputError, match=fragment) as excinfo:
        JointPrior(joint)
    check_field(excinfo, "prior.joint")


def test_joint_prior_rejects_bad_labels():
    with raises_field("prior.secret_labels"):
        JointPrior([[0.5, 0.5]], secret_labels=["s", "t"])
    with raises_field("prior.labels"):
        JointPrior([[0.5, 0.5]], labels=["y", "y"])


# --- DatabasePrior --------------------------------------------------------------------------
def test_database_digits_lexicographic_x1_most_significant():
    digits = database_digits(3, 2)
    expected = list(itertools.product(range(3), repeat=2))
    np.testing.assert_array_equal(digits, expected)
    assert digits.shape == (9, 2)


def test_database_prior_labels_lexicographic():
    prior = DatabasePrior(2, 3, row_probs=[0.5, 0.5])
    assert prior.labels == ("000", "001", "010", "011", "100", "101", "110", "111")
    named = DatabasePrior(2, 2, row_probs=[0.5, 0.5], symbols=["no", "yes"])
    assert named.labels == ("no,no", "no,yes", "yes,no", "yes,yes")
    short = DatabasePrior(3, 1, row_probs=[0.2, 0.3, 0.5], symbols=["a", "b", "c"])
    assert short.labels == ("a", "b", "c")


def test_database_prior_iid_is_kronecker_power():
    q = np.array([0.6, 0.4])
    prior = DatabasePrior(2, 2, row_probs=q)
    np.testing.assert_allclose(prior.probs, [0.36, 0.24, 0.24, 0.16], atol=1e-15)
    q3 = np.array([0.5, 0.3, 0.2])
    prior3 = DatabasePrior(3, 3, row_probs=q3)
    np.testing.assert_allclose(prior3.probs, np.kron(np.kron(q3, q3), q3), atol=1e-15)
    # entry of database (x1, x2, x3) is q(x1) q(x2) q(x3)
    for k, row in enumerate(prior3.digits):
        assert prior3.probs[k] == pytest.approx(np.prod(q3[row]), abs=1e-15)
    assert prior3.is_iid and prior3.is_product
    assert prior3.size == 27
    assert prior3.probs.sum() == pytest.approx(1.0, abs=1e-12)


def test_database_prior_marginals_first_row_most_significant():
    probs = np.kron([0.6, 0.4], [0.7, 0.3])  # x_1 ~ (.6, .4), x_2 ~ (.7, .3)
    prior = DatabasePrior(2, 2, probs=probs)
    assert not prior.is_iid
    assert prior.is_product
    m1, m2 = prior.marginals()
    np.testing.assert_allclose(m1, [0.6, 0.4], atol=1e-15)
    np.testing.assert_allclose(m2, [0.7, 0.3], atol=1e-15)
    correlated = DatabasePrior(2, 2, probs=[0.4, 0.1, 0.2, 0.3])
    assert correlated.marginals() is None
    assert not correlated.is_product


def test_database_prior_validation():
    with raises_field("prior.database"):
        DatabasePrior(2, 2)
    with raises_field("prior.database"):
        DatabasePrior(2, 2, row_probs=[0.5, 0.5], probs=[0.25] * 4)
    with raises_field("prior.database.m"):
        DatabasePrior(1, 2, row_probs=[1.0])
    with raises_field("prior.database.n"):
        DatabasePrior(2, 0, row_probs=[0.5, 0.5])
    with raises_field("prior.database.m"):
        DatabasePrior(2.5, 2, row_probs=[0.5, 0.5])
    with raises_field("prior.database.row_probs"):
        DatabasePrior(3, 2, row_probs=[0.5, 0.5])
    with raises_field("prior.database.row_probs"):
        DatabasePrior(2, 2, row_probs=[0.5, 0.6])
    with raises_field("prior.database.probs"):
        DatabasePrior(2, 2, probs=[0.5, 0.5])
    with raises_field("prior.database.probs"):
        DatabasePrior(2, 2, probs=[0.5, 0.5, -0.1, 0.1])
    with raises_field("prior.database.symbols"):
        DatabasePrior(2, 2, row_probs=[0.5, 0.5], symbols=["a", "a"])


# --- Mechanism validation -------------------------------------------------------------------
@pytest.mark.parametrize(
    "matrix, fragment",
    [
        ([[0.5, 0.4], [0.5, 0.5]], "row 0 sums to 0.9"),
        ([[0.5, 0.5], [1.2, -0.2]], "< 0"),
        ([[0.5, float("nan")], [0.5, 0.5]], "finite"),
        ([0.5, 0.5], "matrix"),
        ([[[1.0]]], "matrix"),
        ([[]], "empty"),
        ([], "matrix"),
    ],
)
def test_mechanism_rejects_bad_matrix(matrix, fragment):
    with pytest.raises(InputError, match=fragment) as excinfo:
        Mechanism(matrix)
    check_field(excinfo, "mechanism.matrix")


def test_mechanism_rejects_ragged_rows():
    with raises_field("mechanism.matrix"):
        Mechanism([[1.0], [0.5, 0.5]])


def test_mechanism_rejects_bad_labels():
    with pytest.raises(InputError, match="appears twice") as excinfo:
        Mechanism(np.eye(2), input_labels=["x", "x"])
    check_field(excinfo, "mechanism.inputs")
    with pytest.raises(InputError, match="has 3 labels") as excinfo:
        Mechanism(np.eye(2), output_labels=["a", "b", "c"])
    check_field(excinfo, "mechanism.outputs")


def test_mechanism_tolerance_and_renormalisation():
    mech = Mechanism([[0.5, 0.5 + 5e-10], [0.0, 1.0]])
    np.testing.assert_allclose(mech.matrix.sum(axis=1), 1.0, atol=1e-15)
    with raises_field("mechanism.matrix"):
        Mechanism([[0.5, 0.5 + 5e-9], [0.0, 1.0]])
    loose = Mechanism([[0.5, 0.51], [0.0, 1.0]], tol=0.02)
    np.testing.assert_allclose(loose.matrix[0], [0.5 / 1.01, 0.51 / 1.01])


def test_mechanism_validation_is_idempotent():
    rng = np.random.default_rng(7)
    for _ in range(200):
        mech = Mechanism(rng.dirichlet(np.ones(6), size=4))
        again = Mechanism(mech.matrix)
        np.testing.assert_array_equal(again.matrix, mech.matrix)


def test_mechanism_from_solver_cleans_tiny_negatives():
    mech = Mechanism.from_solver([[0.5 + 1e-9, 0.5, -1e-9], [0.0, 1.0, 0.0]])
    assert (mech.matrix >= 0).all()
    np.testing.assert_allclose(mech.matrix.sum(axis=1), 1.0, atol=1e-15)
    with raises_field("mechanism.matrix"):
        Mechanism.from_solver([[1.1, -0.1]])
    with raises_field("mechanism.matrix"):
        Mechanism.from_solver([[0.5, 0.4]])
    with raises_field("mechanism.matrix"):
        Mechanism.from_solver([[float("nan"), 1.0]])


def test_mechanism_properties_and_array_protocol():
    mech = Mechanism([[0.25, 0.75, 0.0], [1.0, 0.0, 0.0]])
    assert mech.shape == (2, 3)
    assert (mech.n_inputs, mech.n_outputs) == (2, 3)
    assert mech.input_labels == ("0", "1")
    assert mech.output_labels == ("0", "1", "2")
    np.testing.assert_array_equal(np.asarray(mech), mech.matrix)


def test_measures_reject_mismatched_shapes():
    with pytest.raises(InputError, match="3 rows but the prior has 2") as excinfo:
        measures.pml_level([0.5, 0.5], np.eye(3))
    check_field(excinfo, "mechanism")
    with raises_field("mechanism"):
        measures.mutual_information([0.5, 0.5], [[0.5, 0.6], [0.5, 0.5]])


# --- composition ----------------------------------------------------------------------------
def test_then_is_matrix_product_with_labels():
    rr = Mechanism([[0.75, 0.25], [0.25, 0.75]], ["a", "b"], ["u", "v"])
    assert rr.then(rr).matrix[0, 0] == pytest.approx(0.625, abs=1e-15)
    post = Mechanism([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]], ["u", "v"], ["p", "q", "r"])
    chain = rr.then(post)
    np.testing.assert_allclose(chain.matrix, rr.matrix @ post.matrix, atol=1e-15)
    assert chain.input_labels == ("a", "b")
    assert chain.output_labels == ("p", "q", "r")
    # a plain array is accepted as the post-processing
    np.testing.assert_allclose(rr.then(np.eye(2)).matrix, rr.matrix)


def test_then_rejects_mismatched_alphabets():
    with pytest.raises(InputError, match="alphabets must agree") as excinfo:
        Mechanism(np.eye(2)).then(np.eye(3))
    check_field(excinfo, "mechanism")


def test_parallel_product_and_ordering():
    a = Mechanism([[0.9, 0.1], [0.2, 0.8]], ["x0", "x1"], ["a0", "a1"])
    b = Mechanism([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]], output_labels=["b0", "b1", "b2"])
    both = a.parallel(b)
    assert both.shape == (2, 6)
    assert both.input_labels == ("x0", "x1")
    assert both.output_labels == (
        "(a0,b0)",
        "(a0,b1)",
        "(a0,b2)",
        "(a1,b0)",
        "(a1,b1)",
        "(a1,b2)",
    )
    for x in range(2):
        for u, v in itertools.product(range(2), range(3)):
            assert both.matrix[x, 3 * u + v] == pytest.approx(
                a.matrix[x, u] * b.matrix[x, v], abs=1e-15
            )
    # marginalising v recovers a; marginalising u recovers b
    np.testing.assert_allclose(both.matrix.reshape(2, 2, 3).sum(axis=2), a.matrix, atol=1e-15)
    np.testing.assert_allclose(both.matrix.reshape(2, 2, 3).sum(axis=1), b.matrix, atol=1e-15)
    with raises_field("mechanism"):
        a.parallel(np.eye(3))


# --- sampling -------------------------------------------------------------------------------
def test_sample_empirical_frequencies():
    mech = Mechanism([[0.2, 0.5, 0.3], [0.0, 0.1, 0.9]])
    draws = 100_000
    for x, row in enumerate(mech.matrix):
        out = mech.sample(np.full(draws, x), rng=12345)
        assert out.shape == (draws,)
        freq = np.bincount(out, minlength=3) / draws
        sigma = np.sqrt(row * (1 - row) / draws)
        assert np.all(np.abs(freq - row) <= 5 * sigma + 1e-12)
    # a zero-probability output never occurs
    assert not (mech.sample(np.ones(draws, dtype=int), rng=1) == 0).any()


def test_sample_tiny_probabilities():
    mech = Mechanism([[1e-300, 1e-3, 1.0 - 1e-3]])
    draws = 100_000
    out = mech.sample(np.zeros(draws, dtype=int), rng=2024)
    counts = np.bincount(out, minlength=3)
    assert counts[0] == 0
    # expected 100, standard deviation ~10
    assert 60 <= counts[1] <= 140
    assert counts[2] == draws - counts[1]


def test_sample_seed_reproducible_and_labels():
    mech = Mechanism([[0.5, 0.5], [0.1, 0.9]], input_labels=["lo", "hi"])
    first = mech.sample([0, 1, 1, 0] * 50, rng=99)
    second = mech.sample([0, 1, 1, 0] * 50, rng=99)
    np.testing.assert_array_equal(first, second)
    by_label = mech.sample(["lo", "hi", "hi", "lo"] * 50, rng=99)
    np.testing.assert_array_equal(first, by_label)
    generator = np.random.default_rng(99)
    np.testing.assert_array_equal(mech.sample([0, 1, 1, 0] * 50, rng=generator), first)
    assert mech.sample(1, rng=0).shape == (1,)


def test_sample_rejects_unknown_inputs():
    mech = Mechanism([[0.5, 0.5], [0.1, 0.9]], input_labels=["lo", "hi"])
    with raises_field("inputs"):
        mech.sample([2])
    with raises_field("inputs"):
        mech.sample([-1])
    with raises_field("inputs"):
        mech.sample(["mid"])


# --- JSON round trip ------------------------------------------------------------------------
def test_json_round_trip_is_exact():
    rng = np.random.default_rng(3)
    for _ in range(100):
        w = rng.dirichlet(np.ones(5), size=4)
        w[0, 1] = 0.0
        w[0] /= w[0].sum()
        mech = Mechanism(w, ["a", "b", "c", "d"], ["p", "q", "r", "s", "t"])
        text = mech.to_json()
        back = Mechanism.from_json(text)
        assert back == mech
        np.testing.assert_array_equal(back.matrix, mech.matrix)
        data = json.loads(text)
        assert set(data) == {"mechanism", "inputs", "outputs"}
        assert data["inputs"] == ["a", "b", "c", "d"]


def test_json_round_trip_keeps_tiny_entries():
    mech = Mechanism([[1e-300, 1.0 - 1e-3, 1e-3]])
    back = Mechanism.from_json(mech.to_json())
    assert back.matrix[0, 0] == 1e-300
    assert back == mech


def test_from_dict_accepts_matrix_key_and_rejects_garbage():
    mech = Mechanism.from_dict({"matrix": [[1.0, 0.0], [0.0, 1.0]]})
    np.testing.assert_array_equal(mech.matrix, np.eye(2))
    assert mech.input_labels == ("0", "1")
    with raises_field("mechanism"):
        Mechanism.from_dict({"inputs": ["a"]})
    with raises_field("mechanism"):
        Mechanism.from_json("{not json")
    with raises_field("mechanism.matrix"):
        Mechanism.from_json('{"mechanism": [[0.5, 0.6]]}')


def test_mechanism_equality():
    a = Mechanism([[0.5, 0.5]])
    assert a == Mechanism([[0.5, 0.5]])
    assert a != Mechanism([[0.5, 0.5]], output_labels=["x", "y"])
    assert a != Mechanism([[0.25, 0.75]])
    assert a.__eq__("not a mechanism") is NotImplemented


# --- neighbour relations --------------------------------------------------------------------
@pytest.mark.parametrize("m, n", [(2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (4, 2), (5, 1)])
def test_hamming_neighbors_structure(m, n):
    rel = hamming_neighbors(m, n)
    assert rel.kind == "hamming"
    assert rel.size == m**n
    assert rel.n_pairs == m**n * n * (m - 1)
    pairs = set(zip(rel.left.tolist(), rel.right.tolist(), strict=True))
    assert len(pairs) == rel.n_pairs  # no duplicates
    assert pairs == {(b, a) for a, b in pairs}  # symmetric
    digits = database_digits(m, n)
    differing = (digits[rel.left] != digits[rel.right]).sum(axis=1)
    assert (differing == 1).all()
    # complete: every pair differing in exactly one digit is present
    brute = {
        (a, b) for a in range(m**n) for b in range(m**n) if (digits[a] != digits[b]).sum() == 1
    }
    assert pairs == brute
    adj = rel.adjacency().toarray()
    assert (adj == adj.T).all()
    assert adj.sum() == rel.n_pairs
    assert not adj.diagonal().any()


def test_hamming_neighbors_validation():
    with raises_field("prior.database.m"):
        hamming_neighbors(1, 3)
    with raises_field("prior.database.n"):
        hamming_neighbors(2, 0)


def test_all_pairs():
    rel = all_pairs(4)
    assert rel.kind == "all"
    assert rel.n_pairs == 12
    pairs = set(zip(rel.left.tolist(), rel.right.tolist(), strict=True))
    assert pairs == {(a, b) for a in range(4) for b in range(4) if a != b}
    assert all_pairs(1).n_pairs == 0


def test_custom_relation_from_pairs_and_restriction():
    rel = NeighborRelation.from_pairs(4, [(0, 1), (2, 3), (1, 0)])
    assert rel.kind == "custom"
    pairs = set(zip(rel.left.tolist(), rel.right.tolist(), strict=True))
    assert pairs == {(0, 1), (1, 0), (2, 3), (3, 2)}
    sub = rel.restricted(np.array([0, 1, 2]))
    assert set(zip(sub.left.tolist(), sub.right.tolist(), strict=True)) == {(0, 1), (1, 0)}
    mask = np.array([False, False, True, True])
    sub2 = rel.restricted(mask)
    assert set(zip(sub2.left.tolist(), sub2.right.tolist(), strict=True)) == {(2, 3), (3, 2)}
    with raises_field("privacy.neighbors"):
        NeighborRelation.from_pairs(3, [(0, 3)])
    with raises_field("privacy.neighbors"):
        NeighborRelation.from_pairs(3, [(1, 1)])


def test_dp_level_uses_given_relation():
    # only the pair (0, 1) is constrained: the ratio between rows 0 and 2 is ignored
    w = np.array([[0.5, 0.5], [0.4, 0.6], [0.01, 0.99]])
    rel = NeighborRelation.from_pairs(3, [(0, 1)])
    assert measures.dp_level([1 / 3] * 3, w, neighbors=rel) == pytest.approx(
        np.log(0.5 / 0.4), abs=1e-12
    )
    assert measures.dp_level([1 / 3] * 3, w) == pytest.approx(np.log(50), abs=1e-12)
    with raises_field("privacy.neighbors"):
        measures.dp_level([1 / 3] * 3, w, neighbors="hamming")
    with raises_field("privacy.neighbors"):
        measures.dp_level([1 / 3] * 3, w, neighbors="bogus")
    with raises_field("privacy.neighbors"):
        measures.dp_level([1 / 3] * 3, w, neighbors=all_pairs(4))


# --- distortions ----------------------------------------------------------------------------
@pytest.mark.parametrize("m, n", [(2, 1), (2, 2), (2, 3), (3, 2), (4, 2)])
def test_database_hamming_counts_differing_rows(m, n):
    dist = Distortion.database_hamming(m, n)
    assert dist.is_database_hamming
    assert dist.shape == (m**n, m**n)
    digits = database_digits(m, n)
    expected = np.array([[np.sum(a != b) for b in digits] for a in digits], dtype=float)
    np.testing.assert_array_equal(dist.matrix, expected)
    assert dist.n_inputs == dist.n_outputs == m**n


def test_hamming_absolute_squared():
    np.testing.assert_array_equal(Distortion.hamming(3).matrix, 1 - np.eye(3))
    assert not Distortion.hamming(3).is_database_hamming
    np.testing.assert_array_equal(Distortion.absolute(3).matrix, [[0, 1, 2], [1, 0, 1], [2, 1, 0]])
    np.testing.assert_array_equal(Distortion.squared(3).matrix, [[0, 1, 4], [1, 0, 1], [4, 1, 0]])
    values = [0.0, 1.5, 4.0]
    np.testing.assert_allclose(
        Distortion.absolute(values=values).matrix,
        [[0, 1.5, 4], [1.5, 0, 2.5], [4, 2.5, 0]],
    )
    np.testing.assert_allclose(
        Distortion.squared(3, values=values).matrix,
        [[0, 2.25, 16], [2.25, 0, 6.25], [16, 6.25, 0]],
    )
    assert Distortion.absolute(values=values).kind == "absolute"
    assert Distortion.squared(values=values).kind == "squared"


def test_distortion_validation():
    with raises_field("distortion.values"):
        Distortion.absolute(2, values=[0.0, 1.0, 2.0])
    with raises_field("distortion"):
        Distortion.absolute()
    with raises_field("distortion.size"):
        Distortion.hamming(0)
    with raises_field("distortion.matrix"):
        Distortion.from_matrix([[0.0, -1.0], [1.0, 0.0]])
    with raises_field("distortion.matrix"):
        Distortion.from_matrix([[0.0, float("nan")]])
    with raises_field("distortion.output_labels"):
        Distortion.from_matrix([[0.0, 1.0]], output_labels=["u", "u"])
    with raises_field("distortion.values"):
        Distortion.absolute(values=[])
    rect = Distortion.from_matrix([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0]], output_labels=["a", "b", "c"])
    assert rect.shape == (2, 3)
    assert rect.output_labels == ("a", "b", "c")


def test_expected_distortion():
    p = np.array([0.2, 0.5, 0.3])
    w = np.array([[0.6, 0.4, 0.0], [0.1, 0.8, 0.1], [0.0, 0.5, 0.5]])
    d = Distortion.absolute(3)
    by_hand = sum(p[y] * w[y, u] * abs(y - u) for y in range(3) for u in range(3))
    assert d.expected(p, w) == pytest.approx(by_hand, abs=1e-15)
    assert measures.expected_distortion(p, w, d) == pytest.approx(by_hand, abs=1e-15)
    assert measures.expected_distortion(p, w, d.matrix) == pytest.approx(by_hand, abs=1e-15)
    assert measures.expected_distortion(p, np.eye(3), d) == 0.0
    with raises_field("distortion"):
        measures.expected_distortion(p, w, Distortion.hamming(2))


# --- neighbour relations given as pairs, as in problem files -----------------------------------
def test_neighbors_as_a_list_of_pairs_like_files():
    from privopt import design
    from privopt.validation import resolve_neighbors

    prior = Prior([0.4, 0.3, 0.2, 0.1], labels=["a", "b", "c", "d"])
    ref = NeighborRelation.from_pairs(4, [(0, 1), (1, 2)])
    adjacency = np.zeros((4, 4))
    adjacency[0, 1] = adjacency[1, 0] = adjacency[1, 2] = adjacency[2, 1] = 1
    for given in (
        [(0, 1), (1, 2)],
        [[0, 1], [1, 2]],
        np.array([[0, 1], [1, 2]]),
        [("a", "b"), ("b", "c")],
        {"edges": [(0, 1), (1, 2)]},
        {"adjacency": adjacency},
    ):
        rel = resolve_neighbors(prior, given)
        assert (rel.adjacency() != ref.adjacency()).nnz == 0
    by_pairs = design(prior, "hamming", "dp", epsilon=1.0, neighbors=[(0, 1), (1, 2)])
    by_relation = design(prior, "hamming", "dp", epsilon=1.0, neighbors=ref)
    assert by_pairs.distortion == pytest.approx(by_relation.distortion, abs=1e-12)
    assert by_pairs.distortion < design(prior, "hamming", "dp", epsilon=1.0).distortion - 1e-3
    with raises_field("privacy.neighbors[0]"):
        resolve_neighbors(prior, [(0, 9)])
    with raises_field("privacy.neighbors.edges[0]"):
        resolve_neighbors(prior, {"edges": [("a", "z")]})
    with raises_field("privacy.neighbors"):
        resolve_neighbors(prior, [(0,)])
    with raises_field("privacy.neighbors"):
        resolve_neighbors(prior, {"edge": [(0, 1)]})
    with raises_field("privacy.neighbors.adjacency"):
        resolve_neighbors(prior, {"adjacency": np.ones((4, 4))})
    with pytest.raises(InputError, match="list of pairs.*NeighborRelation.from_pairs"):
        resolve_neighbors(prior, "bogus")


# --- plain errors and readable reprs -------------------------------------------------------------
@pytest.mark.parametrize("rng", ["x", -1, 1.5, True, object()])
def test_sample_refuses_a_bad_rng_by_name(rng):
    mech = Mechanism([[0.5, 0.5], [0.2, 0.8]])
    with pytest.raises(InputError) as info:
        mech.sample([0], rng=rng)
    check_field(info, "rng")
    assert "numpy.random.Generator" in str(info.value)


def test_mechanism_repr_shows_a_small_matrix():
    small = Mechanism([[0.75, 0.25], [0.25, 0.75]])
    assert repr(small) == "Mechanism([[0.75, 0.25],\n           [0.25, 0.75]])"
    tiny = Mechanism([[1 - 1e-9, 1e-9], [0.0, 1.0]])
    assert "1.e-09" in repr(tiny)  # a tiny entry is not printed as a zero
    eight = Mechanism(np.full((8, 8), 1 / 8))
    assert repr(eight).count("\n") == 7
    large = Mechanism(np.full((9, 3), 1 / 3))
    assert repr(large) == "Mechanism(shape=(9, 3): 9 inputs × 3 outputs, see .matrix)"


@pytest.mark.parametrize(
    "probs, shown",
    [
        (["0.5", "0.5"], "the string '0.5'"),
        ([0.5, "0.5"], "the string '0.5'"),
        (np.array(["0.5", "0.5"]), "the string '0.5'"),
        ([True, False], "True"),
        ([0.5, True], "True"),
    ],
)
def test_numbers_given_as_strings_or_booleans_are_refused(probs, shown):
    with pytest.raises(InputError) as info:
        Prior(probs)
    check_field(info, "prior.probs")
    assert f"got {shown}" in str(info.value)
    with raises_field("mechanism.matrix"):
        Mechanism([[0.5, "0.5"], [1.0, 0.0]])
    with raises_field("distortion.matrix"):
        Distortion.from_matrix([["0", "1"], ["1", "0"]])
    assert Prior([np.float64(0.5), 1 / 2]).probs.tolist() == [0.5, 0.5]  # numbers still are
