"""The validated problem file (:class:`ProblemSpec`) and what it solves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from privopt.errors import InputError
from privopt.model import Distortion, Mechanism
from privopt.notions import get_notion


@dataclass
class ProblemSpec:
    """A validated problem file.

    Attributes
    ----------
    path : str
        The file as named by the user (used in every message).
    prior : Prior, JointPrior or DatabasePrior
    distortion : Distortion or None
        ``None`` only in audit files without ``[distortion]``.
    notion : str or None
        Canonical notion name (aliases resolved); ``None`` only in audit files.
    epsilon, max_distortion : float or None
        Exactly one is set in a problem file.
    neighbors : str, NeighborRelation or None
        ``"hamming"`` or ``"all"`` as written, or the relation of an edge list, adjacency
        matrix or CSV file; ``None`` = the default of the prior.
    options : dict
        The notion's own options, validated (e.g. ``priors`` of ``robust_pml``).
    delta : float or None
        ``[privacy] delta``: the δ of the tail and event audits ((ε,δ)-PML, (ε,δ)-EML,
        δ-approximate max-information, probabilistic DP); a design refuses δ > 0 (not convex).
    observe_secret : bool
    extra_distortions : list of (Distortion, float)
    solver : str or None
    tolerance : float or None
    time_limit : float or None
        Seconds (``[solver] time_limit``).
    reference : dict
    mechanism : Mechanism or None
    title, source : str or None
    grid : LocationGrid or None
        The map of ``[prior.grid]``.
    location : LocationGrid, LocationPoints or None
        The map of ``[prior.grid]`` or ``[prior.points]`` (its places, prior and outputs).
    composition : dict or None
        ``[composition]`` of an audit file: ``kind`` (``"adaptive"``, ``"then"`` or
        ``"parallel"``), ``first`` (a Mechanism) and ``second`` (the second stage); the
        composed release is :attr:`mechanism`.
    """

    path: str
    prior: Any
    distortion: Distortion | None = None
    notion: str | None = None
    epsilon: float | None = None
    max_distortion: float | None = None
    neighbors: Any = None
    options: dict = field(default_factory=dict)
    delta: float | None = None
    observe_secret: bool = False
    extra_distortions: list = field(default_factory=list)
    solver: str | None = None
    tolerance: float | None = None
    time_limit: float | None = None
    reference: dict = field(default_factory=dict)
    mechanism: Mechanism | None = None
    title: str | None = None
    source: str | None = None
    grid: Any = None
    location: Any = None
    composition: dict | None = None

    @property
    def priors(self) -> list | None:
        """The prior class of ``robust_pml`` (``[privacy] priors``): a list, or ``None`` when
        not given."""
        return self.options.get("priors")

    @property
    def mode(self) -> str | None:
        """What the file asks for: ``"epsilon"`` or ``"max_distortion"`` (a ``str``), or
        ``None`` when it sets neither (an audit file)."""
        if self.epsilon is not None:
            return "epsilon"
        if self.max_distortion is not None:
            return "max_distortion"
        return None

    def neighbors_for(self, notion: str):
        """The neighbour relation to pass for ``notion`` (only dp / identifiability take one).

        Parameters
        ----------
        notion : str
            A notion name or alias.

        Returns
        -------
        str, NeighborRelation or None
            :attr:`neighbors` when the notion uses a neighbour relation, else ``None``.
        """
        return self.neighbors if get_notion(notion).uses_neighbors else None

    def design_kwargs(self, notion: str | None = None) -> dict:
        """Keyword arguments of :func:`privopt.design` / :func:`privopt.sweep` for ``notion``
        (default: the file's), without the level / budget.

        Parameters
        ----------
        notion : str, optional

        Returns
        -------
        dict
        """
        notion = get_notion(notion or self.notion)
        kwargs: dict[str, Any] = {
            "neighbors": self.neighbors_for(notion.name),
            "observe_secret": self.observe_secret,
            "extra_distortions": self.extra_distortions,
        }
        declared = {o.name for o in notion.options}
        kwargs.update({k: v for k, v in self.options.items() if k in declared})
        if self.tolerance is not None:
            kwargs["tol"] = self.tolerance
        if self.delta is not None:
            kwargs["delta"] = self.delta  # refused by the design unless 0 (not convex)
        return kwargs

    def solve(
        self,
        solver: str | None = None,
        raise_on_infeasible: bool = False,
        time_limit: float | None = None,
        on_progress=None,
    ):
        """Solve the file's request with :func:`privopt.design`.

        Parameters
        ----------
        solver : str, optional
            Overrides ``[solver] name``.
        raise_on_infeasible : bool
            Raise instead of returning a result with status ``"infeasible"``.
        time_limit : float, optional
            Overrides ``[solver] time_limit`` (seconds).
        on_progress : callable, optional
            Receives progress events.

        Returns
        -------
        DesignResult
        """
        from privopt.solve import design

        if self.notion is None or self.mode is None or self.distortion is None:
            raise InputError(
                f"{self.path}: privacy: the file has no design request (needs [distortion] and "
                "[privacy] with a notion and epsilon or max_distortion)"
            )
        return design(
            self.prior,
            self.distortion,
            self.notion,
            epsilon=self.epsilon,
            max_distortion=self.max_distortion,
            solver=solver or self.solver,
            raise_on_infeasible=raise_on_infeasible,
            time_limit=time_limit if time_limit is not None else self.time_limit,
            on_progress=on_progress,
            **self.design_kwargs(),
        )
