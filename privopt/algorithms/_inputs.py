"""Input handling shared by the fast paths: a single-secret pmf and a dense distortion."""

from __future__ import annotations

import numpy as np

from privopt.errors import InputError
from privopt.model import DatabasePrior, Distortion, JointPrior, Prior


def prior_probs(prior, fast_path: str) -> np.ndarray:
    """The pmf of a single secret (``Prior``, ``DatabasePrior`` or an array); a joint prior
    is refused with a message naming ``fast_path``."""
    if isinstance(prior, JointPrior):
        raise InputError(
            f"the {fast_path} fast path handles a single secret (Prior or DatabasePrior); for a "
            "joint prior p(s, y) use the generic solver",
            "prior",
        )
    if isinstance(prior, (Prior, DatabasePrior)):
        return np.asarray(prior.probs, dtype=float)
    return np.asarray(Prior(prior).probs)


def distortion_matrix(distortion, n_in: int) -> np.ndarray:
    """The dense ``n_in × |U|`` distortion, finite and non-negative."""
    if isinstance(distortion, Distortion):
        d = np.asarray(distortion.matrix, dtype=float)
    else:
        try:
            d = np.array(distortion, dtype=float)
        except (TypeError, ValueError):
            raise InputError("expected a Distortion or a matrix of numbers", "distortion") from None
    if d.ndim != 2 or d.shape[0] != n_in:
        raise InputError(
            f"the distortion has shape {d.shape} but the prior has {n_in} inputs: one row per "
            "input symbol",
            "distortion",
        )
    if not np.isfinite(d).all() or (d < 0).any():
        raise InputError("entries must be finite and non-negative", "distortion.matrix")
    return d
