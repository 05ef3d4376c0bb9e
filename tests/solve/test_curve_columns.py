"""``Curve.column`` on the text columns of a curve (issue 17, rough edges): ``column("status")``
used to raise a raw ``ValueError`` from numpy ("could not convert string to float"); it now
raises privopt's :class:`~privopt.InputError` naming the column and where to read it."""

from __future__ import annotations

import numpy as np
import pytest

import privopt as po


@pytest.fixture(scope="module")
def curve():
    prior = po.DatabasePrior(m=2, n=1, row_probs=[0.9, 0.1])  # identifiability: ε_X = ln 9
    return po.sweep(prior, "hamming", "identifiability", epsilons=[1.0, 3.0])


@pytest.mark.parametrize("key", ["status", "notion", "message"])
def test_a_text_column_is_an_input_error_naming_it(curve, key):
    assert [r["status"] for r in curve.records] == ["infeasible", "optimal"]
    with pytest.raises(po.InputError) as info:
        curve.column(key)
    error = info.value
    assert isinstance(error, po.PrivoptError)
    assert f"the column {key!r} holds text" in str(error) and "curve.records" in str(error)
    assert "could not convert" not in str(error)


def test_numeric_columns_still_read_as_floats(curve):
    np.testing.assert_array_equal(curve.column("requested_epsilon"), [1.0, 3.0])
    eps = curve.column("epsilon")
    assert np.isnan(eps[0]) and eps[1] == pytest.approx(3.0, abs=1e-6)  # infeasible: no level
    assert curve.column("verified").tolist() == [0.0, 1.0]
    assert [r["status"] for r in curve.records] == ["infeasible", "optimal"]  # text: records
