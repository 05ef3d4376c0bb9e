"""Robust (ε, 𝒫)-PML over a finite set of priors.

Saeidian, Cervia, Oechtering & Skoglund (2024), Def. 2.6: a mechanism is (ε, 𝒫)-PML when its
PML is at most ε under every prior of the class 𝒫. Here 𝒫 is the finite list ``priors``
(pmfs over the secret alphabet), and the constraint is imposed at each listed prior (for a
polytope of priors it suffices to list its vertices, since the PML constraint is linear in
the prior); the distortion is taken under the problem's own prior.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.errors import InputError
from privopt.model._validate import as_pmf
from privopt.notions._pairwise import REPAIR_SLACK, mixing_weight
from privopt.notions.base import (
    DesignContext,
    LagrangeTerms,
    Notion,
    NotionOption,
    dual_array,
    register,
)


def validate_priors(value, prior, field: str) -> list[np.ndarray]:
    """A non-empty list of pmfs over the secret alphabet of ``prior``."""
    if isinstance(value, np.ndarray):
        value = list(value)
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError(
            "expected a non-empty list of pmfs over the secret alphabet, e.g. "
            "[[0.5, 0.5], [0.2, 0.8]]",
            field,
        )
    out = []
    for i, q in enumerate(value):
        q = as_pmf(q, f"{field}[{i}]")
        if q.size != prior.n_secrets:
            raise InputError(
                f"has {q.size} entries but the secret has {prior.n_secrets} symbols",
                f"{field}[{i}]",
            )
        out.append(q)
    return out


@register
class RobustPML(Notion):
    name = "robust_pml"
    convexity = "linear"
    parameter = "exp"
    source = "Saeidian et al. (2024) Def. 2.6"
    options = (
        NotionOption(
            "priors",
            "the prior class: a list of pmfs over the secret alphabet",
            validate_priors,
            required=True,
            example="priors = [[0.5, 0.5], [0.2, 0.8]]",
        ),
    )

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        channel = prior.induced_channel(np.asarray(mechanism, dtype=float))
        priors = validate_priors(options.get("priors"), prior, "privacy.priors")
        return max(measures.pml_level(q, channel) for q in priors)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        channel = ctx.prior.induced_channel(ctx.W)  # all secrets, not only the nominal support
        out = []
        for q in ctx.options["priors"]:
            rows = np.flatnonzero(q > 0)
            q_u = q @ channel  # p_q(u) = Σ_x q(x) p(u|x), linear in W
            out.append(
                channel[rows, :]
                <= level
                * (np.ones((rows.size, 1)) @ cp.reshape(q_u, (1, ctx.n_outputs), order="C"))
            )
        return out

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, priors=()):
        ratio, slack = float(np.exp(level)), REPAIR_SLACK * (1 + level)
        theta = 0.0
        for q in priors:
            ch = channel[q > 0]
            c = np.broadcast_to(anchor, ch.shape)
            q_u = np.broadcast_to(q[q > 0] @ ch, ch.shape)
            theta = max(theta, mixing_weight(ch, q_u, c, c, ratio, slack))
        return theta

    def lagrangian(self, lctx, duals):
        # Σ_q Σ λ_q (p(u|x) − c Σ_x' q(x') p(u|x')) over the rows of supp q, on every secret
        c = lctx.level_value
        n_out = lctx.channel.shape[1]
        coef = np.zeros((lctx.prior.n_secrets, n_out))
        for q, dual in zip(lctx.options["priors"], duals, strict=True):
            rows = np.flatnonzero(q > 0)
            lam = dual_array(dual, (rows.size, n_out))
            coef[rows] += lam
            coef -= c * np.outer(q, lam.sum(axis=0))
        return LagrangeTerms(np.zeros(lctx.channel.shape), np.zeros(n_out), 0.0, coef)

    def max_level(self, prior) -> float:
        return float("inf")
