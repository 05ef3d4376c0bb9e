"""Re-measuring a symmetric mechanism on its reduced form (no dense matrix)."""

from __future__ import annotations

__all__ = ["verify_symmetric", "SOLVED_NOTIONS"]

from typing import Any

import numpy as np

from privopt.errors import InputError
from privopt.methods.symmetric.mechanism import SymmetricMechanism
from privopt.methods.symmetric.method import SOLVED_NOTIONS
from privopt.methods.symmetric.orbits import (
    MAX_ORBITS,
    OrbitTable,
    _group_logsumexp,
    _log,
    log_prior_power,
)
from privopt.methods.symmetric.single_letter import one_row_mutual_information
from privopt.model import DatabasePrior
from privopt.notions import get_notion


def _orbit_measures(mech: SymmetricMechanism, prior: DatabasePrior, notion: str) -> dict:
    """Level, distortion and row sums computed orbit by orbit (no dense matrix)."""
    table = OrbitTable.get(mech.m, mech.n)
    pi = np.asarray(prior.row_probs, dtype=float)
    log_w = mech.log_weights
    lpx = log_prior_power(table.x_types, pi)
    active = np.isfinite(lpx)
    # row sums: Σ_{T: x-type r} K(T) w_T for every x-type (all rows, not only the support)
    row_log = _group_logsumexp(table.log_k + log_w, table.x_group, table.n_x_groups)
    row_err = float(np.max(np.abs(np.expm1(row_log))))
    log_mass = table.log_pairs + lpx + log_w  # ln P(T)
    mass = np.exp(log_mass)
    distortion = float(mass @ table.distance)
    if notion == "mutual_information":
        # p_Y(y) for y of type s: Σ_{T: s} C(T) p(x_T) w_T
        log_py = _group_logsumexp(table.log_c + lpx + log_w, table.y_group, table.n_y_groups)
        used = mass > 0
        level = float(np.sum(mass[used] * (log_w[used] - log_py[table.y_group[used]])))
        level = max(level, 0.0)
    else:
        log_pi = _log(pi)
        level = 0.0
        for a, _b, a2, src, dst in table.moves():
            if pi[a] <= 0 or pi[a2] <= 0:
                continue
            keep = active[src]
            num, den = log_w[src[keep]], log_w[dst[keep]]
            if notion == "identifiability":
                num, den = num + log_pi[a], den + log_pi[a2]
            fin_num, fin_den = np.isfinite(num), np.isfinite(den)
            if (fin_num & ~fin_den).any():  # w_T > 0 = w_T' on a used output
                return {"level": float("inf"), "distortion": distortion, "row_error": row_err}
            both = fin_num & fin_den  # pairs with w_T = 0 bound nothing
            diff = num[both] - den[both]
            if diff.size:
                level = max(level, float(diff.max()))
    return {"level": level, "distortion": distortion, "row_error": row_err}


def _kernel_measures(mech: SymmetricMechanism, prior: DatabasePrior, notion: str) -> dict:
    """The same measures for a product mechanism ``B^{⊗n}``, from the one-row channel:
    DP / identifiability level = one-row level over pairs of supported values (neighbours
    differ in one factor), ``E d = n Σ π_a (1 − B_aa)``, ``I = n I(π, B)``."""
    pi = np.asarray(prior.row_probs, dtype=float)
    kern, n = mech.kernel, mech.n
    row_err = float(np.max(np.abs(kern.sum(axis=1) - 1.0)))
    distortion = float(n * np.sum(pi * (1 - np.diag(kern))))
    if notion == "mutual_information":
        return {
            "level": n * one_row_mutual_information(pi, kern),
            "distortion": distortion,
            "row_error": row_err,
        }
    sup = np.flatnonzero(pi > 0)
    sub = kern[sup]
    if notion == "identifiability":
        sub = sub * pi[sup, None]
    used = sub.max(axis=0) > 0
    sub = sub[:, used]
    if sub.size == 0 or sup.size < 2:
        return {"level": 0.0, "distortion": distortion, "row_error": row_err}
    if (sub.min(axis=0) == 0).any():
        return {"level": float("inf"), "distortion": distortion, "row_error": row_err}
    level = float(np.max(np.log(sub.max(axis=0) / sub.min(axis=0))))
    return {"level": max(level, 0.0), "distortion": distortion, "row_error": row_err}


def verify_symmetric(
    mech: SymmetricMechanism,
    prior: DatabasePrior,
    notion: str,
    epsilon: float | None = None,
    *,
    tol: float = 1e-9,
    use: str = "auto",
) -> dict[str, Any]:
    """Re-measure a symmetric mechanism on its reduced representation.

    * DP / identifiability level: ``max`` over neighbouring orbits ``T → T'`` (one row of x
      changed) of ``ln w_T/w_{T'}`` (DP, [Wang-Ying-Zhang] Def. 3) or ``ln π_a w_T/(π_{a'} w_{T'})``
      (identifiability, [Wang-Ying-Zhang] Def. 2), over secrets in the support and outputs with
      ``p(y) > 0``;
    * mutual information ``Σ_T P(T) ln(w_T / p_Y(s_T))`` ([Wang-Ying-Zhang] Def. 4) with ``p_Y``
    per y-type;
    * distortion ``Σ_T P(T) d(T)`` with the orbit mass ``P(T) = (n!/Π T_ab!) Π π_a^{r_a} w_T``;
    * row sums ``Σ_{T: x-type r} K(T) w_T`` for every x-type.

    Parameters
    ----------
    mech : SymmetricMechanism
    prior : DatabasePrior
        With ``row_probs``.
    notion : str
        ``"dp"``, ``"identifiability"`` or ``"mutual_information"``.
    epsilon : float, optional
        If given, ``level_ok`` reports ``level ≤ epsilon + tol``.
    tol : float
        Tolerance for ``row_sums_ok`` and ``level_ok``.
    use : str
        ``"orbits"`` (enumerate joint types), ``"kernel"`` (product form only) or ``"auto"``
        (orbits when there are at most :data:`MAX_ORBITS`, else the kernel).

    Returns
    -------
    dict
        ``level``, ``distortion``, ``row_sums_ok``, ``max_row_sum_error``, ``level_ok`` (or
        None), ``via`` (``"orbits"`` or ``"kernel"``), ``n_orbits``.
    """
    if not isinstance(mech, SymmetricMechanism):
        raise InputError("needs a SymmetricMechanism", "mechanism")
    name = get_notion(notion).name  # aliases resolve; an unknown name is refused there
    if name not in SOLVED_NOTIONS:
        raise InputError(f"verifies {', '.join(SOLVED_NOTIONS)}, not {notion!r}", "privacy.notion")
    notion = name
    if not isinstance(prior, DatabasePrior) or not prior.is_iid:
        raise InputError("needs a DatabasePrior with row_probs (i.i.d. rows)", "prior")
    if (prior.m, prior.n) != (mech.m, mech.n):
        raise InputError("prior and mechanism disagree on m or n", "prior")
    if use == "auto":
        use = "orbits" if mech.n_orbits <= MAX_ORBITS or mech.kernel is None else "kernel"
    if use == "kernel":
        if mech.kernel is None:
            raise InputError("kernel verification needs a product mechanism", "use")
        stats = _kernel_measures(mech, prior, notion)
    elif use == "orbits":
        stats = _orbit_measures(mech, prior, notion)
    else:
        raise InputError(f"unknown mode {use!r}: 'auto', 'orbits' or 'kernel'", "use")
    return {
        "level": stats["level"],
        "distortion": stats["distortion"],
        "row_sums_ok": bool(stats["row_error"] <= tol),
        "max_row_sum_error": stats["row_error"],
        "level_ok": None if epsilon is None else bool(stats["level"] <= epsilon + tol),
        "via": use,
        "n_orbits": mech.n_orbits,
    }
