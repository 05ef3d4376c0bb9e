"""Local differential privacy: DP over all pairs of secrets (= leakage capacity ≤ ε).

Saeidian et al. [Saeidian-PML] Def. 14; [Saeidian-Rethinking] Def. 2.7 and Thm 2.8.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt import measures
from privopt.model import all_pairs
from privopt.notions._pairwise import (
    pairwise_repair_weight,
    ratio_constraints,
    ratio_lagrangian,
)
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, register

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

    from privopt.notions.base import LagrangeContext, RepairPoint


@register
class LocalDifferentialPrivacy(Notion):
    """ε-local differential privacy: ``p(u|s) ≤ e^ε p(u|s')`` for every pair of secrets
    (Saeidian et al. 2023, Def. 14)."""

    name = "ldp"
    aliases = ("local_differential_privacy",)
    convexity = "linear"
    zero_means_independent = True  # level 0: p(u|s) the same for every secret
    parameter = "exp"
    source = "Saeidian et al. Def. 14"
    #: The LDP level ``ln max_{u, s, s'} p(u|s)/p(u|s')`` over the support (Saeidian et al. 2023,
    #: Def. 14).
    level_function = staticmethod(measures.ldp_level)

    def constraint_nonzeros(
        self, n_secrets: int, n_inputs: int, n_outputs: int, options: Mapping[str, Any]
    ) -> float:
        """Non-zeros in the dense program, written with an auxiliary column minimum
        (:func:`~privopt.notions._pairwise.ratio_constraints`): two rows per secret and output
        (measured: k = 200, 107 MB; counted pair by pair, the estimate was 7.6 GB).

        Returns
        -------
        float
            The count.
        """
        per_pair = 2.0 if n_inputs == n_secrets else 2.0 * n_inputs
        return 2.0 * n_secrets * n_outputs * (per_pair / 2.0 + 1.0)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``p(u|s) ≤ e^ε p(u|s')`` for every pair of secrets of the support (Saeidian et al. 2023,
        Def. 14), as ``max_s p(u|s) ≤ e^ε min_s p(u|s)`` per output.

        Returns
        -------
        list of cvxpy.Constraint
            ``v ≤ p(u|s)`` and ``p(u|s) ≤ e^ε v`` with ``v`` an auxiliary column minimum
            (``1 × |U|``); none for a single secret.
        """
        return ratio_constraints(ctx.channel, level, all_pairs(ctx.n_secrets))

    def closed_form_repair(self, point: RepairPoint) -> float:
        """The least weight of the anchor that restores ``max_s p(u|s) ≤ e^ε min_s p(u|s)`` on the
        support for every output, in closed form.

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when the answer already meets the level.
        """
        pairs = all_pairs(point.channel.shape[0])
        return pairwise_repair_weight(
            point.channel, point.anchor, point.level, pairs, point.support
        )

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of the all-pairs ratio constraints' Lagrangian (with the auxiliary column
        minimum eliminated), linear in the channel.

        Returns
        -------
        LagrangeTerms
            Channel coefficients only (the output coefficients and the constant are 0).
        """
        shape = lctx.channel.shape
        coef = ratio_lagrangian(duals, shape, lctx.level_value, all_pairs(shape[0]))
        return LagrangeTerms(coef, np.zeros(shape[1]))
