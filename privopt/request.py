"""A validated design request: what every method and the solve driver work from.

:func:`prepare_request` turns what a user gives (a pmf or prior object, a distortion name or
matrix, a notion name, a level or a budget, neighbours, extra budgets, notion options) into
a :class:`DesignRequest` through :mod:`privopt.validation`. Nothing here builds a program.
"""

from __future__ import annotations

__all__ = [
    "DesignRequest",
    "prepare_request",
    "observing_secret",
    "exchangeable_form",
    "DESIGN_KEYWORDS",
]

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privopt import measures
from privopt.errors import InputError
from privopt.model import DatabasePrior, Distortion, JointPrior, NeighborRelation
from privopt.model.types import DistortionLike, NeighborsLike, PriorLike
from privopt.notions import Notion, get_notion
from privopt.notions.nonconvex import refuse_delta
from privopt.validation import (
    DISTORTION_FLOOR,
    as_distortion,
    check_extra_distortions,
    check_mode,
    check_prior,
    resolve_neighbors,
)

#: The keywords of :func:`privopt.design`, :func:`privopt.sweep` and :func:`prepare_request`
#: besides the notions' own options: what a stray keyword (``epsilion=1``) is compared with
#: for a "did you mean".
DESIGN_KEYWORDS = (
    "epsilon",
    "max_distortion",
    "epsilons",
    "max_distortions",
    "neighbors",
    "extra_distortions",
    "observe_secret",
    "solver",
    "tol",
    "raise_on_infeasible",
    "time_limit",
    "on_progress",
    "progress",
    "solver_options",
    "max_memory",
    "unit",
    "executor",
    "chunk_size",
    "epsilon_range",
    "max_distortion_range",
    "band",
    "band_abs",
    "max_points",
)


@dataclass(frozen=True)
class DesignRequest:
    """One validated design request (shared by the cvxpy program and the fast paths).

    Attributes
    ----------
    prior : Prior, JointPrior or DatabasePrior
    distortion : Distortion
        ``d[y, u]``, one row per input of the prior.
    notion : Notion
    mode : {"epsilon", "max_distortion"}
        Least ``E[d]`` at level ``epsilon``, or least level within ``max_distortion``.
    epsilon, max_distortion : float or None
        Exactly one is set.
    neighbors : NeighborRelation or None
        The relation on the secrets, for the notions that use one.
    extra_distortions : tuple of (Distortion, float)
        Further budgets ``E[d_k] ≤ b_k`` (Calmon & Fawaz 2012, Remark 1).
    options : mapping
        The notion's own options, validated (e.g. ``priors`` of ``robust_pml``).
    notes : tuple of (str, str)
        ``(key, message)`` pairs copied into the result's ``extra`` (e.g. a ``robust_pml``
        request over every prior, designed as ``ldp``).
    user_constraints : tuple
        cvxpy constraints on the program's variable, added with
        :meth:`~privopt.methods.cvxpy_program.PrivacyProblem.add_constraints`; only the
        cvxpy methods can honour them.
    constraint_check : callable or None
        ``check(matrix) -> bool``: whether a mechanism meets ``user_constraints``.
    """

    prior: Any
    distortion: Distortion
    notion: Notion
    mode: str
    epsilon: float | None
    max_distortion: float | None
    neighbors: NeighborRelation | None = None
    extra_distortions: tuple = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple = ()
    user_constraints: tuple = ()
    constraint_check: Callable[[np.ndarray], bool] | None = field(default=None, compare=False)

    # --- what was asked ---------------------------------------------------------------------
    @property
    def requested(self) -> dict[str, float]:
        """``{"epsilon": ε}`` or ``{"max_distortion": D}``."""
        if self.mode == "epsilon":
            return {"epsilon": self.epsilon}
        return {"max_distortion": self.max_distortion}

    @property
    def entries(self) -> float:
        """The number of mechanism entries ``|Y|·|U|`` (a float: it may exceed 2⁶³)."""
        return float(self.prior.n_inputs) * float(self.distortion.n_outputs)

    @property
    def is_plain(self) -> bool:
        """No extra budgets and no user constraints (what every fast path needs)."""
        return not self.extra_distortions and not self.user_constraints

    @property
    def uses_line_search(self) -> bool:
        """Budget mode for a notion without a convex level objective."""
        return self.mode == "max_distortion" and not self.notion.direct_level

    def at(
        self, *, epsilon: float | None = None, max_distortion: float | None = None
    ) -> DesignRequest:
        """The same request at another level (``epsilon``) or budget (``max_distortion``).

        Parameters
        ----------
        epsilon : float, optional
            The new level (nats); when given, the request is in ``"epsilon"`` mode and
            ``max_distortion`` is ignored.
        max_distortion : float, optional
            The new distortion budget, used when ``epsilon`` is ``None`` (``"max_distortion"``
            mode).

        Returns
        -------
        DesignRequest
            A new request with ``mode``, ``epsilon`` and ``max_distortion`` replaced and every
            other field shared with this one.
        """
        if epsilon is not None:
            return dataclasses.replace(self, mode="epsilon", epsilon=epsilon, max_distortion=None)
        return dataclasses.replace(
            self, mode="max_distortion", epsilon=None, max_distortion=max_distortion
        )

    # --- measurement ------------------------------------------------------------------------
    def level_of(self, matrix: np.ndarray) -> float:
        """The notion's level of a dense mechanism (nats), re-measured with numpy.

        Parameters
        ----------
        matrix : numpy.ndarray
            ``W[y, u] = p(u|y)``: ``|Y| × |U|``, one row per input of :attr:`prior`, rows
            summing to 1.

        Returns
        -------
        float
            The level in nats, in ``[0, inf]``, under the request's prior, neighbour relation
            and notion options.
        """
        return float(self.notion.measure(self.prior, matrix, self.neighbors, **self.options))

    def distortion_of(self, matrix: np.ndarray) -> float:
        """``E[d(Y, U)]`` of a dense mechanism.

        Parameters
        ----------
        matrix : numpy.ndarray
            ``W[y, u] = p(u|y)``: ``|Y| × |U|``, of the shape of :attr:`distortion`, rows
            summing to 1.

        Returns
        -------
        float
            The expected distortion under the request's prior and :attr:`distortion`,
            ``≥ 0`` (the extra budgets are not counted).
        """
        return measures.expected_distortion(self.prior, matrix, self.distortion)

    def pair_count(self) -> int | None:
        """Ordered pairs of secrets the notion's constraints are written on
        (:meth:`~privopt.notions.base.Notion.pair_count`), for the memory estimates.

        Returns
        -------
        int or None
            ``None`` for a notion without pairs.
        """
        return self.notion.pair_count(self.prior, self.neighbors, **self.options)

    def least_distortion(self) -> float:
        """``D*(∞) = Σ_y p(y) min_u d(y, u)``: the least distortion of any mechanism (the
        extra budgets and user constraints aside).

        Returns
        -------
        float
            ``≥ 0``; 0 for the symbolic Hamming distortion on databases (the identity
            mechanism).
        """
        if self.distortion.is_database_hamming:
            return 0.0  # d(x, x) = 0: the identity mechanism
        return float(self.prior.input_probs @ self.distortion.matrix.min(axis=1))

    def least_level(self) -> float:
        """The least level any mechanism has under the notion (``ε_X`` for identifiability).

        Returns
        -------
        float
            The level in nats, ``≥ 0`` (0 for most notions).
        """
        return float(self.notion.min_level(self.prior, self.neighbors))

    def objective_floor(self, by_level: bool) -> float:
        """The floor of the scale against which an answer's gap is measured (by the solve
        driver, and by the methods that watch their own certificate).

        A gap is accepted when ``gap ≤ OBJECTIVE_RTOL·(|objective| + floor)``
        (:data:`~privopt.validation.OBJECTIVE_RTOL`). For a level (budget points, in nats)
        the floor is 1 nat. For a distortion it is tied to the distortion's own scale, so
        that "optimal" does not depend on the unit of ``d``: the driver solves every
        distortion rescaled by a power of two to a largest entry in ``[1, 2)``
        (:func:`privopt.solve.driver.distortion_scale`), and the floor is
        :data:`~privopt.validation.DISTORTION_FLOOR` times that largest entry (1 for a
        distortion of zeros, where every mechanism is optimal).

        Parameters
        ----------
        by_level : bool
            Whether the objective is the level (a budget point).

        Returns
        -------
        float
        """
        d = self.distortion
        top = float(d.params.get("n", 1)) if d.is_database_hamming else float(d.matrix.max())
        if by_level or not top > 0:
            return 1.0
        return DISTORTION_FLOOR * top

    def max_level(self) -> float:
        """A level beyond which the notion excludes no mechanism (``inf`` if none).

        Returns
        -------
        float
            The level in nats, in ``[0, inf]``.
        """
        return float(self.notion.max_level(self.prior))

    def feasible_without_extras(self, epsilon: float) -> bool:
        """Whether level ``epsilon`` is known feasible: a constant mechanism meets it and
        nothing else (extra budgets, user constraints) could exclude every mechanism.

        Parameters
        ----------
        epsilon : float
            The level (nats).

        Returns
        -------
        bool
            True when the request :attr:`is_plain` and ``epsilon`` is at least
            :meth:`least_level` (less 1e-12); False leaves feasibility open.
        """
        return self.is_plain and epsilon >= self.least_level() - 1e-12

    def __repr__(self) -> str:
        point = ", ".join(f"{k}={v!r}" for k, v in self.requested.items())
        return f"DesignRequest(notion={self.notion.name!r}, {point}, shape={self.distortion.shape})"


def observing_secret(prior: JointPrior, distortion: Distortion) -> tuple[JointPrior, Distortion]:
    """Calmon & Fawaz (2012), Remarks 3–4: the mechanism sees ``(Y, S)``.

    Returned as an ordinary joint prior whose observation is the pair ``(s, y)``:
    ``p(s, (s', y)) = p(s, y)·[s = s']``, with ``d((s, y), u) = d(y, u)``. Theorem 1 / 2 on it
    is exactly the program with variables ``p(u|y, s)`` and the constraints (18)–(19).

    Parameters
    ----------
    prior : JointPrior
    distortion : Distortion

    Returns
    -------
    tuple of (JointPrior, Distortion)
    """
    if not isinstance(prior, JointPrior):
        raise InputError("observe_secret needs a joint prior p(s, y)", "privacy.observe_secret")
    n_s, n_y = prior.joint.shape
    joint = np.zeros((n_s, n_s * n_y))
    for s in range(n_s):
        joint[s, s * n_y : (s + 1) * n_y] = prior.joint[s]
    labels = [f"({s},{y})" for s in prior.secret_labels for y in prior.labels]
    expanded = JointPrior(joint, prior.secret_labels, labels)
    return expanded, _tiled(distortion, n_s)


def _tiled(distortion: Distortion, n_s: int) -> Distortion:
    return Distortion(
        np.tile(distortion.matrix, (n_s, 1)),
        output_labels=distortion.output_labels,
        kind=distortion.kind,
    )


def prepare_request(
    prior: PriorLike,
    distortion: DistortionLike,
    notion: str | Notion,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors: NeighborsLike = None,
    extra_distortions: Sequence[tuple] = (),
    observe_secret: bool = False,
    **options,
) -> DesignRequest:
    """Validate one design request (no program is built).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        What the designer knows (a plain pmf is a single-secret prior).
    distortion : Distortion, array_like or {"hamming", "absolute", "squared"}
        ``d[y, u]``; its column count sets the output alphabet.
    notion : str or Notion
        A registered notion (:func:`privopt.notions.notion_names`).
    epsilon : float, optional
        Minimise ``E[d]`` subject to level ≤ ε (nats).
    max_distortion : float, optional
        Minimise the level subject to ``E[d] ≤ max_distortion``.
    neighbors : NeighborRelation or {"hamming", "all"}, optional
        For ``dp`` and ``identifiability``; default Hamming on databases, all pairs otherwise.
    extra_distortions : sequence of (distortion, budget)
        Further constraints ``E[d_k] ≤ b_k`` (Calmon & Fawaz 2012, Remark 1).
    observe_secret : bool
        The mechanism sees ``(Y, S)`` (Calmon & Fawaz 2012, Remarks 3–4); needs a joint prior.
    **options
        The notion's own options (e.g. ``priors`` for ``robust_pml``). ``delta`` is accepted
        only as 0: a δ > 0 guarantee is not convex and is refused with the reason and the
        convex stand-ins (:mod:`privopt.notions.nonconvex`).

    Returns
    -------
    DesignRequest
    """
    prior = exchangeable_form(check_prior(prior))
    notion = get_notion(notion)
    refuse_delta(notion.name, options.pop("delta", None))
    declared = {option.name for option in notion.options}
    for key, value in options.items():  # a stray keyword is named before anything else
        if value is not None and key not in declared:
            raise notion.unknown_option(key, keywords=DESIGN_KEYWORDS)
    mode, epsilon, max_distortion = check_mode(epsilon, max_distortion)
    distortion = as_distortion(distortion, prior)
    extras = check_extra_distortions(extra_distortions, distortion, prior)
    if not isinstance(observe_secret, (bool, np.bool_)):
        raise InputError(
            f"expected true or false, got {observe_secret!r}", "privacy.observe_secret"
        )
    if observe_secret:
        n_s = prior.n_secrets if isinstance(prior, JointPrior) else 0
        prior, distortion = observing_secret(prior, distortion)
        extras = [(_tiled(e, n_s), b) for e, b in extras]
    relation = None
    if notion.uses_neighbors:
        relation = resolve_neighbors(prior, neighbors)
    elif neighbors is not None and not (notion.name == "ldp" and _is_all(neighbors)):
        hint = (
            'ldp is dp over all pairs: use neighbors = "all" or notion = "dp"'
            if notion.name == "ldp"
            else f"the notion {notion.name!r} takes no neighbour relation; only dp and "
            "identifiability do"
        )
        raise InputError(hint, "privacy.neighbors")
    validated = notion.validate_options(prior, options, keywords=DESIGN_KEYWORDS)
    notes: tuple = ()
    if notion.name == "robust_pml" and validated.get("priors") == "all":
        # sup over every full-support prior of the PML = leakage capacity ([Saeidian-Rethinking]
        # Theorem 2.8) = LDP over all pairs of secrets
        notion, validated = get_notion("ldp"), {}
        notes = (
            (
                "robust_pml_all_priors",
                "robust_pml over every full-support prior is leakage capacity ≤ ε "
                "(Theorem 2.8 of the disclosure paper), i.e. LDP over all pairs of secrets: "
                "designed and measured as 'ldp'",
            ),
        )
    return DesignRequest(
        prior=prior,
        distortion=distortion,
        notion=notion,
        mode=mode,
        epsilon=epsilon,
        max_distortion=max_distortion,
        neighbors=relation,
        extra_distortions=tuple(extras),
        options=validated,
        notes=notes,
    )


#: Largest database alphabet whose full pmf is tested for being a product of equal rows.
MAX_PRODUCT_TEST = 2**22
#: Largest entry-wise difference between the pmf and the product of its marginals (and
#: between the marginals) for the rows to count as i.i.d.
PRODUCT_TOLERANCE = 1e-12


def exchangeable_form(prior):
    """``prior`` with i.i.d. rows recognised whatever form it was given in.

    A :class:`~privopt.model.DatabasePrior` given by its full pmf that is the product of equal
    row marginals (to :data:`PRODUCT_TOLERANCE`) is returned as the same prior given by
    ``row_probs``, so that the structured methods apply (the i.i.d. form is exact: every
    entry agrees to round-off).

    Parameters
    ----------
    prior : Prior, JointPrior or DatabasePrior

    Returns
    -------
    Prior, JointPrior or DatabasePrior
    """
    if not isinstance(prior, DatabasePrior) or prior.is_iid or prior.size > MAX_PRODUCT_TEST:
        return prior
    tensor = prior.probs.reshape((prior.m,) * prior.n)
    axes = range(prior.n)
    margs = [tensor.sum(axis=tuple(j for j in axes if j != i)) for i in axes]
    first = margs[0]
    if any(np.abs(m - first).max() > PRODUCT_TOLERANCE for m in margs[1:]):
        return prior
    product = np.ones(1)
    for _ in axes:
        product = np.kron(product, first)
    if np.abs(product - prior.probs).max() > PRODUCT_TOLERANCE:
        return prior
    return DatabasePrior(prior.m, prior.n, row_probs=first / first.sum(), symbols=prior.symbols)


def _is_all(neighbors) -> bool:
    if isinstance(neighbors, str):
        return neighbors == "all"
    return isinstance(neighbors, NeighborRelation) and neighbors.kind == "all"


def finite(value: float | None) -> bool:
    """True for a finite float (``None`` is not).

    Parameters
    ----------
    value : float or None
        The number to test.

    Returns
    -------
    bool
        False for ``None``, ``inf``, ``-inf`` and NaN; True otherwise.
    """
    return value is not None and math.isfinite(value)
