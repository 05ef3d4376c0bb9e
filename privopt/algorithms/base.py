"""The interface every fast path implements."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Algorithm", "AlgorithmResult", "ALGORITHMS", "register", "large_instances", "always"]


@dataclass
class AlgorithmResult:
    """What a fast path returns; the solver layer verifies it before handing it to a user.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"infeasible"`` or ``"failed"`` (e.g. iteration limit).
    mechanism : numpy.ndarray or None
        The dense mechanism ``W[y, u]``, when it can be held in memory.
    lazy_mechanism : object or None
        A structured representation when the dense one is too large (e.g. orbit
        probabilities of a symmetric mechanism); it must offer ``row(i)`` and ``sample``.
    objective : float
        Optimal value: ``E[d]`` in epsilon mode, the level in max_distortion mode.
    level : float or None
        The privacy level of the answer, measured by the algorithm itself.
    distortion : float or None
        ``E[d]`` of the answer, measured by the algorithm itself.
    iterations : int
    certificate : dict
        Optimality evidence, e.g. ``{"duality_gap": 1e-12, "lower_bound": ...}``.
    info : dict
        Anything else (timings, sizes).
    """

    status: str
    objective: float = float("nan")
    mechanism: np.ndarray | None = None
    lazy_mechanism: Any = None
    level: float | None = None
    distortion: float | None = None
    iterations: int = 0
    certificate: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Algorithm:
    """A registered fast path.

    Attributes
    ----------
    name : str
        The name users pass as ``solver=`` (e.g. ``"blahut_arimoto"``).
    notions : tuple of str
        Notion names it can solve.
    applies : callable
        ``applies(prior, distortion, notion, mode, **options) -> bool``: whether it can solve
        this instance (structure present, size within reach).
    solve : callable
        ``solve(prior, distortion, notion, *, epsilon=None, max_distortion=None,
        neighbors=None, tol=1e-9, warm_start=None, **options) -> AlgorithmResult``.
    priority : int
        Higher wins when several apply automatically.
    warm_starts : bool
        Whether ``solve(..., warm_start=previous_result)`` saves work (an output pmf and
        slope, a simplex basis). Sweeps and line searches pass the previous point's result.
    auto : callable
        ``auto(notion, entries, sweep) -> bool``: whether to pick it without being named, for
        a problem with ``entries = |X|·|U|`` mechanism entries, in :func:`~privopt.design`
        (``sweep=False``) or :func:`~privopt.sweep` (``True``). Default
        :func:`large_instances`; each choice should rest on a measurement in ``benchmarks/``.
    """

    name: str
    notions: tuple[str, ...]
    applies: Callable[..., bool]
    solve: Callable[..., AlgorithmResult]
    priority: int = 0
    description: str = ""
    warm_starts: bool = False
    auto: Callable[[str, float, bool], bool] = field(default=None)

    def __post_init__(self):
        if self.auto is None:
            object.__setattr__(self, "auto", large_instances)


#: From this many mechanism entries on, the cvxpy programs (compilation included) are slower
#: than the structured fast paths (benchmarks/README.md); below it they take milliseconds.
AUTO_FASTPATH_ENTRIES = 4096


def large_instances(notion: str, entries: float, sweep: bool) -> bool:
    """The default :attr:`Algorithm.auto`: instances of at least
    :data:`AUTO_FASTPATH_ENTRIES` mechanism entries."""
    return entries >= AUTO_FASTPATH_ENTRIES


def always(notion: str, entries: float, sweep: bool) -> bool:
    """An :attr:`Algorithm.auto` for fast paths that win at every size."""
    return True


ALGORITHMS: dict[str, Algorithm] = {}


def register(algorithm: Algorithm) -> Algorithm:
    """Add a fast path to :data:`ALGORITHMS` (name must be new)."""
    if algorithm.name in ALGORITHMS:
        raise ValueError(f"algorithm {algorithm.name!r} registered twice")
    ALGORITHMS[algorithm.name] = algorithm
    return algorithm
