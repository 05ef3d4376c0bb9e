"""What a privacy notion provides, and the registry of notions.

A notion is one module holding one :class:`Notion` subclass: its constraints at a level ε
(vectorised cvxpy, one constraint per family), its measure (from :mod:`privopt.measures`),
its options (:class:`NotionOption`, declared once with their validator and file key), whether
it is linear or exponential-cone, whether its level can be minimised directly, the largest
level that still constrains anything and, for linear notions, the exact weight that repairs
a slightly infeasible answer. Adding a notion is one new module plus one line in
:mod:`privopt.notions` (see :func:`register`); a method that solves it registers its own
encoding in its package (e.g. :mod:`privopt.methods.sparse_lp.encodings`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import cvxpy as cp
import numpy as np

from privopt.errors import InputError
from privopt.model import NeighborRelation

__all__ = [
    "Notion",
    "NotionOption",
    "DesignContext",
    "NOTIONS",
    "register",
    "get_notion",
    "notion_names",
    "option_owners",
]


@dataclass(frozen=True)
class NotionOption:
    """An option a notion takes (e.g. the prior class of ``robust_pml``).

    Declared once on the notion; the API (``design(..., name=value)``), the problem files
    (``[privacy] name = …``) and the command line all go through :meth:`validate`.

    Attributes
    ----------
    name : str
        The keyword argument and the ``[privacy]`` key.
    description : str
        One line for messages and documentation.
    validate : callable
        ``validate(value, prior, field) -> value``: checks the raw value against the prior
        and returns it in canonical form; raises :class:`~privopt.errors.InputError` naming
        ``field``.
    required : bool
        Whether the notion needs it.
    example : str
        How to write it in a problem file (shown in messages).
    """

    name: str
    description: str
    validate: Callable[[Any, Any, str], Any]
    required: bool = False
    example: str = ""


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
    options : tuple of NotionOption
        The notion's own options (validated by :meth:`validate_options`).
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[tuple[NotionOption, ...]] = ()
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

    # --- options ----------------------------------------------------------------------------
    def validate_options(self, prior, given: Mapping[str, Any], prefix: str = "privacy") -> dict:
        """Check the options given for this notion; return them in canonical form.

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
        given : mapping
            Option name → raw value (``None`` values count as not given).
        prefix : str
            The section named in messages (``privacy`` → ``privacy.priors``).

        Returns
        -------
        dict
            Every declared option that was given, validated.
        """
        declared = {option.name: option for option in self.options}
        out = {}
        for key, value in given.items():
            if value is None:
                continue
            if key not in declared:
                owners = option_owners(key)
                hint = (
                    f"it is an option of {', '.join(repr(o) for o in owners)}"
                    if owners
                    else "no notion takes it"
                )
                valid = ", ".join(declared) or "none"
                raise InputError(
                    f"the notion {self.name!r} takes no option {key!r} ({hint}); its options: "
                    f"{valid}",
                    f"{prefix}.{key}",
                )
            out[key] = declared[key].validate(value, prior, f"{prefix}.{key}")
        for option in self.options:
            if option.required and option.name not in out:
                example = f", e.g. {option.example}" if option.example else ""
                raise InputError(
                    f"missing: {self.name} needs {option.name} ({option.description}{example})",
                    f"{prefix}.{option.name}",
                )
        return out

    # --- repair -----------------------------------------------------------------------------
    def repair_weight(
        self, prior, channel, anchor, level: float, neighbors=None, **options
    ) -> float | None:
        """The least ``θ`` with ``(1−θ)·channel + θ·anchor`` at level ``≤ level``, in closed form.

        ``channel`` is ``p(u|s)`` on the secret support (rows) and ``anchor`` a row
        ``p(u)`` of a constant mechanism (level 0). Linear notions whose constraints are
        homogeneous in the channel solve this exactly; the default ``None`` tells the solver
        layer to bisect on the re-measured level instead.
        """
        return None

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


def option_owners(option: str) -> list[str]:
    """Canonical names of the notions that declare ``option``."""
    return sorted({n.name for n in NOTIONS.values() if any(o.name == option for o in n.options)})


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
