"""Blahut–Arimoto for a joint prior ``p(s, y)``: the least ``I(S;U)`` of a mechanism
``p(u|y)`` within a distortion budget, and its dual trade-off (Calmon & Fawaz (2012),
Theorem 1 and Remark 2).

**The scheme.** For a multiplier ``λ ≥ 0`` minimise ``F_λ(W) = I(S;U) + λ E d(Y,U)`` over
row-stochastic ``W = p(u|y)``, with ``p(u|s) = Σ_y p(y|s) W[y,u]``. Calmon & Fawaz (2012),
Remark 2, alternates over the output marginal, as Blahut–Arimoto does; the inner step becomes closed
form with a second variational variable, the **secret's posterior** ``v(y|s,u)``. With the
Markov chain ``S − Y − U``, ``−H(U|S) = −H(Y|S) − H(U|Y) + H(Y|S,U)`` and
``H(Y|S,U) = min_v E[−ln v(Y|S,U)]``, so for any pmf ``r(u)`` and any ``v``::

    F_λ(W) ≤ −H(Y|S) + Σ_y p(y) Σ_u W[y,u] (ln W[y,u] − Σ_s p(s|y) ln v(y|s,u) − ln r(u)
             + λ d(y,u)),

with equality at ``r = p_U`` and ``v(y|s,u) = p(y|s) W[y,u]/p(u|s)``. Minimising the bound
row by row gives the update (a majorise–minimise step, so ``F_λ`` never increases)::

    W'[y,u] ∝ W[y,u] · exp(−g[y,u]),   g[y,u] = Σ_s p(s|y) ln(p(u|s)/p(u)) + λ d(y,u),

and ``p(y) g[y,u]`` is the gradient of ``F_λ``. With ``S = Y`` it is the classical BA step
``W' ∝ p_U e^{−λd}``. The step is taken in the log domain (outputs whose mass vanishes do
not underflow), and lengthened (``W' ∝ W e^{−η g}``, η doubling) while ``F_λ`` decreases,
falling back to the majorising step η = 1.

**Certificate.** ``F_λ`` is convex in ``W``, so for every ``W`` (Frank–Wolfe bound)
``min F_λ ≥ F_λ(W) − Σ_y p(y) (Σ_u W[y,u] g[y,u] − min_u g[y,u])``. Weak duality turns it
into a bound on the constrained problems: ``I*(Δ) ≥ min F_λ − λΔ`` and
``D*(ε) ≥ (min F_λ − ε)/λ``.

**Search.** ``E d`` decreases and ``I`` increases with λ; λ is bisected (in ``ln λ``) and the
answer is the mixture of the two bracketing mechanisms that meets the budget (or the level)
exactly: ``E d`` is linear and ``I`` convex in ``W``, so the mixture is feasible and its
objective is at most the chord. The search stops when the duality gap is below the target.
"""

from __future__ import annotations

__all__ = ["joint_rate_distortion", "joint_distortion_rate", "JointLagrangian"]

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp

from privopt.methods.blahut_arimoto.rate_distortion import RateDistortionSolution
from privopt.model import JointPrior

if TYPE_CHECKING:
    from privopt.methods.base import Deadline

#: Floor on ``ln W`` (an entry below e^-1e4 is 0 for every purpose).
_LOG_FLOOR = -1e4
#: Steps of :meth:`JointLagrangian.minimise` between two looks at the deadline (a step is
#: two to a few evaluations of ``F_λ``: microseconds to milliseconds).
CHECK_EVERY = 32


class JointLagrangian:
    """``F_λ(W) = I(S;U) + λ E d(Y,U)`` on the supports of ``p(s)`` and ``p(y)``.

    Parameters
    ----------
    prior : JointPrior
        ``p(s, y)``.
    distortion : numpy.ndarray
        ``d[y, u]`` on every input.
    """

    def __init__(self, prior: JointPrior, distortion: np.ndarray) -> None:
        """Restrict ``p(s, y)`` and ``d`` to the supports of ``p(s)`` and ``p(y)``.

        Parameters
        ----------
        prior : JointPrior
            ``p(s, y)``.
        distortion : numpy.ndarray
            ``d[y, u]`` on every input, shape ``(|Y|, |U|)``.
        """
        self.s_mask = prior.p_s > 0
        self.y_mask = prior.p_y > 0
        self.p_s = prior.p_s[self.s_mask]
        self.p_y = prior.p_y[self.y_mask]
        self.d_full = np.asarray(distortion, dtype=float)
        self.d = self.d_full[self.y_mask]
        with np.errstate(divide="ignore"):
            self.log_y_given_s = np.log(prior.p_y_given_s[np.ix_(self.s_mask, self.y_mask)])
            self.log_p_y = np.log(self.p_y)
        self.s_given_y = prior.p_s_given_y[np.ix_(self.y_mask, self.s_mask)]
        self.n_out = self.d.shape[1]

    def evaluate(self, log_w: np.ndarray, lam: float) -> dict:
        """``F_λ``, ``I``, ``E d``, the gradient ``g`` and the Frank–Wolfe gap at
        ``W = e^{log_w}``.

        Parameters
        ----------
        log_w : numpy.ndarray
            ``ln W`` on the supported inputs.
        lam : float
            λ ≥ 0.

        Returns
        -------
        dict
            ``value``, ``info``, ``dist``, ``g``, ``gap`` and ``lower`` (``value − gap``, a
            lower bound on ``min F_λ``).
        """
        log_us = logsumexp(self.log_y_given_s[:, :, None] + log_w[None, :, :], axis=1)
        log_u = logsumexp(self.log_p_y[:, None] + log_w, axis=0)
        w = np.exp(log_w)
        p_us = np.exp(log_us)
        info = float(np.sum(self.p_s[:, None] * p_us * (log_us - log_u[None, :])))
        dist = float(np.sum(self.p_y[:, None] * w * self.d))
        g = self.s_given_y @ log_us - log_u[None, :] + lam * self.d
        fw_gap = float(np.sum(self.p_y * ((w * g).sum(axis=1) - g.min(axis=1))))
        value = info + lam * dist
        return {
            "value": value,
            "info": max(info, 0.0),
            "dist": dist,
            "g": g,
            "gap": max(fw_gap, 0.0),
            "lower": value - max(fw_gap, 0.0),
        }

    def minimise(
        self,
        lam: float,
        log_w: np.ndarray | None = None,
        tol: float = 1e-11,
        max_iter: int = 20000,
        deadline: Deadline | None = None,
    ) -> tuple[np.ndarray, dict]:
        """Minimise ``F_λ`` from ``log_w`` (uniform by default).

        Parameters
        ----------
        lam : float
            λ ≥ 0.
        log_w : numpy.ndarray, optional
            The start (``ln W``).
        tol : float
            Stop when the Frank–Wolfe gap is below ``tol·(1 + |F_λ|)``.
        max_iter : int
            Most steps.
        deadline : Deadline, optional
            Stops the steps early (checked every :data:`CHECK_EVERY` steps) when it passes.

        Returns
        -------
        tuple
            ``(log_w, state)`` with ``state`` as in :meth:`evaluate`.
        """
        if log_w is None:
            log_w = np.full((self.p_y.size, self.n_out), -math.log(self.n_out))
        state = self.evaluate(log_w, lam)
        eta = 1.0
        for step in range(max_iter):
            if state["gap"] <= tol * (1.0 + abs(state["value"])):
                break
            if deadline is not None and step % CHECK_EVERY == 0 and deadline.expired():
                break
            eta = min(2.0 * eta, 1e3)
            while True:
                trial = log_w - eta * state["g"]
                trial = np.maximum(trial - logsumexp(trial, axis=1, keepdims=True), _LOG_FLOOR)
                new = self.evaluate(trial, lam)
                if new["value"] <= state["value"] or eta <= 1.0:
                    break
                eta = max(eta / 4.0, 1.0)
            log_w, state = trial, new
        return log_w, state

    def full_mechanism(self, w: np.ndarray) -> np.ndarray:
        """``W`` on every input: rows of zero-mass inputs go to their least-distortion output.

        Parameters
        ----------
        w : numpy.ndarray
            ``W`` on the supported inputs.

        Returns
        -------
        numpy.ndarray
            ``|Y| × |U|``.
        """
        out = np.zeros(self.d_full.shape)
        out[self.y_mask] = w
        for y in np.flatnonzero(~self.y_mask):
            out[y, int(np.argmin(self.d_full[y]))] = 1.0
        return out

    def info_of(self, w: np.ndarray) -> float:
        """``I(S;U)`` of a mechanism on the supported inputs.

        Parameters
        ----------
        w : numpy.ndarray
            ``W`` on the supported inputs.

        Returns
        -------
        float
            ``I(S;U)`` (nats).
        """
        with np.errstate(divide="ignore"):
            return self.evaluate(np.maximum(np.log(w), _LOG_FLOOR), 0.0)["info"]


def _solution(status, objective, model, w, info, dist, lower, iterations, **extra):
    mech = model.full_mechanism(w) if w is not None else None
    cert = {"lower_bound": float(lower), "duality_gap": float(objective - lower)}
    return RateDistortionSolution(
        status=status,
        objective=float(objective),
        mechanism=mech,
        level=info,
        distortion=dist,
        iterations=iterations,
        certificate=cert if math.isfinite(lower) else {},
        info=extra,
    )


def _bracket_search(model, target, key, tol, deadline, max_steps=80):
    """Bisect ``ln λ`` until the mixture of the bracketing mechanisms that meets
    ``key`` (``"dist"`` or ``"info"``) = ``target`` has a duality gap below ``tol``."""
    # λ small: E d large, I small; λ large: E d small, I large. The multipliers grow by
    # factors of 4 from a small one, each solve warm-started from the last (a cold start at
    # a large multiplier converges slowly)
    states = {}

    def at(lam, start):
        log_w_lam, state = model.minimise(lam, start, deadline=deadline)
        states[lam] = (log_w_lam, state)
        return log_w_lam, state

    def expired() -> bool:
        return deadline is not None and deadline.expired()

    def feasible_side(s: dict) -> bool:  # the side of the large multipliers
        return s["dist"] <= target if key == "dist" else s["info"] > target

    lo = hi = 1e-3
    log_w, s_hi = at(hi, None)
    if feasible_side(s_hi):
        lo = 1e-9
        at(lo, log_w)
    while not feasible_side(s_hi) and hi < 1e8 and not expired():
        lo, hi = hi, hi * 4.0
        log_w, s_hi = at(hi, log_w)
    best = None
    if not feasible_side(s_hi) and expired():  # stopped before a bracket was found
        return None
    for step in range(max_steps):
        if expired():
            break
        best = _mix(model, states[lo], states[hi], lo, hi, target, key)
        if best["gap"] <= tol * (1.0 + abs(best["objective"])):
            break
        mid = math.sqrt(lo * hi)
        start = states[hi][0]
        _, s_mid = at(mid, start)
        if feasible_side(s_mid):
            hi = mid
        else:
            lo = mid
        best = _mix(model, states[lo], states[hi], lo, hi, target, key)
        best["steps"] = step + 1
    return best


def _mix(model, lo_pair, hi_pair, lam_lo, lam_hi, target, key) -> dict:
    """The mixture of the two bracketing mechanisms meeting the target, and the best bound."""
    (lw_lo, s_lo), (lw_hi, s_hi) = lo_pair, hi_pair
    w_lo, w_hi = np.exp(lw_lo), np.exp(lw_hi)
    a, b = s_lo[key], s_hi[key]
    theta = 1.0 if a == b else float(np.clip((target - a) / (b - a), 0.0, 1.0))
    w = (1 - theta) * w_lo + theta * w_hi
    info, dist = model.info_of(w), float(np.sum(model.p_y[:, None] * w * model.d))
    if key == "dist":  # min I s.t. E d ≤ Δ: I* ≥ min F_λ − λΔ
        lower = max(s_lo["lower"] - lam_lo * target, s_hi["lower"] - lam_hi * target, 0.0)
        objective = info
    else:  # min E d s.t. I ≤ ε: D* ≥ (min F_λ − ε)/λ
        lower = max((s_lo["lower"] - target) / lam_lo, (s_hi["lower"] - target) / lam_hi)
        objective = dist
    return {
        "w": w,
        "info": info,
        "dist": dist,
        "objective": objective,
        "lower": lower,
        "gap": objective - lower,
        "lambda": (lam_lo, lam_hi),
    }


def joint_rate_distortion(
    prior: JointPrior,
    distortion: np.ndarray,
    budget: float,
    tol: float = 1e-9,
    deadline: Deadline | None = None,
) -> RateDistortionSolution:
    """``min I(S;U)`` over ``p(u|y)`` s.t. ``E d(Y,U) ≤ budget`` (Calmon & Fawaz (2012),
    Theorem 1), by the joint-prior Blahut–Arimoto scheme of the module docstring, with its
    duality bound.

    Parameters
    ----------
    prior : JointPrior
        ``p(s, y)``.
    distortion : numpy.ndarray
        ``d[y, u]``.
    budget : float
        Δ ≥ 0.
    tol : float
        Target relative duality gap.
    deadline : Deadline, optional
        Stops the search when it expires (status ``time_limit``).

    Returns
    -------
    RateDistortionSolution
        Status ``optimal`` (gap within ``tol``), ``infeasible`` (Δ below
        ``Σ_y p(y) min_u d(y,u)``), ``failed`` or ``time_limit``.
    """
    model = JointLagrangian(prior, distortion)
    d_min = float(model.p_y @ model.d.min(axis=1))
    const = model.p_y @ model.d
    if budget < d_min - 1e-12 * (1 + d_min):
        return RateDistortionSolution("infeasible", info={"least_achievable": d_min})
    u0 = int(np.argmin(const))
    if const[u0] <= budget:  # a constant output meets the budget: I* = 0
        w = np.zeros_like(model.d)
        w[:, u0] = 1.0
        return _solution("optimal", 0.0, model, w, 0.0, float(const[u0]), 0.0, 0)
    best = _bracket_search(model, float(budget), "dist", tol, deadline)
    return _searched_solution(model, best, tol, deadline)


def _searched_solution(model, best: dict, tol: float, deadline) -> RateDistortionSolution:
    """The solution of a bracket search: optimal when its duality gap is within ``tol``
    (relative), else failed (or time_limit when the deadline ended it)."""
    if best is None:  # the deadline ended the search before its first mixture
        return RateDistortionSolution("time_limit", info={"message": "time limit reached"})
    status = "optimal" if best["gap"] <= tol * (1 + abs(best["objective"])) else "failed"
    if status == "failed" and deadline is not None and deadline.expired():
        status = "time_limit"
    return _solution(
        status,
        best["objective"],
        model,
        best["w"],
        best["info"],
        best["dist"],
        best["lower"],
        best.get("steps", 0),
        slopes=list(best["lambda"]),
    )


def joint_distortion_rate(
    prior: JointPrior,
    distortion: np.ndarray,
    eps: float,
    tol: float = 1e-9,
    deadline: Deadline | None = None,
) -> RateDistortionSolution:
    """``min E d(Y,U)`` over ``p(u|y)`` s.t. ``I(S;U) ≤ ε`` (the dual trade-off of
    Calmon & Fawaz (2012), Theorem 1), with its duality bound.

    Parameters
    ----------
    prior : JointPrior
        ``p(s, y)``.
    distortion : numpy.ndarray
        ``d[y, u]``.
    eps : float
        ε > 0 (nats; ``inf`` for no constraint).
    tol : float
        Target relative duality gap.
    deadline : Deadline, optional
        Stops the search when it expires (status ``time_limit``).

    Returns
    -------
    RateDistortionSolution
        ``objective`` = ``E d(Y,U)``; status ``optimal`` (gap within ``tol``, or ``I(S;U)``
        of the least-distortion mechanism already ``≤ ε``), ``failed`` or ``time_limit``.
    """
    model = JointLagrangian(prior, distortion)
    w_min = np.zeros_like(model.d)
    w_min[np.arange(model.d.shape[0]), model.d.argmin(axis=1)] = 1.0
    d_min = float(model.p_y @ model.d.min(axis=1))
    if not math.isfinite(eps) or model.info_of(w_min) <= eps:
        return _solution("optimal", d_min, model, w_min, model.info_of(w_min), d_min, d_min, 0)
    best = _bracket_search(model, float(eps), "info", tol, deadline)
    return _searched_solution(model, best, tol, deadline)
