"""Adaptive composition (Mechanism.compose_adaptive), the bounds of Theorem 4 of the PML paper
(Saeidian et al. 2023), and `privopt audit` of a composition described in a file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privopt as po
from privopt import closed_forms, measures
from privopt.cli import main
from privopt.errors import InputError


def random_composition(seed: int, nx=3, ny=2, nz=3):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(nx))
    W1 = rng.dirichlet(np.ones(ny), nx)
    W2 = rng.dirichlet(np.ones(nz), (ny, nx))  # W2[y][x, z]
    return p, W1, W2


def brute_joint(W1, W2):
    nx, ny = W1.shape
    nz = W2.shape[2]
    out = np.zeros((nx, ny * nz))
    for x in range(nx):
        for y in range(ny):
            for z in range(nz):
                out[x, y * nz + z] = W1[x, y] * W2[y][x, z]
    return out


def pml_per_output(p, W):
    pu = p @ W
    return np.log(W.max(axis=0) / pu)


def test_compose_adaptive_is_the_joint_release():
    _, W1, W2 = random_composition(1)
    first = po.Mechanism(W1, ["a", "b", "c"], ["y0", "y1"])
    joint = first.compose_adaptive(W2, labels=["z0", "z1", "z2"])
    assert np.allclose(joint.matrix, brute_joint(W1, W2))
    assert joint.output_labels[4] == "(y1,z1)" and joint.input_labels == ("a", "b", "c")
    # a second stage that ignores y is the parallel release
    other = np.random.default_rng(2).dirichlet(np.ones(3), 3)
    assert np.allclose(first.compose_adaptive([other, other]).matrix, first.parallel(other).matrix)
    with pytest.raises(InputError, match="one p\\(z\\|x, y\\) per output"):
        first.compose_adaptive([other])
    with pytest.raises(InputError, match="must be 3 × 3"):
        first.compose_adaptive([other, other[:, :2] / other[:, :2].sum(1, keepdims=True)])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_joint_pml_within_theorem_4_part_1(seed):
    p, W1, W2 = random_composition(seed)
    levels = measures.adaptive_composition_levels(p, W1, W2)
    joint = brute_joint(W1, W2)
    assert levels["joint"] == pytest.approx(pml_per_output(p, joint).max(), abs=1e-12)
    assert levels["first"] == pytest.approx(pml_per_output(p, W1).max(), abs=1e-12)
    # ε₂: PML of each second stage under the posterior p(x|y)
    eps2 = 0.0
    for y in range(W1.shape[1]):
        post = p * W1[:, y] / (p @ W1[:, y])
        eps2 = max(eps2, pml_per_output(post, W2[y]).max())
    assert levels["second"] == pytest.approx(eps2, abs=1e-12)
    assert levels["joint"] <= closed_forms.adaptive_composition_pml(eps2, levels["first"]) + 1e-12


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_theorem_4_part_2_tail_bound_holds(seed, eps1, eps2):
    p, W1, W2 = random_composition(seed, nx=4, ny=3, nz=3)
    ell_y = pml_per_output(p, W1)
    p_y = p @ W1
    delta1 = float(p_y[ell_y > eps1].sum())
    delta2 = 0.0
    for y in range(W1.shape[1]):
        post = p * W1[:, y] / p_y[y]
        ell_z = pml_per_output(post, W2[y])
        delta2 = max(delta2, float((post @ W2[y])[ell_z > eps2].sum()))
    joint = brute_joint(W1, W2)
    ell = pml_per_output(p, joint)
    tail = float((p @ joint)[ell > eps1 + eps2 + 1e-12].sum())
    delta1, delta2 = min(delta1, 1.0), min(delta2, 1.0)  # sums of probabilities may round up
    eps, delta = closed_forms.adaptive_composition_pml_delta(eps1, delta1, eps2, delta2)
    assert eps == pytest.approx(eps1 + eps2)
    assert tail <= delta + 1e-12


def test_theorem_4_formulas():
    assert closed_forms.adaptive_composition_pml_delta(0.1, 0.2, 0.3, 0.5) == pytest.approx(
        (0.4, 0.6)
    )
    assert closed_forms.adaptive_composition_pml_tail(0.1, 0.7, 0.3, 0.5) == pytest.approx(
        (0.4, 1.0)
    )
    assert closed_forms.adaptive_composition_eml_pml(0.1, 0.2, 0.3) == pytest.approx((0.4, 0.2))
    eps, delta = closed_forms.adaptive_composition_eml(0.1, 0.2, 0.3, 0.1, math.log(5))
    assert eps == pytest.approx(math.log(0.1 / 0.3 * 5 + math.exp(0.4)))
    assert delta == pytest.approx(0.3)
    assert closed_forms.adaptive_composition_eml(0.1, 0, 0.3, 0, 2.0) == pytest.approx((0.4, 0))
    with pytest.raises(InputError):
        closed_forms.adaptive_composition_pml_delta(0.1, 1.5, 0.1, 0.1)


def test_geometric_mechanism_is_dp_on_the_path():
    G = closed_forms.geometric_mechanism(0.7, 6)
    assert np.allclose(G.matrix.sum(axis=1), 1)
    rel = po.NeighborRelation.from_pairs(6, [(i, i + 1) for i in range(5)])
    assert measures.dp_level(np.full(6, 1 / 6), G.matrix, rel) == pytest.approx(0.7)


COMP = """
[prior]
probs = [0.5, 0.3, 0.2]
[composition]
first = [[0.6, 0.4], [0.3, 0.7], [0.5, 0.5]]
{second}
"""


@pytest.mark.parametrize(
    ("second", "kind"),
    [
        (
            "adaptive = [[[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]],\n"
            "            [[0.5, 0.5], [0.7, 0.3], [0.1, 0.9]]]",
            "adaptive",
        ),
        ("then = [[0.8, 0.2], [0.1, 0.9]]", "then"),
        ("parallel = [[0.8, 0.2], [0.1, 0.9], [0.5, 0.5]]", "parallel"),
    ],
)
def test_audit_of_a_composition_file(tmp_path, capsys, second, kind):
    path = tmp_path / "c.toml"
    path.write_text(COMP.format(second=second))
    code = main(["audit", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    comp = data["composition"]
    assert comp["kind"] == kind
    assert comp["joint"] <= comp["bound"] + 1e-12
    assert comp["joint"] == pytest.approx(data["leakage"]["pml"], abs=1e-12)
    code = main(["audit", str(path)])
    assert code == 0 and "composition (" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("second", "key"),
    [
        ("adaptive = [[[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]]", "composition.adaptive"),
        ("then = [[0.8, 0.2]]", "composition.then"),
        ("parallel = [[0.8, 0.2]]", "composition.parallel"),
        ("then = [[1, 0], [0, 1]]\nparallel = [[1, 0], [0, 1], [1, 0]]", "exactly one"),
        ("", "exactly one"),
    ],
)
def test_composition_errors_exit_2(tmp_path, capsys, second, key):
    path = tmp_path / "c.toml"
    path.write_text(COMP.format(second=second))
    assert main(["audit", str(path)]) == 2
    assert key in capsys.readouterr().err
