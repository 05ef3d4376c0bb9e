"""The entropy-constrained least cost behind max-information leakage's certified bound."""

from __future__ import annotations

import numpy as np
import pytest

from privopt.notions.max_information_leakage import _least_cost_at_entropy


@pytest.mark.parametrize("scale", [1.0, 1e200, 1e300])
def test_the_bound_stays_between_the_least_and_the_largest_cost(scale):
    """A lower bound on ``min {a·r : H(r) ≥ h}`` lies between the column's least entry and
    its largest; with large costs ``−a/τ`` overflowed to ``−∞`` in every term and the
    "bound" came out ``+∞``, with a RuntimeWarning."""
    a = scale * np.random.default_rng(5).uniform(0.1, 3.0, (6, 4))
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        bound = _least_cost_at_entropy(a, 0.8)
    assert np.all(np.isfinite(bound))
    assert np.all(bound >= a.min(axis=0)) and np.all(bound <= a.max(axis=0))
    uniform = a.mean(axis=0)  # r uniform has the largest entropy (ln 6 ≥ 0.8): a·r ≥ bound
    assert np.all(bound <= uniform * (1 + 1e-12))
