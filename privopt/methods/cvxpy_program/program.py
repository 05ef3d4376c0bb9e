"""The cvxpy program of a design request (the papers' convex programs, vectorised).

:func:`build_problem` returns a :class:`PrivacyProblem` that exposes the ``cvxpy.Problem``
(so a user can add constraints the cvxpy way, see :meth:`PrivacyProblem.add_constraints`)
and what the solve driver needs to interpret its solution. The privacy level enters as a
cvxpy ``Parameter`` in DPP form (``c = e^ε`` for the linear notions, ε itself for the
information measures), so sweeps and line searches re-solve without recompiling.

The programs: minimise ``E[d] = Σ_{y,u} p(y) W[y,u] d(y,u)`` (Calmon & Fawaz 2012, eq. (15);
Wang, Ying & Zhang 2016, eq. (14)) over row-stochastic ``W ≥ 0`` subject to the notion's
constraints at level ε (each notion module writes its own), or minimise the notion's level
objective subject to ``E[d] ≤ D`` for notions with a convex level objective.
"""

from __future__ import annotations

__all__ = ["PrivacyProblem", "build_problem"]

import dataclasses
import time
from typing import TYPE_CHECKING

import cvxpy as cp
import numpy as np

from privopt.errors import InputError
from privopt.model import NeighborRelation
from privopt.notions import DesignContext, Notion
from privopt.request import DesignRequest, prepare_request

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from privopt.model import Distortion, JointPrior, Prior


class PrivacyProblem:
    """A built privacy-design program.

    Parameters
    ----------
    request : DesignRequest
        The validated request (its mode chooses the program's form).

    Attributes
    ----------
    request : DesignRequest
    prior, distortion, notion, mode, neighbors, options, extra_distortions
        The request's parts.
    W : cvxpy.Variable
        The mechanism ``p(u|y)``.
    problem : cvxpy.Problem
        The program. In ``max_distortion`` mode for a notion without a convex level
        objective, this is the ε-mode program that the line search re-solves.
    level_parameter, budget_parameter : cvxpy.Parameter or None
        ``e^ε`` (or ε) and the distortion budget.
    form : {"epsilon", "budget"}
        Which of the two programs this is.
    build_time : float
        Seconds spent building it.
    """

    def __init__(self, request: DesignRequest) -> None:
        """Build the program (timed in :attr:`build_time`); its parameters are the class's."""
        self._request = request
        start = time.perf_counter()
        self._build()
        self.build_time = time.perf_counter() - start

    @classmethod
    def from_request(cls, request: DesignRequest) -> PrivacyProblem:
        """Build the program of a validated request.

        Parameters
        ----------
        request : DesignRequest
            A validated request.

        Returns
        -------
        PrivacyProblem
            Its program.
        """
        return cls(request)

    # --- the request's parts ----------------------------------------------------------------
    @property
    def request(self) -> DesignRequest:
        """The request, with the user's constraints attached.

        Returns
        -------
        DesignRequest
            A copy of the request with the current ε (or budget) and the added constraints
            (and a check of them) attached.
        """
        return dataclasses.replace(
            self._request,
            epsilon=self.epsilon if self._request.mode == "epsilon" else None,
            max_distortion=self.max_distortion if self._request.mode != "epsilon" else None,
            user_constraints=tuple(self._user_constraints),
            constraint_check=self.meets_user_constraints if self._user_constraints else None,
        )

    prior = property(lambda self: self._request.prior)
    distortion = property(lambda self: self._request.distortion)
    notion: Notion = property(lambda self: self._request.notion)  # type: ignore[assignment]
    mode = property(lambda self: self._request.mode)
    neighbors = property(lambda self: self._request.neighbors)
    options = property(lambda self: self._request.options)
    extra_distortions = property(lambda self: list(self._request.extra_distortions))

    # --- construction -----------------------------------------------------------------------
    def _build(self) -> None:
        request = self._request
        prior, notion = request.prior, request.notion
        n_y, n_u = request.distortion.shape
        self.W = cp.Variable((n_y, n_u), nonneg=True, name="W")
        support = prior.secret_support
        channel_all = prior.induced_channel(self.W)
        channel = channel_all if support.size == prior.n_secrets else channel_all[support, :]
        rel = None
        if request.neighbors is not None:
            rel = request.neighbors.restricted(support)
            position = np.full(prior.n_secrets, -1)
            position[support] = np.arange(support.size)
            rel = NeighborRelation(support.size, position[rel.left], position[rel.right], rel.kind)
        self.context = DesignContext(
            prior=prior,
            W=self.W,
            channel=channel,
            p_secret=prior.secret_probs[support],
            p_u=prior.input_probs @ self.W,
            secret_index=support,
            neighbors=rel,
            options=dict(request.options),
        )
        weights = prior.input_probs[:, None] * request.distortion.matrix
        self.expected_distortion = cp.sum(cp.multiply(weights, self.W))
        #: the constraints whose dual values the certificate reads, by role
        self.extra_constraints = [
            cp.sum(cp.multiply(prior.input_probs[:, None] * extra.matrix, self.W)) <= budget
            for extra, budget in request.extra_distortions
        ]
        self.row_constraint = cp.sum(self.W, axis=1) == 1
        self._rows = [self.row_constraint, *self.extra_constraints]
        self.level_parameter = None
        self.budget_parameter = None
        self.notion_constraints: list[cp.Constraint] = []
        self.budget_constraint: cp.Constraint | None = None
        self.epsilon = request.epsilon
        self.max_distortion = request.max_distortion
        if request.mode == "max_distortion" and notion.direct_level:
            self.form = "budget"
            self.budget_parameter = cp.Parameter(nonneg=True, name="max_distortion")
            self.budget_parameter.value = float(request.max_distortion)
            level, self.notion_constraints = notion.level_program(self.context)
            objective = cp.Minimize(level)
            self.budget_constraint = self.expected_distortion <= self.budget_parameter
            constraints = [*self._rows, *self.notion_constraints, self.budget_constraint]
        else:
            self.form = "epsilon"
            self.level_parameter = cp.Parameter(nonneg=True, name="level")
            eps = request.epsilon
            usable = eps is not None and notion.writes_level(eps)
            self.level_parameter.value = notion.parameter_value(eps if usable else 0.0)
            objective = cp.Minimize(self.expected_distortion)
            self.notion_constraints = notion.constraints(self.context, self.level_parameter)
            constraints = [*self._rows, *self.notion_constraints]
        self._base_constraints = constraints
        self._user_constraints: list[cp.Constraint] = []
        self.problem = cp.Problem(objective, constraints)
        self._relaxed: cp.Problem | None = None

    # --- updates ----------------------------------------------------------------------------
    @property
    def uses_line_search(self) -> bool:
        """Budget mode solved by a line search over ε (no convex level objective).

        Returns
        -------
        bool
            ``True`` in ``max_distortion`` mode for a notion without a direct level objective.
        """
        return self.mode == "max_distortion" and not self.notion.direct_level

    def set_epsilon(self, eps: float) -> None:
        """Set the level ε (nats) without rebuilding (DPP parameter).

        Parameters
        ----------
        eps : float
            The level. Above the notion's ``largest_written_level`` the program is solved
            without its privacy constraint (the coefficients would wreck any solver's
            scaling) and the solve driver imposes the level by repair.
        """
        if self.level_parameter is None:
            from privopt.errors import InputError

            raise InputError("this problem has no level parameter (max_distortion mode)", "epsilon")
        self.epsilon = float(eps)
        usable = self.notion.writes_level(self.epsilon)
        self.level_parameter.value = self.notion.parameter_value(self.epsilon if usable else 0.0)
        for hook in self.context.level_hooks:
            hook(float(self.level_parameter.value))

    def set_max_distortion(self, budget: float) -> None:
        """Set the distortion budget without rebuilding.

        Parameters
        ----------
        budget : float
        """
        self.max_distortion = float(budget)
        if self.budget_parameter is not None:
            self.budget_parameter.value = self.max_distortion

    def add_constraints(self, *constraints: cp.Constraint) -> PrivacyProblem:
        """Add cvxpy constraints on :attr:`W` (e.g. ``W[0, 1] == 0``) and rebuild the program.

        Parameters
        ----------
        *constraints : cvxpy.Constraint

        Returns
        -------
        PrivacyProblem
            ``self``, for chaining.

        Raises
        ------
        InputError
            For anything that is not a cvxpy constraint (a string, or ``True`` from a
            comparison of two constants).
        """
        for con in constraints:
            if not isinstance(con, cp.Constraint):
                raise InputError(
                    f"expected cvxpy constraints on W (e.g. pp.W[0, 1] == 0), got "
                    f"{type(con).__name__} {con!r}",
                    "constraints",
                )
        self._user_constraints.extend(constraints)
        self.problem = cp.Problem(
            self.problem.objective, [*self._base_constraints, *self._user_constraints]
        )
        self._relaxed = None
        return self

    @property
    def user_constraints(self) -> list[cp.Constraint]:
        """The constraints added with :meth:`add_constraints`.

        Returns
        -------
        list of cvxpy.Constraint
            A copy of the list.
        """
        return list(self._user_constraints)

    def meets_user_constraints(self, matrix: np.ndarray, tol: float = 1e-6) -> bool:
        """Whether ``matrix`` meets every constraint added with :meth:`add_constraints`.

        Parameters
        ----------
        matrix : numpy.ndarray
            A mechanism of the shape of :attr:`W`.
        tol : float
            Largest violation accepted.

        Returns
        -------
        bool
            Whether every added constraint's violation is at most ``tol``.
        """
        kept = self.W.value
        try:
            self.W.value = np.asarray(matrix, dtype=float)
            return all(
                c.violation() is None or np.max(np.atleast_1d(c.violation())) <= tol
                for c in self._user_constraints
            )
        finally:
            self.W.value = kept

    def without_privacy_constraint(self) -> cp.Problem:
        """The ε-form program without its privacy constraint: rows sum to 1, and the extra
        budgets and user constraints stay (its optimum is a lower bound on ``D*(ε)`` for
        every ε).

        Returns
        -------
        cvxpy.Problem
            The relaxed program (built once and cached).
        """
        if self._relaxed is None:
            self._relaxed = cp.Problem(
                cp.Minimize(self.expected_distortion), [*self._rows, *self._user_constraints]
            )
        return self._relaxed

    def __repr__(self) -> str:
        return (
            f"PrivacyProblem(notion={self.notion.name!r}, mode={self.mode!r}, "
            f"shape={self.W.shape}, {self.notion.convexity})"
        )


def build_problem(
    prior: Prior | JointPrior | ArrayLike,
    distortion: Distortion | ArrayLike | str,
    notion: str | Notion,
    **request: object,
) -> PrivacyProblem:
    """Build the cvxpy program for one design request.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        What the designer knows (a plain pmf is a single-secret :class:`~privopt.Prior`).
    distortion : Distortion, array_like or {"hamming", "absolute", "squared"}
        ``d[y, u]``; its column count sets the output alphabet.
    notion : str or Notion
        A registered notion (:func:`privopt.notion_names`).
    **request
        ``epsilon`` or ``max_distortion`` (exactly one), ``neighbors``,
        ``extra_distortions``, ``observe_secret`` and the notion's own options, as in
        :func:`privopt.request.prepare_request`.

    Returns
    -------
    PrivacyProblem
        Solve it with :func:`privopt.solve_problem`.

    Examples
    --------
    >>> import privopt as po
    >>> pp = po.build_problem([0.5, 0.3, 0.2], "hamming", "pml", epsilon=0.3)
    >>> pp.add_constraints(pp.W[0, 1] == 0).problem.is_dcp()
    True
    """
    return PrivacyProblem(prepare_request(prior, distortion, notion, **request))
