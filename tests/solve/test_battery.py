"""Every registered notion and method through the public battery (:mod:`privopt.testing`),
in the manner of scikit-learn's estimator checks: a new notion or method is tested by
registering it."""

from __future__ import annotations

import numpy as np
import pytest

from privopt.methods import METHODS
from privopt.notions import notion_names
from privopt.testing import Checked, CheckFailure, check_method, check_notion


@pytest.mark.parametrize("notion", notion_names())
def test_every_notion_passes_the_notion_checks(notion):
    checked = check_notion(notion)
    assert checked, f"{notion}: no kind of prior was checked"
    assert all(isinstance(c, Checked) and c.notion == notion for c in checked)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_passes_the_method_checks(method):
    checked = check_method(method)
    assert all(c.method == method for c in checked)


def test_the_methods_of_privopt_answer_on_the_battery():
    """The checks above must not pass by checking nothing: privopt's own methods answer."""
    for method in ("sparse-highs", "block-ipm", "blahut-arimoto", "symmetric"):
        assert check_method(method), method


def test_a_method_that_claims_a_wrong_optimum_is_caught(monkeypatch):
    """A broken method (its answer is the identity, claimed optimal with a bound equal to
    its distortion) fails the battery: the check compares with explicit mechanisms and an
    independent method, not only with the method's own claim."""
    from privopt.methods.base import Answer, Certificate, Method
    from privopt.status import Status

    class Overconfident(Method):
        name = "overconfident-test"
        description = "returns the best constant output and claims it optimal"
        family = "privopt"

        def unsupported(self, request):
            return None if request.notion.name == "ldp" else "ldp only"

        def solve(self, task):
            request = task.request
            d = request.distortion.matrix
            p = request.prior.input_probs
            W = np.zeros_like(d)
            W[:, int(np.argmin(p @ d))] = 1.0
            value = float(np.sum(p[:, None] * d * W))
            return Answer(
                Status.OPTIMAL,
                self.name,
                matrix=W,
                objective=value,
                certificate=Certificate(value, "claimed"),
            )

    monkeypatch.setitem(METHODS, Overconfident.name, Overconfident())
    with pytest.raises(CheckFailure) as info:
        check_method(Overconfident.name, notions=["ldp"])
    assert info.value.check == "reference"  # an independent method's optimum is lower
