"""Robust (ε, 𝒫)-PML over a finite set of priors.

Saeidian et al. [000] Def. 2.6; spec §1 row 21: for a polytope of priors it suffices to
impose the PML constraint at every vertex, since its right-hand side is linear in the prior.
Here 𝒫 is the finite list ``priors`` (pmfs over the secret alphabet); the distortion is taken
under the problem's own prior.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.errors import InputError
from privopt.model._validate import as_pmf
from privopt.notions.base import DesignContext, Notion, register


def _priors(options: dict, n_secrets: int) -> list[np.ndarray]:
    priors = options.get("priors")
    if not priors:
        raise InputError(
            "robust_pml needs a non-empty list 'priors' of pmfs over the secret alphabet",
            "privacy.priors",
        )
    out = []
    for i, q in enumerate(priors):
        q = as_pmf(q, f"privacy.priors[{i}]")
        if q.size != n_secrets:
            raise InputError(
                f"has {q.size} entries but the secret has {n_secrets} symbols",
                f"privacy.priors[{i}]",
            )
        out.append(q)
    return out


@register
class RobustPML(Notion):
    name = "robust_pml"
    convexity = "linear"
    parameter = "exp"
    source = "Saeidian et al. (2024) Def. 2.6"

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        channel = prior.induced_channel(np.asarray(mechanism, dtype=float))
        priors = _priors(options, prior.n_secrets)
        return max(measures.pml_level(q, channel) for q in priors)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        channel = ctx.prior.induced_channel(ctx.W)  # all secrets, not only the nominal support
        out = []
        for q in _priors(ctx.options, ctx.prior.n_secrets):
            rows = np.flatnonzero(q > 0)
            q_u = q @ channel  # p_q(u) = Σ_x q(x) p(u|x), linear in W
            out.append(
                channel[rows, :]
                <= level
                * (np.ones((rows.size, 1)) @ cp.reshape(q_u, (1, ctx.n_outputs), order="C"))
            )
        return out

    def max_level(self, prior) -> float:
        return float("inf")
