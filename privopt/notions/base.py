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

__all__ = [
    "CONES",
    "Notion",
    "NotionOption",
    "DesignContext",
    "LagrangeContext",
    "LagrangeTerms",
    "RepairPoint",
    "NOTIONS",
    "register",
    "get_notion",
    "notion_names",
    "option_owners",
]

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privopt._docstrings import complete_overrides
from privopt.errors import InputError, close_matches
from privopt.model import NeighborRelation
from privopt.papers import closed_form_checks as checks

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp
    from numpy.typing import ArrayLike

    from privopt.model import DatabasePrior, JointPrior, Prior

#: The cones a notion's program may need: an LP, exponential cones (the information
#: measures), power cones (maximal α-leakage of finite order).
CONES = ("linear", "exponential_cone", "power_cone")


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
class LagrangeContext:
    """What a notion needs to turn a solver's dual values into a lower bound (numpy only).

    Attributes
    ----------
    prior : Prior | JointPrior | DatabasePrior
    channel : numpy.ndarray
        ``p(u|s)`` of the solver's answer on the secret support (used only where the bound
        needs a point to linearise at: the posterior of the exponential-cone notions).
    p_secret : numpy.ndarray
        ``p(s)`` on the secret support.
    level : float
        ε (nats).
    level_value : float
        The value of the level parameter in the program (``e^ε`` or ε).
    neighbors : NeighborRelation or None
        Re-indexed to the support rows, as in :class:`DesignContext`.
    options : dict
        The notion's options.
    weights : numpy.ndarray or None
        ``p(y) d(y, u)``, the distortion's coefficients in ``E[d]`` (lets a notion refine
        the point it linearises at, e.g. by a Blahut–Arimoto step).
    multiplier : float or None
        The multiplier of the distortion constraint at a budget point (``None`` at an ε
        point, where the objective's own weight is 1).
    distortion : numpy.ndarray or None
        ``d(y, u)`` on every input.
    row_duals : numpy.ndarray or None
        The solver's multipliers of the row sums ``Σ_u W[y, u] = 1``.
    multipliers : list or None
        The solver's dual values of the notion's constraints (as given to
        :meth:`Notion.lagrangian`).
    """

    prior: Any
    channel: np.ndarray
    p_secret: np.ndarray
    level: float
    level_value: float
    neighbors: NeighborRelation | None = None
    options: dict = field(default_factory=dict)
    weights: np.ndarray | None = None
    multiplier: float | None = None
    distortion: np.ndarray | None = None
    row_duals: np.ndarray | None = None
    multipliers: list | None = None

    @property
    def prior_joint(self) -> np.ndarray:
        """``p(s, y)`` on the secret support (rows) and every input (columns): a
        ``numpy.ndarray``, ``|supp S| × |Y|``."""
        observation = self.prior.observation
        if observation is None:
            joint = np.zeros((self.p_secret.size, self.prior.n_inputs))
            joint[np.arange(self.p_secret.size), self.prior.secret_support] = self.p_secret
            return joint
        return self.p_secret[:, None] * observation[self.prior.secret_support]

    def output_costs(self, shift: np.ndarray) -> np.ndarray:
        """``a_u(s) = min_{y: p(s,y) > 0} d(y, u) − shift(y)`` (secrets × outputs): the least
        cost of releasing ``u`` when the secret is ``s``, with the row multipliers ``shift``.

        Parameters
        ----------
        shift : numpy.ndarray
            ``λ(y)``, one multiplier per input (length ``|Y|``), in the distortion's units.
            Needs :attr:`distortion`.

        Returns
        -------
        numpy.ndarray
            ``|supp S| × |U|`` array of ``a_u(s)`` (``inf`` only where every ``d(y, u) −
            λ(y)`` with ``p(s, y) > 0`` is).
        """
        joint = self.prior_joint
        cost = self.distortion - shift[:, None]  # y × u
        masked = np.where(joint[:, :, None] > 0, cost[None, :, :], np.inf)  # s × y × u
        return masked.min(axis=1)

    @property
    def joint(self) -> np.ndarray:
        """``p(s, u)`` of the answer on the secret support: a ``numpy.ndarray``,
        ``|supp S| × |U|``."""
        return self.p_secret[:, None] * self.channel

    def posterior(self, floor: float = 1e-12) -> np.ndarray:
        """``r_u(s)``: the answer's posterior ``p(s|u)`` mixed with weight ``floor`` of the
        prior (positive everywhere, and ``p(s)`` on outputs of zero probability).

        Parameters
        ----------
        floor : float
            The prior's weight in the mixture, in ``[0, 1]`` (default 1e-12).

        Returns
        -------
        numpy.ndarray
            ``|supp S| × |U|``: column ``u`` is a pmf over the secret support, positive when
            ``floor > 0``.
        """
        joint = self.joint
        p_u = joint.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            post = np.where(p_u > 0, joint / p_u, self.p_secret[:, None])
        return (1 - floor) * post + floor * self.p_secret[:, None]


@dataclass
class LagrangeTerms:
    """Linear pieces of a Lagrangian lower bound: for every mechanism ``W``,
    ``Σ_j μ_j g_j(W) ≥ ⟨channel, p(u|s)⟩ + ⟨output, p(u)⟩ + constant`` where ``g_j ≤ 0`` are
    the notion's constraints (or, for a budget point, the level objective plus its
    constraints), ``μ`` the multipliers, ``p(u|s)`` the induced channel on the secret support
    (``channel_all``: on every secret) and ``p(u)`` the output law.

    Attributes
    ----------
    channel : numpy.ndarray
        ``|supp S| × |U|`` coefficients.
    output : numpy.ndarray
        ``|U|`` coefficients.
    constant : float
    channel_all : numpy.ndarray or None
        ``|S| × |U|`` coefficients on the channel of every secret (robust PML).
    """

    channel: np.ndarray
    output: np.ndarray
    constant: float = 0.0
    channel_all: np.ndarray | None = None


def dual_array(value: ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray:
    """A solver's dual value as a non-negative array of ``shape`` (``None`` → zeros; small
    negative values from solver noise are clipped: any non-negative multiplier is valid).

    Parameters
    ----------
    value : array_like or None
        The dual value of one constraint: a number or an array broadcastable to ``shape``.
    shape : tuple of int
        The constraint's shape.

    Returns
    -------
    numpy.ndarray
        A new float array of ``shape``, entries ``≥ 0``.
    """
    if value is None:
        return np.zeros(shape)
    return np.clip(np.broadcast_to(np.asarray(value, dtype=float), shape), 0.0, None)


@dataclass(frozen=True)
class RepairPoint:
    """An answer to repair by mixing in a constant mechanism: the arguments of
    :meth:`Notion.repair_weight`, as :meth:`Notion.closed_form_repair` takes them.

    Attributes
    ----------
    prior : Prior | JointPrior | DatabasePrior
    channel : numpy.ndarray
        ``p(u|s)`` of the answer, ``|S| × |U|`` (rows of secrets outside the support are
        ignored).
    anchor : numpy.ndarray
        ``p(u)`` of the constant mechanism mixed in, length ``|U|``.
    level : float
        ε in nats, ``≥ 0``.
    neighbors : NeighborRelation or None
        The relation on the secrets, for notions that use one.
    options : dict
        The notion's options, as :meth:`Notion.validate_options` returns them.
    """

    prior: Any
    channel: np.ndarray
    anchor: np.ndarray
    level: float
    neighbors: NeighborRelation | None = None
    options: dict = field(default_factory=dict)

    @property
    def support(self) -> np.ndarray:
        """The indices of the secrets of positive probability: a ``numpy.ndarray`` of int."""
        return np.flatnonzero(self.prior.secret_probs > 0)


@dataclass
class DesignContext:
    """The cvxpy objects a notion writes its constraints on.

    Attributes
    ----------
    prior : Prior | JointPrior | DatabasePrior
    W : cvxpy.Variable
        The design variable ``p(u|y)``, ``|Y| × |U|``.
    channel : cvxpy.Expression
        ``p(u|s)`` on the secret support, ``|supp S| × |U|`` (linear in ``W``, [Calmon-Fawaz] eq.
        16).
    p_secret : numpy.ndarray
        ``p(s)`` on the secret support.
    p_u : cvxpy.Expression
        Output marginal ``p(u) = Σ_y p(y) W[y,u]``, length ``|U|``.
    secret_index : numpy.ndarray
        The secrets of the support, in the prior's indices: row ``i`` of :attr:`channel` is
        secret ``secret_index[i]``.
    neighbors : NeighborRelation or None
        The relation on secrets, re-indexed to the support rows of ``channel``.
    options : dict
        Notion-specific options (e.g. ``priors`` for robust PML).
    level_hooks : list of callable
        ``hook(value)`` is called with the level parameter's new value whenever the program's
        level changes without a rebuild (for notions whose constraints hold further
        parameters derived from it, e.g. the per-pair ratios ``e^{ε d}`` of metric privacy).
    """

    prior: Any
    W: cp.Variable
    channel: cp.Expression
    p_secret: np.ndarray
    p_u: cp.Expression
    secret_index: np.ndarray
    neighbors: NeighborRelation | None = None
    options: dict = field(default_factory=dict)
    level_hooks: list = field(default_factory=list)

    @property
    def n_outputs(self) -> int:
        """Number of outputs ``|U|`` (columns of :attr:`W`), an ``int``."""
        return int(self.W.shape[1])

    @property
    def n_secrets(self) -> int:
        """Number of secrets in the support, ``|supp S|`` (rows of :attr:`channel`), an ``int``."""
        return int(self.p_secret.size)

    def broadcast_rows(self, row: cp.Expression, n_rows: int | None = None) -> cp.Expression:
        """Stack a length-|U| expression into ``n_rows`` equal rows (default: one per secret).

        Parameters
        ----------
        row : cvxpy.Expression
            An expression of ``|U|`` entries (e.g. :attr:`p_u`).
        n_rows : int or None
            Number of rows, ``≥ 1``; ``None`` (the default) for :attr:`n_secrets`.

        Returns
        -------
        cvxpy.Expression
            ``n_rows × |U|``, every row equal to ``row`` (linear in ``row``).
        """
        import cvxpy as cp

        n_rows = self.n_secrets if n_rows is None else n_rows
        return np.ones((n_rows, 1)) @ cp.reshape(row, (1, self.n_outputs), order="C")

    @property
    def joint(self) -> cp.Expression:
        """``p(s, u) = p(s) p(u|s)`` on the secret support: a ``cvxpy.Expression``,
        ``|supp S| × |U|``, linear in :attr:`W`."""
        import cvxpy as cp

        return cp.multiply(self.p_secret[:, None], self.channel)


class Notion:
    """Base class of a privacy notion (see the module docstring).

    An override in a subclass documents what it does for its notion; the ``Parameters``
    and ``Returns`` sections it leaves out are those of the method here
    (:mod:`privopt._docstrings`).

    Class attributes
    ----------------
    name : str
        The name used in files and the API.
    aliases : tuple of str
    convexity : str
        The cone of the notion's programs: ``"linear"`` (an LP), ``"exponential_cone"`` or
        ``"power_cone"`` (see :data:`CONES`); a notion whose cone depends on its options says
        so in :meth:`cone`.
    zero_means_independent : bool
        True when "level ≤ 0" says exactly that ``p(u|s)`` is the same for every secret of
        the support (:meth:`independent_at_zero`).
    output_law_constraints : float
        Constraints per secret and output written on the output law ``p(u)`` (0 for the
        notions on pairs of secrets), for :meth:`constraint_nonzeros`.
    direct_level : bool
        True when the level itself is a convex objective (then max_distortion mode is one
        solve); otherwise max_distortion mode is a line search over ε.
    uses_neighbors : bool
        True for ``dp`` and ``identifiability``.
    pairwise : bool
        True when the constraints tie pairs of secrets within an output column, one row per
        pair and output (``dp``, ``identifiability``, ``metric_dp``): the memory estimates
        count those rows, and such a column's normal matrix is dense
        (:func:`privopt.resources.dense_pair_columns`).
    parameter : str
        How the level enters the program: ``"exp"`` (the Parameter holds ``c = e^ε``, DPP
        form) or ``"linear"`` (the Parameter holds ε).
    source : str
        Paper and definition.
    options : tuple of NotionOption
        The notion's own options (validated by :meth:`validate_options`).
    largest_written_level : float
        Levels above this are not written into any program: the programs leave the privacy
        constraint out and the driver repairs the answer by mixing (``e^30 ≈ 1e13`` wrecks
        any solver's scaling). A notion that relaxes its own large coefficients (metric
        privacy, pair by pair) raises it.
    level_function : callable or None
        The function of :mod:`privopt.measures` that :meth:`measure` calls (set as a
        ``staticmethod``); ``None`` for a notion whose level depends on its options, which
        overrides :meth:`measure` instead.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[tuple[NotionOption, ...]] = ()
    convexity: ClassVar[str] = "linear"
    zero_means_independent: ClassVar[bool] = False
    #: Constraints per secret and output written on the output law ``p(u)`` (PML and the
    #: information notions: 1; information privacy: 2), for :meth:`constraint_nonzeros`.
    output_law_constraints: ClassVar[float] = 0.0
    direct_level: ClassVar[bool] = False
    uses_neighbors: ClassVar[bool] = False
    pairwise: ClassVar[bool] = False
    parameter: ClassVar[str] = "exp"
    source: ClassVar[str] = ""
    largest_written_level: ClassVar[float] = 30.0
    level_function: ClassVar[Callable[..., float] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # an override documents what it does; the Parameters and Returns it leaves out are
        # the overridden method's (privopt._docstrings)
        super().__init_subclass__(**kwargs)
        complete_overrides(cls)

    # --- measure --------------------------------------------------------------------------
    def measure(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        mechanism: np.ndarray,
        neighbors: NeighborRelation | None = None,
        **options: Any,
    ) -> float:
        """The level of ``mechanism`` under ``prior`` (nats).

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request.
        mechanism : numpy.ndarray
            ``W[y, u] = p(u|y)``: ``|Y| × |U|``, rows summing to 1.
        neighbors : NeighborRelation or None
            The relation on the secrets, for notions that use one (:attr:`uses_neighbors`);
            ``None`` (the default) for the notion's default relation.
        **options
            The notion's options, as :meth:`validate_options` returns them.

        Returns
        -------
        float
            The level in nats, in ``[0, inf]``: by default :attr:`level_function` of
            ``(prior, mechanism)``, or of ``(prior, mechanism, neighbors)`` for a notion that
            :attr:`uses_neighbors`.

        Raises
        ------
        NotImplementedError
            For a notion with neither a :attr:`level_function` nor its own :meth:`measure`.
        """
        if self.level_function is None:
            raise NotImplementedError(f"{self.name} has no level function")
        if self.uses_neighbors:
            return self.level_function(prior, mechanism, neighbors)
        return self.level_function(prior, mechanism)

    # --- program --------------------------------------------------------------------------
    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """Constraints expressing "level ≤ ε"; ``level`` holds ``e^ε`` or ε (see ``parameter``).

        Parameters
        ----------
        ctx : DesignContext
            The design variable and the expressions derived from it.
        level : cvxpy.Parameter
            Scalar holding :meth:`parameter_value` of ε, so that a new ε needs no rebuild.

        Returns
        -------
        list of cvxpy.Constraint
            Vectorised constraints, one per family, in which ``level`` enters as a
            parameter (a new ε changes its value, not the program).
        """
        raise NotImplementedError

    def level_objective(self, ctx: DesignContext) -> cp.Expression:
        """A convex expression whose minimum gives the least level (``direct_level`` notions).

        Parameters
        ----------
        ctx : DesignContext
            The design variable and the expressions derived from it.

        Returns
        -------
        cvxpy.Expression
            A convex scalar expression of ``ctx.W``; :meth:`level_from_objective` maps its
            optimal value to the level.

        Raises
        ------
        NotImplementedError
            For a notion without a direct level objective (the default).
        """
        raise NotImplementedError(f"{self.name} has no direct level objective")

    def level_from_objective(self, value: float) -> float:
        """Map the optimal value of :meth:`level_objective` to a level in nats.

        Parameters
        ----------
        value : float
            The optimal value of :meth:`level_objective` (or of :meth:`level_program`).

        Returns
        -------
        float
            The level in nats; by default ``value`` itself.
        """
        return float(value)

    def parameter_value(self, eps: float) -> float:
        """The value the level Parameter takes for ε.

        Parameters
        ----------
        eps : float
            ε in nats, ``≥ 0`` (at most :attr:`largest_written_level` where it is written).

        Returns
        -------
        float
            ``e^ε`` (``≥ 1``) when :attr:`parameter` is ``"exp"``, else ε.
        """
        return float(np.exp(eps)) if self.parameter == "exp" else float(eps)

    def writes_level(self, eps: float) -> bool:
        """Whether the programs write the privacy constraint at level ``eps`` (finite and at
        most :attr:`largest_written_level`); otherwise they solve without it and the driver
        repairs the answer.

        Parameters
        ----------
        eps : float
            ε in nats, ``≥ 0`` (``inf`` allowed).

        Returns
        -------
        bool
            ``True`` when ``eps`` is finite and ``≤ largest_written_level``.
        """
        return math.isfinite(eps) and eps <= self.largest_written_level

    def independent_at_zero(self, neighbors: NeighborRelation | None = None) -> bool:
        """True when "level ≤ 0" says exactly that ``p(u|x)`` is the same for every secret in
        the support (then D*(0) = min_u E d(Y, u) for a single secret).

        Parameters
        ----------
        neighbors : NeighborRelation or None
            The relation on the secrets, for notions that use one (default ``None``).

        Returns
        -------
        bool
            :attr:`zero_means_independent` by default.
        """
        return self.zero_means_independent

    def cone(self, options: Mapping[str, Any]) -> str:
        """The cone of the programs written for these options (one of :data:`CONES`).

        Parameters
        ----------
        options : mapping
            The notion's validated options.

        Returns
        -------
        str
            :attr:`convexity` by default.
        """
        return self.convexity

    def max_level(self, prior: Prior | JointPrior | DatabasePrior) -> float:
        """A level beyond which the constraint excludes no mechanism (``inf`` if none).

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request.

        Returns
        -------
        float
            The level in nats, in ``[0, inf]``; ``inf`` by default.
        """
        return math.inf

    def pair_count(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        neighbors: NeighborRelation | None = None,
        **options: Any,
    ) -> int | None:
        """How many ordered pairs of secrets the notion's constraints are written on, for
        the memory estimates (:mod:`privopt.resources`).

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request.
        neighbors : NeighborRelation or None
            The relation on the secrets, for notions that use one (default ``None``).
        **options
            The notion's validated options.

        Returns
        -------
        int or None
            By default the number of pairs of ``neighbors``, or ``None`` for a notion
            without a relation.
        """
        return None if neighbors is None else int(neighbors.n_pairs)

    def constraint_nonzeros(
        self, n_secrets: int, n_inputs: int, n_outputs: int, options: Mapping[str, Any]
    ) -> float | None:
        """Non-zeros of the notion's constraints at one level in the dense cvxpy program, for
        the memory estimates (:func:`privopt.resources.constraint_nonzeros`).

        Parameters
        ----------
        n_secrets, n_inputs, n_outputs : int
            ``|S|``, ``|Y|`` and ``|U|`` of the request.
        options : mapping
            The notion's validated options.

        Returns
        -------
        float or None
            ``output_law_constraints·|S|·|U|·(|Y| + 1)`` for a notion whose constraints are
            written on the output law ``p(u) = Σ_y p(y) W[y,u]`` (:attr:`output_law_constraints`
            of them per secret and output, ``|Y| + 1`` non-zeros each); otherwise ``None``:
            counted from the notion's pairs of secrets (:meth:`pair_count`), or ``2·|S|·|U|``
            for a notion without pairs.
        """
        if self.output_law_constraints:
            return self.output_law_constraints * n_secrets * n_outputs * (n_inputs + 1)
        return None

    def min_level(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        neighbors: NeighborRelation | None = None,
    ) -> float:
        """The least level any mechanism achieves (0 for most notions).

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request.
        neighbors : NeighborRelation or None
            The relation on the secrets, for notions that use one (default ``None``).

        Returns
        -------
        float
            The level in nats, ``≥ 0``; 0 by default.
        """
        return 0.0

    # --- options ----------------------------------------------------------------------------
    def sample_options(self, prior: Prior | JointPrior | DatabasePrior) -> dict:
        """Values of the notion's required options for a small example request on ``prior``
        (``privopt solvers`` asks every method about one request per notion and kind of
        prior).

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            A small prior.

        Returns
        -------
        dict
            Option name → raw value (validated as a user's would be); empty by default.
        """
        return {}

    def validate_options(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        given: Mapping[str, Any],
        prefix: str = "privacy",
        keywords: Iterable[str] = (),
    ) -> dict:
        """Check the options given for this notion; return them in canonical form.

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request, which the options are checked against.
        given : mapping
            Option name → raw value (``None`` values count as not given).
        prefix : str
            The section named in messages (``privacy`` → ``privacy.priors``).
        keywords : iterable of str
            The other names the caller takes (e.g. the keywords of :func:`privopt.design`):
            an unknown option is checked against them too for a "did you mean".

        Returns
        -------
        dict
            Every declared option that was given, validated.

        Raises
        ------
        InputError
            For an option the notion does not declare, a value its validator refuses, or a
            required option that is missing (field ``{prefix}.{name}``).
        """
        declared = {option.name: option for option in self.options}
        out = {}
        for key, value in given.items():
            if value is None:
                continue
            if key not in declared:
                raise self.unknown_option(key, prefix, keywords)
            out[key] = declared[key].validate(value, prior, f"{prefix}.{key}")
        for option in self.options:
            if option.required and option.name not in out:
                example = f", e.g. {option.example}" if option.example else ""
                raise InputError(
                    f"missing: {self.name} needs {option.name} ({option.description}{example})",
                    f"{prefix}.{option.name}",
                )
        return out

    def unknown_option(
        self, key: str, prefix: str = "privacy", keywords: Iterable[str] = ()
    ) -> InputError:
        """The error for an option this notion does not declare, with the names closest to
        it among its options and ``keywords`` ("did you mean").

        Parameters
        ----------
        key : str
            The name given.
        prefix : str
            The section named in the field (``privacy`` → ``privacy.<key>``).
        keywords : iterable of str
            The other names the caller takes (e.g. ``neighbors``, ``epsilon``).

        Returns
        -------
        InputError
            Field ``{prefix}.{key}`` for an option of another notion, ``key`` itself for a
            name no notion takes (a stray keyword); :attr:`~privopt.errors.InputError.suggestions`
            holds the close names.
        """
        declared = [option.name for option in self.options]
        owners = option_owners(key)
        valid = ", ".join(declared) or "none"
        if owners:
            owned = ", ".join(repr(o) for o in owners)
            message = (
                f"the notion {self.name!r} takes no option {key!r} (it is an option of "
                f"{owned}); its options: {valid}"
            )
        else:
            message = (
                f"{key!r} is neither a keyword of the call nor an option of any notion (the "
                f"options of {self.name!r}: {valid})"
            )
        return InputError(
            message,
            f"{prefix}.{key}" if owners else key,  # a stray keyword is named as given
            suggestions=close_matches(key, [*declared, *keywords]),
        )

    def result_notes(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        mechanism: np.ndarray,
        level: float,
        **options: Any,
    ) -> dict:
        """Notes on a designed mechanism that the level alone does not tell (e.g. the hull
        check of ``robust_pml``): ``{key: message or number}``, empty by default.

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request.
        mechanism : numpy.ndarray
            The designed ``W[y, u] = p(u|y)``, ``|Y| × |U|``.
        level : float
            The level the mechanism meets (nats).
        **options
            The notion's options, as :meth:`validate_options` returns them.

        Returns
        -------
        dict
            ``{key: message or number}``, added to the result's ``extra``; a message (str)
            is also issued as a warning. Empty by default.
        """
        return {}

    # --- the papers' closed forms ---------------------------------------------------------------
    def closed_form_checks(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        distortion: Any,
        mode: str,
        *,
        options: Mapping[str, Any],
        neighbors: NeighborRelation | None = None,
        requested: float,
        level: float | None,
        expected_distortion: float | None,
        mechanism: np.ndarray | None = None,
        status: str = "optimal",
        least_achievable: float | None = None,
        tol: float = 1e-6,
    ) -> list:
        """The papers' closed forms that pin an answer of this notion down, checked on it.

        By default those of :func:`privopt.papers.closed_form_checks.closed_form_checks` for the
        notion's name (none when it has no closed form there). A notion whose options make
        another notion's closed forms apply (a discrete metric, α = ∞) or bound its optimum
        overrides this.

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The problem's prior.
        distortion : Distortion
            The problem's distortion.
        mode : {"epsilon", "max_distortion"}
            ``requested`` is ε, or the distortion budget.
        options : mapping
            The notion's validated options.
        neighbors : NeighborRelation or None
            The request's relation (default ``None``).
        requested : float
            ε or the budget.
        level, expected_distortion : float or None
            The answer's level and expected distortion.
        mechanism : numpy.ndarray or None
            The answer's dense mechanism, for entrywise comparisons (default ``None``).
        status : str
            The answer's status (default ``"optimal"``).
        least_achievable : float or None
            With ``status="infeasible"``, the least achievable value reported.
        tol : float
            Relative tolerance of every comparison (default 1e-6).

        Returns
        -------
        list of ClosedFormCheck
            The checks that apply, each evaluated (possibly none).
        """
        if self.name not in checks.CHECKED_NOTIONS:
            return []
        return checks.closed_form_checks(
            prior,
            distortion,
            self.name,
            mode,
            neighbors=neighbors,
            requested=requested,
            level=level,
            expected_distortion=expected_distortion,
            mechanism=mechanism,
            status=status,
            least_achievable=least_achievable,
            tol=tol,
            zero_means_independent=self.zero_means_independent,
        )

    # --- certificates -----------------------------------------------------------------------
    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms | None:
        """The Lagrangian terms of :meth:`constraints` for the dual values ``duals`` (one per
        constraint, in order), or ``None`` when the notion has no bound to offer.

        Parameters
        ----------
        lctx : LagrangeContext
            The solver's answer and the problem data, as numpy arrays.
        duals : list
            The solver's dual values, one per constraint of :meth:`constraints` in order: an
            array of the constraint's shape, or ``None`` when the solver gave none.

        Returns
        -------
        LagrangeTerms or None
            Terms linear in the channel; ``None`` by default.
        """
        return None

    def level_program(self, ctx: DesignContext) -> tuple[cp.Expression, list[cp.Constraint]]:
        """The convex program of the least level (``direct_level`` notions): an objective
        and the constraints on its auxiliary variables. Default: :meth:`level_objective`.

        Parameters
        ----------
        ctx : DesignContext
            The design variable and the expressions derived from it.

        Returns
        -------
        tuple of (cvxpy.Expression, list of cvxpy.Constraint)
            The convex scalar objective and the constraints on its auxiliary variables (none
            by default).
        """
        return self.level_objective(ctx), []

    def level_lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms | None:
        """A lower bound on the :meth:`level_program` objective, linear in the channel, for
        the dual values of its constraints (``direct_level`` notions).

        Parameters
        ----------
        lctx : LagrangeContext
            The solver's answer and the problem data, as numpy arrays.
        duals : list
            The solver's dual values of the :meth:`level_program` constraints, in order
            (``None`` where the solver gave none).

        Returns
        -------
        LagrangeTerms or None
            Terms linear in the channel; ``None`` by default.
        """
        return None

    def decomposition_bound(self, lctx: LagrangeContext, scale: float = 1.0) -> float | None:
        """A lower bound on ``D*(ε)`` from the decomposition of the prior into posteriors
        (for notions that constrain each output's posterior; ``None`` by default).

        A mechanism splits the joint law of the secret and the input into the posteriors of
        its outputs, weighted by ``p(u)``; for any row multipliers ``λ(y)``,
        ``E d = Σ_y p(y) λ(y) + Σ_u p(u) E[d(Y,u) − λ(Y) | U = u]`` and the last expectation
        is at least ``a_u · r_u`` with ``r_u`` the output's posterior of the secret
        (:meth:`LagrangeContext.output_costs`). Notions whose constraint is a condition on
        ``r_u`` bound the rest per output. ``scale`` multiplies the notion's own multipliers.

        Parameters
        ----------
        lctx : LagrangeContext
            With :attr:`~LagrangeContext.row_duals` and
            :attr:`~LagrangeContext.distortion` set.
        scale : float
            Factor on the notion's own multipliers, ``≥ 0`` (default 1).

        Returns
        -------
        float or None
            A lower bound on ``D*(ε)``, in the distortion's units; ``None`` by default.
        """
        return None

    # --- repair -----------------------------------------------------------------------------
    def repair_weight(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        channel: np.ndarray,
        anchor: np.ndarray,
        level: float,
        neighbors: NeighborRelation | None = None,
        **options: Any,
    ) -> float | None:
        """The least ``θ`` with ``(1−θ)·channel + θ·anchor`` at level ``≤ level``, in closed form.

        ``channel`` is ``p(u|s)`` with one row per secret (rows of secrets outside the support
        are ignored) and ``anchor`` a row ``p(u)`` of a constant mechanism (level 0). Linear
        notions whose constraints are homogeneous in the channel solve this exactly; the
        default ``None`` tells the solver layer to bisect on the re-measured level instead.

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request.
        channel : numpy.ndarray
            ``p(u|s)`` of the answer, ``|S| × |U|`` (``prior.induced_channel`` of it).
        anchor : numpy.ndarray
            ``p(u)`` of the constant mechanism mixed in: a pmf of length ``|U|``.
        level : float
            ε in nats, ``≥ 0``.
        neighbors : NeighborRelation or None
            The relation on the secrets, for notions that use one (default ``None``).
        **options
            The notion's options, as :meth:`validate_options` returns them.

        Returns
        -------
        float or None
            ``θ`` in ``[0, 1]`` (0 when the answer already meets the level), or ``None``
            when the notion has no closed form: :meth:`closed_form_repair` of the arguments.
        """
        point = RepairPoint(prior, channel, anchor, level, neighbors, options)
        return self.closed_form_repair(point)

    def closed_form_repair(self, point: RepairPoint) -> float | None:
        """The closed form of :meth:`repair_weight`, which a notion that has one overrides
        (``None`` by default).

        Parameters
        ----------
        point : RepairPoint
            The answer, the anchor, the level and the notion's relation and options.

        Returns
        -------
        float or None
            ``θ`` in ``[0, 1]`` (0 when the answer already meets the level), or ``None``
            (the default) when the notion has no closed form.
        """
        return None

    def __repr__(self) -> str:
        return f"<notion {self.name} ({self.convexity})>"


NOTIONS: dict[str, Notion] = {}


def best_over_row_signs(
    lctx: LagrangeContext, per_output: Callable[[np.ndarray], np.ndarray], constant: float
) -> float | None:
    """The decomposition bound (:meth:`Notion.decomposition_bound`) at the row duals:
    ``Σ_y p(y) λ(y) + constant + min_u per_output(a_u)`` with ``λ = ±ν/p``, the better of
    the two signs (the row duals' sign convention differs between solvers; every ``λ``
    gives a valid bound).

    Parameters
    ----------
    lctx : LagrangeContext
        With ``row_duals``.
    per_output : callable
        ``a ↦`` the least value of one output's term per output cost vector ``a_u``.
    constant : float
        Added to the bound.

    Returns
    -------
    float or None
        ``None`` when neither sign gives a finite bound.
    """
    p_y = lctx.prior.input_probs
    pos = p_y > 0
    best = None
    for sign in (-1.0, 1.0):
        shift = np.zeros_like(p_y)
        with np.errstate(over="ignore", invalid="ignore"):
            shift[pos] = sign * np.asarray(lctx.row_duals, dtype=float)[pos] / p_y[pos]
        a = lctx.output_costs(shift)
        if not np.isfinite(a).all():
            continue
        value = float(p_y @ shift) + constant + float(np.min(per_output(a)))
        if np.isfinite(value):
            best = value if best is None else max(best, value)
    return best


def register(notion_cls: type[Notion]) -> type[Notion]:
    """Class decorator: add a notion (and its aliases) to :data:`NOTIONS`.

    Parameters
    ----------
    notion_cls : type
        A :class:`Notion` subclass that takes no constructor arguments, whose
        :attr:`~Notion.name` and :attr:`~Notion.aliases` are not registered yet.

    Returns
    -------
    type
        ``notion_cls`` itself; one instance of it is registered under every name.

    Raises
    ------
    ValueError
        If a name or alias is already registered (a programming error, not a user's).
    """
    instance = notion_cls()
    for key in (notion_cls.name, *notion_cls.aliases):
        if key in NOTIONS:
            raise ValueError(f"notion name {key!r} registered twice")
        NOTIONS[key] = instance
    return notion_cls


def option_owners(option: str) -> list[str]:
    """Canonical names of the notions that declare ``option``.

    Parameters
    ----------
    option : str
        An option name (e.g. ``"priors"``).

    Returns
    -------
    list of str
        Sorted canonical names; empty when no registered notion declares it.
    """
    return sorted({n.name for n in NOTIONS.values() if any(o.name == option for o in n.options)})


def notion_names() -> list[str]:
    """Canonical names of the registered notions.

    Returns
    -------
    list of str
        Sorted, each once (aliases left out).
    """
    return sorted({notion.name for notion in NOTIONS.values()})


def get_notion(name: str | Notion) -> Notion:
    """Look a notion up by name or alias, in any case (``-`` and spaces read as ``_``).

    Parameters
    ----------
    name : str or Notion
        A registered name or alias, or a notion itself.

    Returns
    -------
    Notion
        The registered instance (``name`` itself when it is a notion).

    Raises
    ------
    InputError
        For an unknown name (listing the valid ones) or a known non-convex guarantee (saying
        why it cannot be designed for).
    """
    if isinstance(name, Notion):
        return name
    key = str(name)
    if key not in NOTIONS:  # "PML", "Max-Information-Leakage": the registered spelling
        key = key.strip().lower().replace("-", "_").replace(" ", "_")
    try:
        return NOTIONS[key]
    except KeyError:
        from privopt.notions.nonconvex import refuse_non_convex

        refuse_non_convex(str(name))  # a known guarantee that is not convex: say why
        raise InputError(
            f"unknown notion {name!r}; valid notions: {', '.join(notion_names())} "
            f"(aliases: {', '.join(sorted(set(NOTIONS) - set(notion_names())))})",
            "privacy.notion",
            suggestions=close_matches(str(name), NOTIONS),
        ) from None
