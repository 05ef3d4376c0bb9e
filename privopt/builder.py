"""The problem builder: (prior, distortion, notion, mode) → a cvxpy program.

:func:`build_problem` returns a :class:`PrivacyProblem` that exposes the ``cvxpy.Problem``
(so a user can add constraints the cvxpy way, see :meth:`PrivacyProblem.add_constraints`)
and what the solver layer needs to interpret its solution. The privacy level enters as a
cvxpy ``Parameter`` in DPP form (``c = e^ε`` for the linear notions, ε itself for the
information measures), so sweeps re-solve without recompiling.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from privopt.errors import InputError
from privopt.model import (
    DatabasePrior,
    Distortion,
    JointPrior,
    NeighborRelation,
    Prior,
    all_pairs,
    as_prior,
    hamming_neighbors,
)
from privopt.notions import DesignContext, Notion, get_notion

__all__ = [
    "DesignRequest",
    "PrivacyProblem",
    "build_problem",
    "prepare_request",
    "resolve_neighbors",
    "observing_secret",
    "MODES",
]

MODES = ("epsilon", "max_distortion")


def _as_distortion(distortion, prior) -> Distortion:
    if isinstance(distortion, Distortion):
        d = distortion
    elif isinstance(distortion, str):
        if distortion == "hamming" and prior.is_database:
            d = Distortion.database_hamming(prior.m, prior.n)
        elif distortion in ("hamming", "absolute", "squared"):
            d = getattr(Distortion, distortion)(prior.n_inputs)
        else:
            raise InputError(
                f"unknown distortion {distortion!r}: pass a Distortion, a matrix, or one of "
                "'hamming', 'absolute', 'squared'",
                "distortion",
            )
    else:
        d = Distortion.from_matrix(distortion)
    if d.n_inputs != prior.n_inputs:
        raise InputError(
            f"the distortion has {d.n_inputs} rows but the prior has {prior.n_inputs} inputs: "
            "one row per input symbol (rows = inputs y, columns = outputs u)",
            "distortion",
        )
    return d


def resolve_neighbors(prior, neighbors: NeighborRelation | str | None) -> NeighborRelation:
    """The neighbour relation on the secrets: ``"hamming"`` (default on databases) or ``"all"``
    (default otherwise), or a :class:`NeighborRelation`."""
    if neighbors is None:
        neighbors = "hamming" if prior.is_database else "all"
    if isinstance(neighbors, NeighborRelation):
        if neighbors.size != prior.n_secrets:
            raise InputError(
                f"the relation is on {neighbors.size} inputs but the secret has "
                f"{prior.n_secrets} symbols",
                "privacy.neighbors",
            )
        return neighbors
    if neighbors == "hamming":
        if not prior.is_database:
            raise InputError(
                "neighbors = 'hamming' needs a database prior ([prior.database] with m and n); "
                "on a single alphabet use neighbors = 'all'",
                "privacy.neighbors",
            )
        return hamming_neighbors(prior.m, prior.n)
    if neighbors == "all":
        return all_pairs(prior.n_secrets)
    raise InputError(
        f"unknown neighbour relation {neighbors!r}: use 'hamming' or 'all'", "privacy.neighbors"
    )


def observing_secret(prior: JointPrior, distortion: Distortion) -> tuple[JointPrior, Distortion]:
    """Calmon–Fawaz [002] Remarks 3–4: the mechanism sees ``(Y, S)``.

    Returned as an ordinary joint prior whose observation is the pair ``(s, y)``:
    ``p(s, (s', y)) = p(s, y)·[s = s']``, with ``d((s, y), u) = d(y, u)``. Theorem 1 / 2 on it
    is exactly the program with variables ``p(u|y, s)`` and constraints (18)–(19).
    """
    if not isinstance(prior, JointPrior):
        raise InputError("observe_secret needs a joint prior p(s, y)", "prior")
    n_s, n_y = prior.joint.shape
    joint = np.zeros((n_s, n_s * n_y))
    for s in range(n_s):
        joint[s, s * n_y : (s + 1) * n_y] = prior.joint[s]
    labels = [f"({s},{y})" for s in prior.secret_labels for y in prior.labels]
    expanded = JointPrior(joint, prior.secret_labels, labels)
    d = np.tile(distortion.matrix, (n_s, 1))
    return expanded, Distortion(d, output_labels=distortion.output_labels, kind=distortion.kind)


class PrivacyProblem:
    """A built privacy-design program.

    Attributes
    ----------
    prior, distortion, notion
        The inputs (validated).
    mode : str
        ``"epsilon"`` (minimise E[d] s.t. level ≤ ε) or ``"max_distortion"``.
    W : cvxpy.Variable
        The mechanism ``p(u|y)``.
    problem : cvxpy.Problem
        The program. In max_distortion mode for a notion without a direct level objective, this
        is the ε-mode program that the line search re-solves.
    level_parameter, budget_parameter : cvxpy.Parameter or None
        ``e^ε`` (or ε) and the distortion budget.
    """

    def __init__(
        self,
        prior,
        distortion: Distortion,
        notion: Notion,
        mode: str,
        epsilon: float | None,
        max_distortion: float | None,
        neighbors: NeighborRelation | None,
        extra_distortions: Sequence[tuple[Distortion, float]],
        options: dict,
    ):
        self.prior = prior
        self.distortion = distortion
        self.notion = notion
        self.mode = mode
        self.neighbors = neighbors
        self.options = options
        self.extra_distortions = list(extra_distortions)
        start = time.perf_counter()
        self._build(epsilon, max_distortion)
        self.build_time = time.perf_counter() - start

    @classmethod
    def from_request(cls, request: DesignRequest) -> PrivacyProblem:
        """Build the program of a validated :class:`DesignRequest`."""
        return cls(
            request.prior,
            request.distortion,
            request.notion,
            request.mode,
            request.epsilon,
            request.max_distortion,
            request.neighbors,
            request.extra_distortions,
            request.options,
        )

    # --- construction -----------------------------------------------------------------------
    def _build(self, epsilon, max_distortion) -> None:
        prior, notion = self.prior, self.notion
        n_y, n_u = self.distortion.shape
        self.W = cp.Variable((n_y, n_u), nonneg=True, name="W")
        support = prior.secret_support
        channel_all = prior.induced_channel(self.W)
        channel = channel_all if support.size == prior.n_secrets else channel_all[support, :]
        p_u = prior.input_probs @ self.W
        rel = None
        if self.neighbors is not None:
            rel = self.neighbors.restricted(support)
            position = np.full(prior.n_secrets, -1)
            position[support] = np.arange(support.size)
            rel = NeighborRelation(support.size, position[rel.left], position[rel.right], rel.kind)
        self.context = DesignContext(
            prior=prior,
            W=self.W,
            channel=channel,
            p_secret=prior.secret_probs[support],
            p_u=p_u,
            secret_index=support,
            neighbors=rel,
            options=self.options,
        )
        weights = prior.input_probs[:, None] * self.distortion.matrix
        self.expected_distortion = cp.sum(cp.multiply(weights, self.W))
        base = [cp.sum(self.W, axis=1) == 1]
        for extra, budget in self.extra_distortions:
            extra_w = prior.input_probs[:, None] * extra.matrix
            base.append(cp.sum(cp.multiply(extra_w, self.W)) <= budget)
        self.level_parameter = None
        self.budget_parameter = None
        if self.mode == "max_distortion" and notion.direct_level:
            self.budget_parameter = cp.Parameter(nonneg=True, name="max_distortion")
            self.budget_parameter.value = float(max_distortion)
            objective = cp.Minimize(notion.level_objective(self.context))
            constraints = [*base, self.expected_distortion <= self.budget_parameter]
        else:
            self.level_parameter = cp.Parameter(nonneg=True, name="level")
            # levels beyond 30 nats are imposed by repair in the solver layer (e^ε overflows)
            usable = epsilon is not None and math.isfinite(epsilon) and epsilon <= 30.0
            self.level_parameter.value = notion.parameter_value(epsilon if usable else 0.0)
            objective = cp.Minimize(self.expected_distortion)
            constraints = [*base, *notion.constraints(self.context, self.level_parameter)]
        self._base_constraints = constraints
        self._user_constraints: list[cp.Constraint] = []
        self.problem = cp.Problem(objective, constraints)
        self.epsilon = epsilon
        self.max_distortion = max_distortion

    # --- updates ----------------------------------------------------------------------------
    @property
    def uses_line_search(self) -> bool:
        return self.mode == "max_distortion" and not self.notion.direct_level

    def set_epsilon(self, eps: float) -> None:
        """Set the level ε (nats) without rebuilding (DPP parameter)."""
        if self.level_parameter is None:
            raise InputError("this problem has no level parameter (max_distortion mode)", "epsilon")
        self.epsilon = float(eps)
        self.level_parameter.value = self.notion.parameter_value(self.epsilon)

    def set_max_distortion(self, budget: float) -> None:
        """Set the distortion budget without rebuilding."""
        self.max_distortion = float(budget)
        if self.budget_parameter is not None:
            self.budget_parameter.value = self.max_distortion

    def add_constraints(self, *constraints: cp.Constraint) -> PrivacyProblem:
        """Add cvxpy constraints on :attr:`W` (e.g. ``W[0, 1] == 0``) and rebuild the program."""
        self._user_constraints.extend(constraints)
        self.problem = cp.Problem(
            self.problem.objective, [*self._base_constraints, *self._user_constraints]
        )
        return self

    @property
    def user_constraints(self) -> list[cp.Constraint]:
        return list(self._user_constraints)

    def __repr__(self) -> str:
        return (
            f"PrivacyProblem(notion={self.notion.name!r}, mode={self.mode!r}, "
            f"shape={self.W.shape}, {self.notion.convexity})"
        )


def _check_level(value, field: str, allow_inf: bool = True) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(f"expected a number, got {value!r}", field) from None
    if math.isnan(value) or value < 0 or (not allow_inf and math.isinf(value)):
        raise InputError(f"must be a number ≥ 0, got {value}", field)
    return value


def validate_request(epsilon, max_distortion) -> tuple[str, float | None, float | None]:
    """Exactly one of ``epsilon`` and ``max_distortion``; both non-negative numbers."""
    if (epsilon is None) == (max_distortion is None):
        raise InputError(
            "give exactly one of 'epsilon' (minimise distortion at that privacy level) and "
            "'max_distortion' (minimise the level within that distortion budget)",
            "privacy",
        )
    if epsilon is not None:
        return "epsilon", _check_level(epsilon, "privacy.epsilon"), None
    return "max_distortion", None, _check_level(max_distortion, "privacy.max_distortion", False)


def prepare_request(
    prior,
    distortion,
    notion: str | Notion,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors: NeighborRelation | str | None = None,
    extra_distortions: Sequence[tuple] = (),
    observe_secret: bool = False,
    priors: Sequence | None = None,
) -> DesignRequest:
    """Validate one design request (no cvxpy); arguments as in :func:`build_problem`."""
    prior = as_prior(prior) if not isinstance(prior, (Prior, JointPrior, DatabasePrior)) else prior
    notion = get_notion(notion)
    mode, epsilon, max_distortion = validate_request(epsilon, max_distortion)
    distortion = _as_distortion(distortion, prior)
    extras = []
    for i, item in enumerate(extra_distortions):
        try:
            extra, budget = item
        except (TypeError, ValueError):
            raise InputError("expected pairs (distortion, budget)", "extra_distortions") from None
        extra = extra if isinstance(extra, Distortion) else Distortion.from_matrix(extra)
        if extra.shape != distortion.shape:
            raise InputError(
                f"has shape {extra.shape} but the main distortion has {distortion.shape}",
                f"extra_distortions[{i}]",
            )
        extras.append((extra, _check_level(budget, f"extra_distortions[{i}].budget", False)))
    if observe_secret:
        prior, distortion = observing_secret(prior, distortion)
        extras = [(observing_secret_distortion(prior, e), b) for e, b in extras]
    rel = resolve_neighbors(prior, neighbors) if notion.uses_neighbors else None
    if neighbors is not None and not notion.uses_neighbors and notion.name != "ldp":
        raise InputError(
            f"the notion {notion.name!r} takes no neighbour relation; only 'dp' and "
            "'identifiability' do",
            "privacy.neighbors",
        )
    options = {}
    if notion.name == "robust_pml":
        options["priors"] = priors
    elif priors is not None:
        raise InputError("'priors' is only used by the notion 'robust_pml'", "privacy.priors")
    return DesignRequest(
        prior, distortion, notion, mode, epsilon, max_distortion, rel, extras, options
    )


def observing_secret_distortion(expanded: JointPrior, distortion: Distortion) -> Distortion:
    """Tile a distortion over the ``(s, y)`` inputs of :func:`observing_secret`."""
    n_s = expanded.n_secrets
    return Distortion(np.tile(distortion.matrix, (n_s, 1)), kind=distortion.kind)


@dataclass
class DesignRequest:
    """A validated request, before any program is built (shared by the cvxpy path and the
    fast paths of :mod:`privopt.algorithms`)."""

    prior: object
    distortion: Distortion
    notion: Notion
    mode: str
    epsilon: float | None
    max_distortion: float | None
    neighbors: NeighborRelation | None
    extra_distortions: list
    options: dict
    build_time: float = 0.0

    @property
    def user_constraints(self) -> list:
        return []

    @property
    def uses_line_search(self) -> bool:
        return self.mode == "max_distortion" and not self.notion.direct_level


def build_problem(
    prior,
    distortion,
    notion: str | Notion,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors: NeighborRelation | str | None = None,
    extra_distortions: Sequence[tuple] = (),
    observe_secret: bool = False,
    priors: Sequence | None = None,
) -> PrivacyProblem:
    """Build the cvxpy program for one design request.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        What the designer knows (a plain pmf is a single-secret :class:`Prior`).
    distortion : Distortion, array_like or "hamming"
        ``d[y, u]``; its column count sets the output alphabet.
    notion : str or Notion
        A registered notion (:func:`privopt.notions.notion_names`).
    epsilon : float, optional
        Minimise ``E[d]`` subject to level ≤ ε (nats).
    max_distortion : float, optional
        Minimise the level subject to ``E[d] ≤ max_distortion``.
    neighbors : NeighborRelation or {"hamming", "all"}, optional
        For ``dp`` and ``identifiability``; default Hamming on databases, all pairs otherwise.
    extra_distortions : sequence of (Distortion or matrix, budget)
        Further constraints ``E[d_k] ≤ budget_k`` ([002] Remark 1).
    observe_secret : bool
        The mechanism sees ``(Y, S)`` ([002] Remarks 3–4); needs a joint prior.
    priors : sequence of pmfs, optional
        The prior class of ``robust_pml``.

    Returns
    -------
    PrivacyProblem
    """
    request = prepare_request(
        prior,
        distortion,
        notion,
        epsilon=epsilon,
        max_distortion=max_distortion,
        neighbors=neighbors,
        extra_distortions=extra_distortions,
        observe_secret=observe_secret,
        priors=priors,
    )
    return PrivacyProblem.from_request(request)
