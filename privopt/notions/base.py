"""What a privacy notion provides, and the registry of notions.

A notion is one module holding one :class:`Notion` subclass: its constraints at a level ε
(vectorised cvxpy, one constraint per family), its measure (from :mod:`privopt.measures`),
whether it is linear or exponential-cone, whether its level can be minimised directly, and
the largest level that still constrains anything. Adding a notion is one new module plus one
line in :mod:`privopt.notions` (see :func:`register`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import cvxpy as cp
import numpy as np

from privopt.errors import InputError
from privopt.model import NeighborRelation

__all__ = ["Notion", "DesignContext", "NOTIONS", "register", "get_notion", "notion_names"]


@dataclass
class DesignContext:
    """The cvxpy objects a notion writes its constraints on.

    Attributes
    ----------
    prior : Prior | JointPrior | DatabasePrior
    W : cvxpy.Variable
        The design variable ``p(u|y)``, ``|Y| × |U|``.
    channel : cvxpy.Expression
        ``p(u|s)`` on the secret support, ``|supp S| × |U|`` (linear in ``W``, [002] eq. 16).
    p_secret : numpy.ndarray
        ``p(s)`` on the secret support.
    p_u : cvxpy.Expression
        Output marginal ``p(u) = Σ_y p(y) W[y,u]``, length ``|U|``.
    neighbors : NeighborRelation or None
        The relation on secrets, re-indexed to the support rows of ``channel``.
    options : dict
        Notion-specific options (e.g. ``priors`` for robust PML).
    """

    prior: Any
    W: cp.Variable
    channel: cp.Expression
    p_secret: np.ndarray
    p_u: cp.Expression
    secret_index: np.ndarray
    neighbors: NeighborRelation | None = None
    options: dict = field(default_factory=dict)

    @property
    def n_outputs(self) -> int:
        return int(self.W.shape[1])

    @property
    def n_secrets(self) -> int:
        return int(self.p_secret.size)

    def broadcast_rows(self, row: cp.Expression, n_rows: int | None = None) -> cp.Expression:
        """Stack a length-|U| expression into ``n_rows`` equal rows (default: one per secret)."""
        n_rows = self.n_secrets if n_rows is None else n_rows
        return np.ones((n_rows, 1)) @ cp.reshape(row, (1, self.n_outputs), order="C")

    @property
    def joint(self) -> cp.Expression:
        """``p(s, u) = p(s) p(u|s)`` on the secret support."""
        return cp.multiply(self.p_secret[:, None], self.channel)


class Notion:
    """Base class of a privacy notion (see the module docstring).

    Class attributes
    ----------------
    name : str
        The name used in files and the API.
    aliases : tuple of str
    convexity : str
        ``"linear"`` (an LP) or ``"exponential_cone"``.
    direct_level : bool
        True when the level itself is a convex objective (then max_distortion mode is one
        solve); otherwise max_distortion mode is a line search over ε.
    uses_neighbors : bool
        True for ``dp`` and ``identifiability``.
    parameter : str
        How the level enters the program: ``"exp"`` (the Parameter holds ``c = e^ε``, DPP
        form) or ``"linear"`` (the Parameter holds ε).
    source : str
        Paper and definition.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    convexity: ClassVar[str] = "linear"
    direct_level: ClassVar[bool] = False
    uses_neighbors: ClassVar[bool] = False
    parameter: ClassVar[str] = "exp"
    source: ClassVar[str] = ""

    # --- measure --------------------------------------------------------------------------
    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        """The level of ``mechanism`` under ``prior`` (nats)."""
        raise NotImplementedError

    # --- program --------------------------------------------------------------------------
    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """Constraints expressing "level ≤ ε"; ``level`` holds ``e^ε`` or ε (see ``parameter``)."""
        raise NotImplementedError

    def level_objective(self, ctx: DesignContext) -> cp.Expression:
        """A convex expression whose minimum gives the least level (``direct_level`` notions)."""
        raise NotImplementedError(f"{self.name} has no direct level objective")

    def level_from_objective(self, value: float) -> float:
        """Map the optimal value of :meth:`level_objective` to a level in nats."""
        return float(value)

    def parameter_value(self, eps: float) -> float:
        """The value the level Parameter takes for ε."""
        return float(np.exp(eps)) if self.parameter == "exp" else float(eps)

    def independent_at_zero(self, neighbors=None) -> bool:
        """True when "level ≤ 0" says exactly that ``p(u|x)`` is the same for every secret in
        the support (then D*(0) = min_u E d(Y, u) for a single secret, spec §2.5)."""
        return False

    def max_level(self, prior) -> float:
        """A level beyond which the constraint excludes no mechanism (``inf`` if none)."""
        return math.inf

    def min_level(self, prior, neighbors=None) -> float:
        """The least level any mechanism achieves (0 for most notions)."""
        return 0.0

    def __repr__(self) -> str:
        return f"<notion {self.name} ({self.convexity})>"


NOTIONS: dict[str, Notion] = {}


def register(notion_cls: type[Notion]) -> type[Notion]:
    """Class decorator: add a notion (and its aliases) to :data:`NOTIONS`."""
    instance = notion_cls()
    for key in (notion_cls.name, *notion_cls.aliases):
        if key in NOTIONS:
            raise ValueError(f"notion name {key!r} registered twice")
        NOTIONS[key] = instance
    return notion_cls


def notion_names() -> list[str]:
    """Canonical names of the registered notions."""
    return sorted({notion.name for notion in NOTIONS.values()})


def get_notion(name: str | Notion) -> Notion:
    """Look a notion up by name or alias; an unknown name lists the valid ones."""
    if isinstance(name, Notion):
        return name
    try:
        return NOTIONS[str(name)]
    except KeyError:
        raise InputError(
            f"unknown notion {name!r}; valid notions: {', '.join(notion_names())} "
            f"(aliases: {', '.join(sorted(set(NOTIONS) - set(notion_names())))})",
            "privacy.notion",
        ) from None
