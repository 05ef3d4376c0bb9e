"""Privacy–distortion figures (matplotlib, drawn off-screen with the Agg canvas).

Imported lazily by the plotting commands only, so that ``import privopt`` never pulls in
matplotlib. The figure is built on a :class:`matplotlib.figure.Figure` with an Agg canvas,
without pyplot, so it neither needs a display nor changes the backend of a user's session.

Closed-form overlays are drawn where the papers give the answer (spec/math.md §3):

* databases (or a single alphabet, read as ``n = 1`` row) with Hamming distortion, for ``dp``,
  ``ldp`` and ``identifiability``: ``h(ε)`` ([004] eq. 36) and the Theorem 1 sandwich
  ``h(ε + ε_X) ≤ D*_DP(ε) ≤ h(ε)``, with ``ε_X`` and ``ε̃_X`` marked (identifiability is
  infeasible below ``ε_X`` and equals ``h(ε)`` from ``ε̃_X`` on);
* ``mutual_information`` on databases with Hamming distortion: the PD-MIP closed form
  ``ε*_m(D) = H(X) − n h_b(D/n) − D ln(m − 1)`` on ``D ≤ h(ε̃_X)`` ([004] Thm 2, spec §3.7);
* ``mutual_information`` when the observed ``Y`` is uniform on ``k`` symbols, a function of the
  secret, with Hamming distortion: the rate–distortion function ``ln k − h_b(D) − D ln(k−1)``
  ([002] Corollary 1, spec §2.4).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from privopt import closed_forms
from privopt.model import DatabasePrior, Distortion

__all__ = ["plot_curves", "XLABEL", "YLABEL"]

XLABEL = "privacy level ε (nats)"
YLABEL = "expected distortion E[d]"

_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "h"]
_LINESTYLES = ["-", "--", "-.", (0, (3, 1, 1, 1, 1, 1))]
_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def _as_database(prior) -> DatabasePrior | None:
    """The prior as a database prior: itself, or a single alphabet read as ``n = 1`` row."""
    if getattr(prior, "is_database", False):
        return prior
    if getattr(prior, "is_joint", False) or prior is None:
        return None
    probs = np.asarray(prior.probs)
    if probs.size < 2:
        return None
    return DatabasePrior(probs.size, 1, probs=probs)


def _is_hamming(distortion: Distortion | None, prior) -> bool:
    if distortion is None:
        return False
    if distortion.is_database_hamming:
        return True
    if distortion.kind != "hamming" or getattr(prior, "is_joint", False):
        return False
    return getattr(prior, "n", 1) == 1 or not getattr(prior, "is_database", False)


def _rd_alphabet(prior) -> int | None:
    """``k`` when Y is uniform on ``k`` symbols and a function of the secret (else ``None``)."""
    if getattr(prior, "is_database", False):
        return None
    if getattr(prior, "is_joint", False):
        joint = prior.joint
        if ((joint > 0).sum(axis=1) > 1).any():
            return None  # Y is not a function of S
        p_y = prior.p_y
    else:
        p_y = prior.probs
    if p_y.size >= 2 and np.allclose(p_y, 1.0 / p_y.size, rtol=0, atol=1e-12):
        return int(p_y.size)
    return None


def _overlays(ax, prior, distortion, notions, neighbors, x_max: float) -> None:
    grid = np.linspace(0.0, x_max, 400)
    db = _as_database(prior) if _is_hamming(distortion, prior) else None
    pairwise = {"dp", "identifiability", "ldp"} & set(notions)
    hamming_rel = neighbors in (None, "hamming") or (db is not None and db.n == 1)
    if db is not None and pairwise and (hamming_rel or "ldp" in notions):
        m, n = db.m, db.n
        h = closed_forms.h(grid, m, n)
        eps_x = closed_forms.epsilon_x(db)
        eps_t = closed_forms.epsilon_tilde_x(db)
        if n == 1:
            h_label = f"h(ε) = {m - 1}/(e^ε + {m - 1}): {m}-ary randomised response"
        else:
            h_label = "h(ε) (Wang et al. eq. 36)"
        if eps_x <= 1e-12:
            h_label += ": optimal for dp, ldp and identifiability (uniform prior)"
        else:
            h_label += ": upper bound on D*_DP"
            if "identifiability" in notions:
                h_label += "; = D*_I for ε ≥ ε̃_X"
        ax.plot(grid, h, color="black", lw=1.2, label=h_label)
        if math.isfinite(eps_x) and eps_x > 1e-12:
            low = closed_forms.h(grid + eps_x, m, n)
            ax.plot(
                grid, low, color="black", lw=1.0, ls="--", label="h(ε + ε_X): lower bound on D*_DP"
            )
            ax.fill_between(
                grid,
                low,
                h,
                color="grey",
                alpha=0.15,
                lw=0,
                label="Wang et al. Thm 1 sandwich for D*_DP",
            )
            if eps_x <= x_max and "identifiability" in notions:
                ax.axvline(
                    eps_x,
                    color="grey",
                    ls=":",
                    lw=1.2,
                    label=f"ε_X = {eps_x:.4g} (identifiability infeasible below)",
                )
            if math.isfinite(eps_t) and eps_t - eps_x > 1e-9 and eps_t <= x_max:
                ax.axvline(eps_t, color="grey", ls="-.", lw=1.0, label=f"ε̃_X = {eps_t:.4g}")
    if "mutual_information" in notions and distortion is not None:
        if db is not None and getattr(prior, "is_database", False):
            lo, hi = closed_forms.pdmip_valid_range(db)
            ds = np.linspace(max(lo, 1e-6), hi, 300)[1:]
            rate = np.array([closed_forms.pdmip_value(db, d, strict=False) for d in ds])
            keep = rate <= x_max
            ax.plot(
                rate[keep],
                ds[keep],
                color="black",
                lw=1.2,
                ls=(0, (1, 1)),
                label="PD-MIP closed form (Wang et al. Thm 2)",
            )
        k = _rd_alphabet(prior) if distortion.kind == "hamming" else None
        if k is not None:
            ds = np.linspace(1e-6, (k - 1) / k, 300)
            rate = math.log(k) - closed_forms.binary_entropy(ds) - ds * math.log(k - 1)
            keep = rate <= x_max
            ax.plot(
                rate[keep],
                ds[keep],
                color="black",
                lw=1.2,
                ls=(0, (1, 1)),
                label=f"rate–distortion ln {k} − h_b(D) − D ln {k - 1} (Calmon–Fawaz Cor. 1)",
            )


def _curve_xy(curve) -> tuple[np.ndarray, np.ndarray]:
    """The points of a curve: ``(requested ε, D*)`` for a level sweep, ``(least ε*, budget)``
    for a budget sweep (so flat stretches of the curve stay visible)."""
    if curve.mode == "epsilon":
        return curve.column("requested_epsilon"), curve.column("distortion")
    return curve.column("epsilon"), curve.column("requested_max_distortion")


def plot_curves(
    curves: Sequence,
    path: str | os.PathLike,
    *,
    prior=None,
    distortion: Distortion | None = None,
    neighbors: str | None = None,
    title: str | None = None,
    highlight: tuple[float, float, str] | None = None,
) -> str:
    """Draw one or more privacy–distortion curves and save the figure.

    Parameters
    ----------
    curves : sequence of :class:`privopt.solve.Curve`
        One line per notion; points that are infeasible or failed are left out.
    path : str or path-like
        Where to write (the format follows the extension: ``.png``, ``.pdf``, ``.svg``).
    prior, distortion, neighbors
        The problem, for the closed-form overlays (see the module docstring).
    title : str, optional
    highlight : (epsilon, distortion, label), optional
        One point to mark, e.g. the solved design.

    Returns
    -------
    str
        The path written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 5.0), dpi=150, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()

    xs = [0.0]
    for curve in curves:
        xs.extend(v for v in _curve_xy(curve)[0] if np.isfinite(v))
    if highlight is not None:
        xs.append(highlight[0])
    x_max = max(xs) * 1.02 if max(xs) > 0 else 1.0

    notions = [curve.notion for curve in curves]
    _overlays(ax, prior, distortion, notions, neighbors, x_max)

    for i, curve in enumerate(curves):
        eps, dist = _curve_xy(curve)
        ok = np.array([r.get("status") in ("optimal", "optimal_inaccurate") for r in curve.records])
        ok &= np.isfinite(eps) & np.isfinite(dist)
        n_bad = int((~ok).sum())
        what = "D*(ε)" if curve.mode == "epsilon" else "least ε*(D)"
        label = f"{curve.notion}: {what}, solved"
        if n_bad:
            label += f" ({n_bad} infeasible/failed point{'s' if n_bad > 1 else ''} left out)"
        # earlier curves wider and larger, so that curves that coincide stay visible
        shrink = len(curves) - 1 - i
        order = np.argsort(eps[ok], kind="stable")
        ax.plot(
            eps[ok][order],
            dist[ok][order],
            color=_COLORS[i % len(_COLORS)],
            marker=_MARKERS[i % len(_MARKERS)],
            ms=3.5 + 1.4 * shrink,
            lw=1.5 + 0.9 * shrink,
            ls=_LINESTYLES[i % len(_LINESTYLES)],
            alpha=0.75 if shrink else 1.0,
            label=label,
            zorder=3 + i,
        )
    if highlight is not None:
        ax.plot(
            [highlight[0]],
            [highlight[1]],
            marker="*",
            ms=14,
            color="gold",
            markeredgecolor="black",
            ls="none",
            label=highlight[2],
            zorder=5,
        )

    ax.set_xlabel(XLABEL)
    ax.set_ylabel(YLABEL)
    ax.set_xlim(0.0, x_max)
    ax.set_ylim(bottom=0.0)
    ax.grid(alpha=0.3)
    ax.set_title(title or "privacy–distortion trade-off", fontsize=10)
    ax.legend(fontsize=7.5, loc="best", framealpha=0.9)
    out = os.fspath(path)
    fig.savefig(out)
    return out
