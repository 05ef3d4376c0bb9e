"""Symmetry reduction for exchangeable (i.i.d.-row) database priors with Hamming distortion.

Setting (Wang, Ying & Zhang 2016, §2): databases ``x = (x_1, …, x_n) ∈ Dⁿ``, ``|D| = m``, rows
i.i.d. with pmf ``π`` (:class:`~privopt.model.DatabasePrior` with ``row_probs``), the row-wise
Hamming distortion ``d(x, y) = #{i : x_i ≠ y_i}`` and Hamming neighbours (databases that
differ in one row). Three programs are solved:

* ``dp`` — PD-DP, eqs (14)–(17): ``min E d`` s.t. ``W[x,y] ≤ e^ε W[x',y]`` (x ~ x');
* ``identifiability`` — PD-I, eqs (8)–(13), as an LP in the joint ``q = p(x) W[x,y]``:
  ``p(x) W[x,y] ≤ e^ε p(x') W[x',y]`` (x ~ x');
* ``mutual_information`` — PD-MIP, eqs (31)–(34): ``min I(X;Y)`` s.t. ``E d ≤ D`` (a budget
  point), or ``min E d`` s.t. ``I(X;Y) ≤ ε`` (an ε point).

Orbits
------
All three programs are convex and invariant under permutations of the n rows (applied to x
and y together), so an optimal mechanism can be taken invariant: ``W[x, y]`` depends only on
the *joint type* ``T[a, b] = #{i : x_i = a, y_i = b}``
(:mod:`~privopt.methods.symmetric.orbits`). :class:`SymmetricMechanism` stores a mechanism in
this form and :func:`verify_symmetric` measures level, distortion and row sums on it without
ever materialising the ``mⁿ × mⁿ`` matrix.

Single letter (exact)
---------------------
With independent rows all three programs single-letterise (derived here; checked against the
dense programs for small n in ``tests/methods/test_fastpath_symmetric.py``):

* DP and identifiability. Let ``W`` be feasible and ``W_i(b|a) = Σ_{x_{−i}} p(x_{−i})
  Σ_{y: y_i = b} W[(a, x_{−i}), y]`` the channel from row i to output row i. For fixed
  ``x_{−i}`` the channel ``a ↦ W[(a, x_{−i}), ·]`` obeys the constraint between every pair of
  values (those inputs are neighbours; for identifiability ``p(x) = π_a p(x_{−i})``);
  marginalising ``y`` to ``y_i`` and averaging over ``x_{−i}`` (whose law does not depend on
  ``a``, as the rows are independent) keeps it. So ``W_i`` is feasible for the one-row
  problem, and ``E d = Σ_i P(x_i ≠ y_i) = Σ_i D₁(W_i) ≥ n D₁*``. Conversely the product
  ``B^{⊗n}`` of a one-row optimum ``B`` is feasible (neighbours differ in one factor) with
  ``E d = n D₁*``. Hence ``D*(ε) = n · D₁*(ε)``: one LP on ``m`` symbols
  (:func:`~privopt.methods.symmetric.single_letter.single_row_lp`), whose dual bound times n
  certifies the answer. This reproduces Wang et al.'s Theorem 1 (``h(ε)`` for a uniform prior,
  ``D*_I = h(ε)`` for ``ε ≥ ε̃_X``, PD-I infeasible below ``ε_X``) and shows
  ``D*_DP = h(ε)`` for ``ε ≥ ε̃_X`` for i.i.d. priors.
* Mutual information. ``I(Xⁿ; Yⁿ) ≥ Σ_i I(X_i; Y_i)`` for independent rows, and the one-row
  rate–distortion function ``R₁`` is convex, so ``min I = n R₁(D/n)``, attained by
  ``B^{⊗n}``. ``R₁`` for Hamming distortion is solved in closed form at each slope (a
  water-filling over the most likely symbols), the slope by a scalar root search, and
  Csiszár's bound certifies it (gap ~1e-16). On ``D ≤ h(ε̃_X)`` this is Wang et al.'s
  Theorem 2, ``H(X) − n h_b(D/n) − D ln(m−1)``.

Measured on this machine (2 cores), m = 2, ε = 1, priors (½, ½) and (0.7, 0.3): n = 30 in
10–25 ms per notion including the re-measurement on all 5,456 orbits, error against the
closed forms ≤ 1e-13; n = 100 in 0.5 s when its 176,851 orbits are re-measured.
"""

from __future__ import annotations

__all__ = ["Symmetric", "MAX_VERIFY_ORBITS", "SOLVED_NOTIONS"]

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from privopt.methods.base import (
    Answer,
    Certificate,
    Measurement,
    Method,
    Stopping,
    Task,
    register,
)
from privopt.model import DatabasePrior
from privopt.status import Status

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from privopt.model import JointPrior, Prior
    from privopt.request import DesignRequest

#: The notions the reduction solves (canonical names; aliases resolve through
#: :func:`privopt.notions.get_notion`).
SOLVED_NOTIONS = ("dp", "identifiability", "mutual_information")

#: Largest number of orbits on which a solve re-measures its own product answer orbit by orbit
#: (beyond, from the one-row kernel; both are exact for a product mechanism).
MAX_VERIFY_ORBITS = 20_000


def iid_rows(prior: Prior | JointPrior) -> np.ndarray | None:
    """The row pmf of an exchangeable database prior, or ``None``.

    Parameters
    ----------
    prior : Prior or JointPrior
        The request's prior.

    Returns
    -------
    numpy.ndarray or None
        The row pmf ``π`` (``m`` floats) of a :class:`~privopt.model.DatabasePrior` with
        i.i.d. rows; ``None`` for any other prior.
    """
    if isinstance(prior, DatabasePrior) and prior.is_iid:
        return np.asarray(prior.row_probs, dtype=float)
    return None


class Symmetric(Method):
    """The exact single-letter reduction (see the module docstring)."""

    name = "symmetric"
    memory_model = "structured"
    priority = 50
    # a one-row LP on m symbols and a re-measurement on at most MAX_VERIFY_ORBITS orbits:
    # milliseconds (measured: n = 100 in 0.5 s), nothing that would need stopping
    stopping = Stopping.CHECKS
    description = (
        "i.i.d.-row database priors with row-wise Hamming distortion and Hamming neighbours: "
        "exact single-letter reduction (one-row LP for dp / identifiability, water-filling "
        "rate-distortion for mutual information); the answer is held by orbit"
    )

    def unsupported(self, request: DesignRequest) -> str | None:
        """Why the single-letter reduction cannot take ``request``, or ``None``: it needs dp,
        identifiability or mutual information (also as average leakage) on a database prior
        with i.i.d. rows, the row-wise Hamming distortion on the same databases, Hamming
        neighbours (if any), and no extra budgets, constraints or options.
        """
        notion = request.notion.name
        if notion not in SOLVED_NOTIONS:
            return f"solves {', '.join(SOLVED_NOTIONS)} only"
        prior = request.prior
        if iid_rows(prior) is None:
            return "needs a database prior with i.i.d. rows (row_probs)"
        d = request.distortion
        if not d.is_database_hamming or (d.params["m"], d.params["n"]) != (prior.m, prior.n):
            return "needs the row-wise Hamming distortion on the same databases"
        rel = request.neighbors
        if rel is not None and rel.kind != "hamming":
            return "needs Hamming neighbours"
        if not request.is_plain or request.options:
            return "takes no extra distortion budgets, constraints or options"
        return None

    def auto(self, request: DesignRequest, *, sweep: bool = False) -> bool:
        """Picked without being named for mechanisms of at least 4096 entries, sweep or not.

        Returns
        -------
        bool
            ``True`` when the mechanism has at least 4096 entries (``request.entries``).
        """
        # exact and milliseconds at every size; below 4096 entries the cvxpy program is as
        # fast and the dense answer is what users expect to see
        return request.entries >= 4096

    def solve(self, task: Task) -> Answer:
        """Solve the one-row problem and return its ``n``-fold product, held by orbit.

        dp and identifiability ε points solve the one-row LP (its dual value times ``n`` is
        the certificate); mutual-information ε and budget points solve the one-row
        rate–distortion problem (certified by Csiszár's bound). The product is re-measured
        orbit by orbit (up to :data:`MAX_VERIFY_ORBITS` orbits, else from the kernel).

        Returns
        -------
        Answer
            ``OPTIMAL`` with the :class:`SymmetricMechanism` (``structured``), its
            re-measurement, the certificate and, when ``mⁿ`` is at most
            :data:`~privopt.methods.symmetric.mechanism.MAX_DENSE`, the dense matrix;
            ``INFEASIBLE`` or ``FAILED`` when the one-row LP has no answer; ``FAILED`` for a
            dp or identifiability budget point (left to the line search).
        """
        from privopt.methods.symmetric.mechanism import MAX_DENSE, SymmetricMechanism
        from privopt.methods.symmetric.single_letter import single_row_lp
        from privopt.methods.symmetric.verification import verify_symmetric

        start = time.perf_counter()
        request = task.request
        prior = request.prior
        pi = iid_rows(prior)
        m, n = prior.m, prior.n
        notion = request.notion.name
        task.emit(self.name, "start")
        answer = Answer(Status.OPTIMAL, self.name, details={"n_orbits": _orbits(m, n)})
        if notion == "mutual_information":
            kernel, lower, objective, reduction = _mutual_information(pi, n, task)
        else:
            if task.epsilon is None:
                answer.status = Status.FAILED
                answer.message = "dp / identifiability budget points go through the line search"
                return answer
            eps = min(float(task.epsilon), 700.0)  # e^{−ε} underflows past ~745
            status, kernel, value, cert = single_row_lp(pi, notion, eps, 1e-10)
            if status != "optimal":
                answer.status = Status.INFEASIBLE if status == "infeasible" else Status.FAILED
                answer.message = f"one-row LP: {status}"
                return answer
            objective, lower, reduction = n * value, n * cert["dual_value"], "one-row LP"
        mech = SymmetricMechanism(m, n, kernel=kernel)
        use = "orbits" if mech.n_orbits <= MAX_VERIFY_ORBITS else "kernel"
        check = verify_symmetric(mech, prior, notion, use=use)
        answer.structured = mech
        answer.measured = Measurement(
            check["level"], check["distortion"], check["max_row_sum_error"], {"via": check["via"]}
        )
        answer.objective = float(objective)
        answer.certificate = Certificate(float(lower), f"single-letter {reduction}")
        answer.details["kernel"] = kernel.tolist()
        if mech.size <= MAX_DENSE:
            answer.matrix = mech.to_dense()
        answer.solve_time = time.perf_counter() - start
        return answer


def _orbits(m: int, n: int) -> int:
    return math.comb(n + m * m - 1, m * m - 1)


def _mutual_information(pi, n, task: Task):
    """One-row rate–distortion at ``D/n`` (budget point) or rate ``ε/n`` (ε point); returns
    the kernel, a lower bound on the objective, the objective and a note."""
    from privopt.methods.symmetric.single_letter import rate_distortion_hamming

    if task.budget is not None:
        kernel, d1, r1, cert = rate_distortion_hamming(pi, distortion=task.budget / n)
        return kernel, n * (r1 - max(cert["duality_gap"], 0.0)), n * r1, "rate-distortion"
    eps = float(task.epsilon)
    kernel, d1, r1, cert = rate_distortion_hamming(
        pi, rate=eps / n if math.isfinite(eps) else 1e300
    )
    slope = cert["slope"]
    if 0 < slope < math.inf:
        # Csiszár: R₁(D) ≥ a − λD for every D, with a = R₁(D₁) − gap + λD₁; any one-row
        # channel with I ≤ ε/n has D ≥ (a − ε/n)/λ, so n times that bounds D*(ε)
        intercept = r1 - max(cert["duality_gap"], 0.0) + slope * d1
        lower = n * (intercept - eps / n) / slope
    else:
        lower = n * d1  # the identity (D = 0) or the best constant output (ε = 0): exact
    return kernel, min(lower, n * d1), n * d1, "rate-distortion"


register(Symmetric())
