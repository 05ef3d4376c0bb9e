"""Dual points a method hands over for certified curves (:mod:`privopt.solve.curve_band`).

A method that solved a point knows multipliers of the notion's constraints. Through the
notion's Lagrangian terms (:meth:`~privopt.notions.Notion.lagrangian`) they give a lower
bound on the optimum not only at the level they were found at but at *every* level: the
terms are re-evaluated with the level's coefficients and minimised over the row-stochastic
matrices (weak duality, [Bertsekas-NLP] on Lagrangian duality). A curve band collects them
while it sweeps.

Collecting costs nothing unless asked: a run that wants dual points puts an empty list under
:data:`MULTIPLIERS_KEY` in the cache it shares with the methods (:attr:`Task.cache`), and a
method that has multipliers appends a :class:`Multipliers` to it (:func:`offer`). The
multipliers are in the form :meth:`~privopt.notions.Notion.lagrangian` (ε points) or
:meth:`~privopt.notions.Notion.level_lagrangian` (budget points of a ``direct_level`` notion)
take them: one array per constraint of :meth:`~privopt.notions.Notion.constraints` (or of
:meth:`~privopt.notions.Notion.level_program`), in order, ``None`` where there is none. Any
non-negative values give a valid bound (a wrong multiplier weakens it, never breaks it), so a
method may hand over the duals of an inexact or even failed solve.
"""

from __future__ import annotations

__all__ = ["MULTIPLIERS_KEY", "Multipliers", "offer", "wanted"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from privopt.methods.base import Task

#: The cache key under which a run collects :class:`Multipliers` (a list).
MULTIPLIERS_KEY = ("curve-band", "multipliers")


@dataclass(frozen=True)
class Multipliers:
    """Multipliers of a notion's constraints found by a method at one point.

    Attributes
    ----------
    method : str
        The method that found them.
    epsilon : float or None
        The level of the ε point they were found at (nats).
    budget : float or None
        The budget of the budget point they were found at (``direct_level`` notions).
    duals : tuple
        One array (or ``None``) per constraint of the notion, in the order of
        :meth:`~privopt.notions.Notion.constraints` (ε point) or of
        :meth:`~privopt.notions.Notion.level_program` (budget point).
    distortion : numpy.ndarray
        The distortion matrix the method was given (the driver may have rescaled the
        request's by a power of two).
    channel : numpy.ndarray or None
        ``p(u|s)`` of the method's answer on the secret support: the point the
        exponential-cone notions linearise their terms at (any channel gives a valid bound).
    budget_multiplier : float or None
        The multiplier of ``E[d] ≤ budget`` at a budget point.
    row_duals : numpy.ndarray or None
        Multipliers of the row sums, for the notions' decomposition bounds.
    """

    method: str
    epsilon: float | None
    budget: float | None
    duals: tuple
    distortion: np.ndarray
    channel: np.ndarray | None = None
    budget_multiplier: float | None = None
    row_duals: np.ndarray | None = None


def wanted(task: Task) -> bool:
    """Whether the run of ``task`` collects multipliers.

    Parameters
    ----------
    task : Task
        The point being solved.

    Returns
    -------
    bool
        ``True`` when its cache holds a list under :data:`MULTIPLIERS_KEY`.
    """
    return isinstance(task.cache.get(MULTIPLIERS_KEY), list)


def offer(task: Task, multipliers: Multipliers) -> None:
    """Hand ``multipliers`` to the run of ``task`` if it collects them (else do nothing).

    Parameters
    ----------
    task : Task
        The point the multipliers were found at.
    multipliers : Multipliers
        The notion-form multipliers.
    """
    if wanted(task):
        task.cache[MULTIPLIERS_KEY].append(multipliers)
