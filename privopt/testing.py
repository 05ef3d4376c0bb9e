"""Checks that every notion and every method must pass: :func:`check_notion`,
:func:`check_method`.

A battery in the manner of scikit-learn's estimator checks: a new notion or method is run
through the same checks as every registered one, on small requests of each kind of prior it
takes (the instances of :data:`privopt.solve.method_notions.PRIOR_KINDS`). The checks try to
break *optimality*, not only feasibility:

* the answer is re-measured by the notion itself (its level within ε, its distortion as
  reported) and certified (the certificate's lower bound at most the distortion, within the
  stated gap);
* no explicit feasible mechanism does better: the best constant output (level 0) and the
  identity when its own level is within ε;
* the optimum ``D*(ε)`` does not increase with ε;
* a budget request at ``D*(ε)`` needs no more than ε (both modes agree; at the lowest level
  of each kind of prior);
* a method's certified answer agrees with an independent method's (another family of
  solver) on the same request, and its lower bound is not above that optimum.

Each check raises :class:`CheckFailure` (an :class:`AssertionError` naming the check) with the
request and the numbers when it fails, and
the functions return what they checked, so that a test can assert that something was.

Examples
--------
>>> from privopt.testing import check_notion
>>> checked = check_notion("pml", epsilons=(0.5,), kinds=("single",))
>>> len(checked) > 0
True
"""

from __future__ import annotations

__all__ = ["Checked", "CheckFailure", "check_method", "check_notion", "REFERENCE_METHODS"]

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privopt.errors import InputError, SolverError
from privopt.methods import METHODS
from privopt.notions import get_notion, notion_names
from privopt.request import DesignRequest
from privopt.solve.api import design
from privopt.solve.method_notions import PRIOR_KINDS, small_request
from privopt.solve.selection import why_not
from privopt.status import Status

#: Relative tolerance of the comparisons (the certification gap is 1e-6 of the scale).
TOLERANCE = 2e-6
#: Methods tried in turn as the independent reference of :func:`check_method` (the first one
#: that takes the request and is not the method checked).
REFERENCE_METHODS = ("sparse-highs", "CLARABEL", "block-ipm", "blahut-arimoto")


@dataclass(frozen=True)
class Checked:
    """One request a check ran on, and what it found.

    Attributes
    ----------
    notion : str
        The notion checked.
    kind : str
        The kind of prior (a key of :data:`~privopt.solve.method_notions.PRIOR_KINDS`).
    epsilon : float
        The level of the request (nats).
    distortion : float
        The optimum found.
    method : str
        The method that answered.
    """

    notion: str
    kind: str
    epsilon: float
    distortion: float
    method: str


class CheckFailure(AssertionError):
    """A check of the battery failed.

    Parameters
    ----------
    check : str
        Which check: ``"status"``, ``"verified"``, ``"level"`` (the re-measured level is
        above ε), ``"distortion"`` (the reported distortion is not the mechanism's),
        ``"bound"`` (the certificate's lower bound is above the distortion), ``"explicit"``
        (an explicit feasible mechanism does better), ``"monotone"`` (``D*`` increased with
        ε), ``"budget"`` (the two modes disagree) or ``"reference"`` (an independent
        method's optimum disagrees).
    message : str
        The request and the numbers.
    """

    def __init__(self, check: str, message: str):
        super().__init__(message)
        self.check = check


def _require(condition: bool, check: str, message: str) -> None:
    if not condition:
        raise CheckFailure(check, message)


def _slack(value: float) -> float:
    return TOLERANCE * (1.0 + abs(value))


def _where(notion: str, kind: str, epsilon: float) -> str:
    return f"{notion} on the {kind!r} prior at ε = {epsilon:g}"


def _explicit_mechanisms(request: DesignRequest) -> list[tuple[str, np.ndarray]]:
    """The best constant output, and the identity where inputs and outputs match."""
    d = request.distortion.matrix
    p = request.prior.input_probs
    constant = np.zeros_like(d)
    constant[:, int(np.argmin(p @ d))] = 1.0
    found = [("best constant output", constant)]
    if d.shape[0] == d.shape[1]:
        found.append(("identity", np.eye(d.shape[0])))
    return found


def _distortion(request: DesignRequest, mechanism: np.ndarray) -> float:
    """``E[d]`` of a mechanism under the request's prior (inputs ``y``)."""
    p = request.prior.input_probs
    return float(np.sum(p[:, None] * request.distortion.matrix * mechanism))


def _check_answer(request: DesignRequest, result, where: str) -> None:
    """Re-measure and certify one answer, and hold it against explicit mechanisms."""
    eps = float(request.epsilon)
    _require(result.status == Status.OPTIMAL, "status", f"{where}: status {result.status}")
    _require(result.verified, "verified", f"{where}: not verified")
    matrix = result.mechanism.matrix
    level = request.level_of(matrix)
    _require(level <= eps + _slack(eps), "level", f"{where}: re-measured level {level} above ε")
    expected = float(
        np.sum(request.prior.input_probs[:, None] * request.distortion.matrix * matrix)
    )
    _require(
        abs(expected - result.distortion) <= _slack(expected),
        "distortion",
        f"{where}: reported distortion {result.distortion}, re-measured {expected}",
    )
    bound = result.certificate.lower_bound
    _require(
        bound is not None and bound <= result.distortion + _slack(result.distortion),
        "bound",
        f"{where}: lower bound {bound} above the distortion {result.distortion}",
    )
    for name, mechanism in _explicit_mechanisms(request):
        if request.level_of(mechanism) > eps:
            continue
        value = _distortion(request, mechanism)
        _require(
            result.distortion <= value + _slack(value),
            "explicit",
            f"{where}: the {name} (distortion {value}) beats the optimum {result.distortion}",
        )


def check_notion(
    notion: str,
    *,
    epsilons: Sequence[float] = (0.3, 1.0, 3.0),
    kinds: Sequence[str] | None = None,
) -> list[Checked]:
    """Run the notion checks on small requests of every kind of prior the notion takes.

    Parameters
    ----------
    notion : str
        A registered notion (or alias).
    epsilons : sequence of float
        Levels, in increasing order.
    kinds : sequence of str, optional
        Kinds of prior (default: all of
        :data:`~privopt.solve.method_notions.PRIOR_KINDS`); a kind the notion does not take
        is passed over.

    Returns
    -------
    list of Checked
        One entry per request checked (empty only when the notion takes none of the kinds).

    Raises
    ------
    CheckFailure
        When a check fails; the message names the request and the numbers.
    """
    name = get_notion(notion).name
    done: list[Checked] = []
    for kind in kinds if kinds is not None else PRIOR_KINDS:
        previous = None
        for eps in sorted(float(e) for e in epsilons):
            try:
                request = small_request(kind, name, epsilon=eps)
            except InputError:  # the notion does not take this kind of prior
                break
            where = _where(name, kind, eps)
            if eps < request.least_level():
                continue
            result = design(
                request.prior, request.distortion, name, epsilon=eps, **_options(request)
            )
            _check_answer(request, result, where)
            if previous is not None:
                _require(
                    result.distortion <= previous + _slack(previous),
                    "monotone",
                    f"{where}: D*(ε) = {result.distortion} above D* at a lower level {previous}",
                )
            if previous is None:  # both modes agree (once per kind: a line search is long)
                _check_budget(request, result, name, where)
            previous = result.distortion
            done.append(Checked(name, kind, eps, float(result.distortion), result.solver.name))
    return done


def _options(request: DesignRequest) -> dict:
    """The request's notion options and neighbours, as :func:`privopt.design` takes them."""
    options = dict(request.options)
    if request.notion.uses_neighbors and request.neighbors is not None:
        options["neighbors"] = request.neighbors
    return options


def _check_budget(request: DesignRequest, result, name: str, where: str) -> None:
    """A budget request at the optimum's distortion needs no more than its level."""
    budget = float(result.distortion) + _slack(float(result.distortion))
    if budget < request.least_distortion():
        return
    answer = design(
        request.prior,
        request.distortion,
        name,
        max_distortion=budget,
        raise_on_infeasible=False,
        **_options(request),
    )
    eps = float(request.epsilon)
    if answer.status != Status.OPTIMAL:
        raise CheckFailure(
            "budget", f"{where}: the budget request at D* = {budget} gave {answer.status}"
        )
    _require(
        answer.epsilon <= eps + 1e-4 * (1.0 + eps),
        "budget",
        f"{where}: the budget request at D* needs level {answer.epsilon}, above ε",
    )
    _require(
        answer.distortion <= budget + _slack(budget),
        "budget",
        f"{where}: the budget answer's distortion {answer.distortion} exceeds {budget}",
    )


def check_method(
    method: str,
    *,
    epsilons: Sequence[float] = (0.5, 2.0),
    notions: Sequence[str] | None = None,
) -> list[Checked]:
    """Run the method checks on every notion and kind of prior the method accepts.

    For each small request the method takes (its own applicability rule), its answer is
    re-measured, certified and held against explicit mechanisms (as in :func:`check_notion`),
    and compared with an independent method's certified optimum (the first of
    :data:`REFERENCE_METHODS` that takes the request).

    Parameters
    ----------
    method : str
        A registered method name (see :func:`privopt.method_names`).
    epsilons : sequence of float
    notions : sequence of str, optional
        Default: every registered notion.

    Returns
    -------
    list of Checked
        One entry per request the method answered.

    Raises
    ------
    KeyError
        For a method that is not registered.
    CheckFailure
        When a check fails.
    """
    subject = METHODS[method]
    done: list[Checked] = []
    for name in notions if notions is not None else notion_names():
        for kind in PRIOR_KINDS:
            for eps in epsilons:
                try:
                    request = small_request(kind, name, epsilon=float(eps))
                except InputError:
                    break
                if why_not(subject, request) is not None or eps < request.least_level():
                    continue
                where = f"{method}: {_where(name, kind, float(eps))}"
                try:
                    result = design(
                        request.prior,
                        request.distortion,
                        name,
                        epsilon=float(eps),
                        solver=method,
                        raise_on_infeasible=False,
                        **_options(request),
                    )
                except SolverError:
                    # the method's answer failed privopt's verification (e.g. a first-order
                    # solver's rows off by 1e-6): refused, never reported as an optimum
                    continue
                if result.status == Status.OPTIMAL_INACCURATE:
                    continue  # an uncertified answer claims nothing to hold against
                _check_answer(request, result, where)
                _check_against_reference(request, result, method, name, float(eps), where)
                done.append(Checked(name, kind, float(eps), float(result.distortion), method))
    return done


def _check_against_reference(
    request: DesignRequest, result, method: str, name: str, eps: float, where: str
) -> None:
    for reference in REFERENCE_METHODS:
        other = METHODS.get(reference)
        if other is None or reference == method or why_not(other, request) is not None:
            continue
        theirs = design(
            request.prior,
            request.distortion,
            name,
            epsilon=eps,
            solver=reference,
            raise_on_infeasible=False,
            **_options(request),
        )
        if theirs.status != Status.OPTIMAL:
            continue
        gap = abs(theirs.distortion - result.distortion)
        _require(
            gap <= 10 * _slack(theirs.distortion),
            "reference",
            f"{where}: {result.distortion} against {theirs.distortion} from {reference}",
        )
        bound = result.certificate.lower_bound
        _require(
            bound <= theirs.distortion + 10 * _slack(theirs.distortion),
            "reference",
            f"{where}: lower bound {bound} above {reference}'s optimum {theirs.distortion}",
        )
        return
