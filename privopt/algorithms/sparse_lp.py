"""Linear privacy notions as a hand-built sparse LP handed straight to HiGHS.

Every notion below is a set of linear inequalities on the mechanism ``W`` for a fixed prior
(spec §1 and §2), so ``min E[d] s.t. level ≤ ε`` is an LP:

* objective ``Σ_x p(x) Σ_u W[x,u] d(x,u)`` ([004] eq. (14); [002] eq. (15));
* ``Σ_u W[x,u] = 1`` and ``W ≥ 0`` for ``x ∈ supp p``;
* ``dp``: ``W[a,u] ≤ e^ε W[b,u]`` for neighbours ``a ~ b`` in ``supp p`` ([004] eq. (15),
  spec §1 row 12);
* ``identifiability``: ``p(a) W[a,u] ≤ e^ε p(b) W[b,u]`` ([004] §2.8 in W variables, spec §1
  row 11);
* ``ldp`` (and ``dp`` / ``identifiability`` with all pairs): ``lo_u ≤ W[x,u] ≤ e^ε lo_u``
  (resp. ``lo_u ≤ p(x)W[x,u] ≤ e^ε lo_u``), an auxiliary ``lo_u`` per output, so
  ``O(|X||U|)`` rows instead of ``O(|X|²|U|)`` ([003] Def. 14 and 16);
* ``pml``: ``W[x,u] ≤ e^ε q_u`` with ``q_u = Σ_x p(x) W[x,u]`` ([003] Thm 1, spec §1 row 4);
* ``information_privacy`` (LIP): ``e^{−ε} q_u ≤ W[x,u] ≤ e^ε q_u`` ([002] Def. 6, [003]
  Def. 15);
* ``maximal_leakage``: ``W[x,u] ≤ t_u``, ``Σ_u t_u ≤ e^ε`` ([003] eq. (1), spec §1 row 6).

The matrix is assembled with :mod:`scipy.sparse` (COO → CSC) from the neighbour arrays and
passed to :class:`highspy.Highs` as a ``HighsLp``, skipping cvxpy.

**Translation symmetry.** When the prior is uniform and the distortion and neighbour
relation are invariant under the translations of the alphabet (``Z_mⁿ`` acting digit-wise on
databases, ``Z_k`` on a single alphabet) — e.g. the uniform Hamming instances of [004] — the
LP is invariant under ``W ↦ W[x+g, u+g]``; averaging an optimum over the group gives an
optimum of the form ``W[x,u] = f(u − x)``, so the LP shrinks to ``|U|`` variables (one
column's constraints). This is exact (convexity + invariance), and applied automatically.

**Structure (why no column decomposition).** For dp, identifiability and ldp every privacy
row involves one output column only, so the LP is block-angular: ``|U|`` blocks (one cone
``C = {w ≥ 0: w_a ≤ e^ε w_b}`` per column) linked only by the ``|X|`` row sums. Dualising the
row sums gives ``max Σ_x λ(x)`` s.t. ``p∘d(·,u) − λ ∈ C*`` for every ``u``, i.e. Dantzig–Wolfe
with one generalized-network pricing problem per column; it does not shrink the work, so
it is not implemented. Symmetry does shrink it (the translation reduction below; the
coordinate-permutation reduction of the ``symmetric`` fast path for i.i.d. rows).

**Repair.** Interior-point and PDLP answers satisfy the constraints only to the solver
tolerance. The answer is cleaned (negatives clipped, rows renormalised) and then mixed with
the constant mechanism ``W_c`` whose rows all equal the output marginal (level 0 for every
notion here, or ``ε_X`` for identifiability): all constraints are linear and homogeneous, so
the least ``θ`` with ``(1−θ)W + θW_c`` feasible has a closed form per constraint. The level
is then re-measured with :mod:`privopt.measures`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from privopt import measures
from privopt.algorithms._inputs import distortion_matrix, prior_probs
from privopt.algorithms.base import Algorithm, AlgorithmResult, large_instances, register
from privopt.errors import InputError
from privopt.model import (
    DatabasePrior,
    Distortion,
    JointPrior,
    NeighborRelation,
    Prior,
    hamming_neighbors,
)

__all__ = ["solve", "applies", "NOTIONS", "METHODS", "TranslationInvariantMechanism"]

NOTIONS = (
    "dp",
    "ldp",
    "identifiability",
    "pml",
    "information_privacy",
    "maximal_leakage",
)
METHODS = ("auto", "simplex", "ipm", "pdlp")
_PAIR_NOTIONS = ("dp", "identifiability")
#: Largest |supp p|·|U| handled (W variables).
_MAX_VARIABLES = 2**21
#: Largest alphabet for which the translation-invariant answer is also returned densely.
_MAX_DENSE = 4096


# --------------------------------------------------------------------------------------------
# input handling
# --------------------------------------------------------------------------------------------
def _prior_probs(prior) -> np.ndarray:
    return prior_probs(prior, "sparse-LP")


def _relation(prior, neighbors, notion: str) -> NeighborRelation | None:
    """The neighbour relation of a pair notion (``None`` for the others)."""
    if notion == "ldp":
        return _all_pairs_marker(_size(prior))
    if notion not in _PAIR_NOTIONS:
        return None
    if neighbors is None:
        if isinstance(prior, DatabasePrior):
            return hamming_neighbors(prior.m, prior.n)
        return _all_pairs_marker(_size(prior))
    if isinstance(neighbors, str):
        if neighbors == "all":
            return _all_pairs_marker(_size(prior))
        if neighbors == "hamming":
            if not isinstance(prior, DatabasePrior):
                raise InputError(
                    "Hamming neighbours need a database prior; use 'all' on a single alphabet",
                    "privacy.neighbors",
                )
            return hamming_neighbors(prior.m, prior.n)
        raise InputError(
            f"unknown relation {neighbors!r}: use 'hamming' or 'all'", "privacy.neighbors"
        )
    if not isinstance(neighbors, NeighborRelation):
        raise InputError("expected a NeighborRelation, 'hamming' or 'all'", "privacy.neighbors")
    if neighbors.size != _size(prior):
        raise InputError(
            f"the relation is on {neighbors.size} inputs but the prior has {_size(prior)}",
            "privacy.neighbors",
        )
    return neighbors


def _all_pairs_marker(size: int) -> NeighborRelation:
    """ "All pairs" without the ``size²`` pair list: every use here goes through auxiliary
    variables (one per output) or column maxima and minima."""
    empty = np.zeros(0, dtype=np.int64)
    return NeighborRelation(size, empty, empty, "all")


def _size(prior) -> int:
    if isinstance(prior, DatabasePrior):
        return prior.size
    if isinstance(prior, Prior):
        return prior.size
    return int(np.asarray(prior).size)


# --------------------------------------------------------------------------------------------
# translation symmetry (uniform prior, invariant distortion and relation)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Group:
    """Translations of an alphabet: ``Z_mⁿ`` digit-wise (databases) or ``Z_k`` (``n = 1``)."""

    m: int
    n: int

    @property
    def size(self) -> int:
        return self.m**self.n

    def digits(self, idx: np.ndarray) -> np.ndarray:
        powers = self.m ** np.arange(self.n - 1, -1, -1)
        return (np.asarray(idx)[..., None] // powers) % self.m

    def combine(self, a: np.ndarray, b: np.ndarray, sign: int) -> np.ndarray:
        """``a + sign·b`` digit-wise mod m, as indices."""
        powers = self.m ** np.arange(self.n - 1, -1, -1)
        digits = (self.digits(a) + sign * self.digits(b)) % self.m
        return digits @ powers


class TranslationInvariantMechanism:
    """``W[x,u] = f(u − x)`` on ``Z_mⁿ`` (or ``Z_k``), held by its first row ``f``.

    Offers ``row(i)``, ``sample(i, rng)`` and ``dense()`` (the full matrix).
    """

    def __init__(self, f: np.ndarray, group: _Group):
        self.f = np.asarray(f, dtype=float)
        self.group = group
        self.shape = (group.size, group.size)

    def row(self, i: int) -> np.ndarray:
        """``W[i, ·] = f(· − i)``."""
        u = np.arange(self.group.size)
        return self.f[self.group.combine(u, np.full_like(u, i), -1)]

    def sample(self, i: int, rng: np.random.Generator | None = None) -> int:
        """Draw an output for input ``i``: ``u = i + z`` with ``z ~ f``."""
        rng = np.random.default_rng() if rng is None else rng
        z = int(rng.choice(self.group.size, p=self.f / self.f.sum()))
        return int(self.group.combine(np.array(i), np.array(z), 1))

    def dense(self) -> np.ndarray:
        n = self.group.size
        x = np.arange(n)
        z = self.group.combine(x[None, :], x[:, None], -1)  # z[x, u] = u − x
        return self.f[z]


def _translation_group(prior, distortion, relation: NeighborRelation | None) -> _Group | None:
    """The translation group if the whole LP is invariant under it, else ``None``."""
    p = _prior_probs(prior)
    if p.min() <= 0 or p.max() - p.min() > 1e-15 * p.max() * p.size:
        return None
    if isinstance(prior, DatabasePrior):
        group = _Group(prior.m, prior.n)
    else:
        group = _Group(p.size, 1)
    N = group.size
    if relation is not None and relation.kind != "all":
        delta = group.combine(relation.right, relation.left, -1)
        codes, counts = np.unique(delta, return_counts=True)
        if (counts != N).any() or relation.n_pairs != N * codes.size:
            return None
        if (codes == 0).any():
            return None
    if isinstance(distortion, Distortion) and distortion.is_database_hamming:
        if not isinstance(prior, DatabasePrior) or distortion.params["m"] != prior.m:
            return None
        return group
    if N > _MAX_DENSE:
        return None
    d = distortion_matrix(distortion, N)
    if d.shape[1] != N:
        return None
    x = np.arange(N)
    shift = group.combine(x[:, None], x[None, :], 1)  # x + z
    if not np.array_equal(d[x[:, None], shift], np.broadcast_to(d[0], (N, N))):
        return None
    return group


def _first_row_distortion(distortion, group: _Group) -> np.ndarray:
    """``d0(z) = d(0, z)`` (the number of non-zero digits for database Hamming)."""
    if isinstance(distortion, Distortion) and distortion.is_database_hamming:
        return (group.digits(np.arange(group.size)) != 0).sum(axis=1).astype(float)
    return distortion_matrix(distortion, group.size)[0].astype(float)


# --------------------------------------------------------------------------------------------
# LP assembly
# --------------------------------------------------------------------------------------------
@dataclass
class _LP:
    """``min cᵀx`` s.t. ``row_lo ≤ A x ≤ row_hi``, ``col_lo ≤ x ≤ col_hi`` (A in CSC)."""

    A: sp.csc_matrix
    cost: np.ndarray
    col_lo: np.ndarray
    col_hi: np.ndarray
    row_lo: np.ndarray
    row_hi: np.ndarray


class _Builder:
    """Collects COO triplets block by block."""

    def __init__(self, n_cols: int):
        self.n_cols = n_cols
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.n_rows = 0

    def block(self, n_rows: int, entries, lo, hi) -> None:
        """Add ``n_rows`` rows; ``entries`` is a list of (local row, column, value) arrays."""
        for r, c, v in entries:
            r = np.asarray(r, dtype=np.int64)
            self.rows.append(r + self.n_rows)
            self.cols.append(np.asarray(c, dtype=np.int64))
            self.vals.append(np.broadcast_to(np.asarray(v, dtype=float), r.shape).copy())
        self.lo.append(np.broadcast_to(np.asarray(lo, dtype=float), (n_rows,)).copy())
        self.hi.append(np.broadcast_to(np.asarray(hi, dtype=float), (n_rows,)).copy())
        self.n_rows += n_rows

    def matrix(self) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
        A = sp.coo_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.n_rows, self.n_cols),
        ).tocsc()
        A.sum_duplicates()
        return A, np.concatenate(self.lo), np.concatenate(self.hi)


def _is_complete(relation: NeighborRelation, n_support: int) -> bool:
    return relation.kind == "all" or relation.n_pairs == n_support * (n_support - 1)


def _build_full(
    p_s: np.ndarray,
    d_s: np.ndarray,
    notion: str,
    eps: float,
    pairs: tuple[np.ndarray, np.ndarray] | None,
    complete: bool,
) -> _LP:
    """The LP on the support rows. Variables: ``W[i,u]`` at ``i·U + u``, then auxiliaries."""
    S, U = d_s.shape
    nW = S * U
    ce = float(np.exp(eps))
    u = np.arange(U)
    widx = np.arange(nW).reshape(S, U)
    n_aux = (
        U
        if (
            notion in ("ldp", "pml", "information_privacy", "maximal_leakage")
            or (notion in _PAIR_NOTIONS and complete)
        )
        else 0
    )
    b = _Builder(nW + n_aux)
    aux = nW + u
    # Σ_u W[i,u] = 1 (row-stochastic)
    b.block(S, [(np.repeat(np.arange(S), U), widx.ravel(), 1.0)], 1.0, 1.0)
    rowsWU = np.arange(nW)
    if notion in _PAIR_NOTIONS and complete:
        # lo_u ≤ s_x W[x,u] ≤ e^ε lo_u with s = 1 (dp / ldp) or p(x) (identifiability, LDI)
        scale = p_s / p_s.max() if notion == "identifiability" else np.ones(S)
        coef = np.repeat(scale, U)
        auxcol = np.tile(aux, S)
        b.block(nW, [(rowsWU, widx.ravel(), coef), (rowsWU, auxcol, -1.0)], 0.0, np.inf)
        b.block(nW, [(rowsWU, widx.ravel(), coef), (rowsWU, auxcol, -ce)], -np.inf, 0.0)
    elif notion in _PAIR_NOTIONS:
        left, right = pairs
        P = left.size
        rows = np.arange(P * U)
        ca = (left[:, None] * U + u[None, :]).ravel()
        cb = (right[:, None] * U + u[None, :]).ravel()
        if notion == "dp":  # W[a,u] − e^ε W[b,u] ≤ 0  ([004] eq. (15))
            va, vb = 1.0, -ce
        else:  # p(a)W[a,u] − e^ε p(b)W[b,u] ≤ 0, rows scaled to max coefficient 1
            pa, pb = p_s[left], ce * p_s[right]
            m = np.maximum(pa, pb)
            va, vb = np.repeat(pa / m, U), np.repeat(-pb / m, U)
        b.block(P * U, [(rows, ca, va), (rows, cb, vb)], -np.inf, 0.0)
    elif notion == "ldp":
        auxcol = np.tile(aux, S)
        b.block(nW, [(rowsWU, widx.ravel(), 1.0), (rowsWU, auxcol, -1.0)], 0.0, np.inf)
        b.block(nW, [(rowsWU, widx.ravel(), 1.0), (rowsWU, auxcol, -ce)], -np.inf, 0.0)
    elif notion in ("pml", "information_privacy"):
        # q_u − Σ_x p(x) W[x,u] = 0
        b.block(U, [(np.tile(u, S), widx.ravel(), -np.repeat(p_s, U)), (u, aux, 1.0)], 0.0, 0.0)
        auxcol = np.tile(aux, S)
        b.block(nW, [(rowsWU, widx.ravel(), 1.0), (rowsWU, auxcol, -ce)], -np.inf, 0.0)
        if notion == "information_privacy":
            b.block(nW, [(rowsWU, widx.ravel(), 1.0), (rowsWU, auxcol, -1.0 / ce)], 0.0, np.inf)
    elif notion == "maximal_leakage":
        auxcol = np.tile(aux, S)
        b.block(nW, [(rowsWU, widx.ravel(), 1.0), (rowsWU, auxcol, -1.0)], -np.inf, 0.0)
        b.block(1, [(np.zeros(U), aux, 1.0)], -np.inf, ce)
    A, lo, hi = b.matrix()
    cost = np.concatenate([(p_s[:, None] * d_s).ravel(), np.zeros(n_aux)])
    return _LP(A, cost, np.zeros(nW + n_aux), np.full(nW + n_aux, np.inf), lo, hi)


def _build_reduced(
    d0: np.ndarray, notion: str, eps: float, group: _Group, relation: NeighborRelation | None
) -> _LP:
    """The translation-reduced LP in ``f(z) = W[x, x+z]`` (one column's constraints)."""
    N = group.size
    ce = float(np.exp(eps))
    z = np.arange(N)
    col_hi = np.full(N, np.inf)
    col_lo = np.zeros(N)
    complete = notion == "ldp" or (relation is not None and relation.kind == "all")
    n_aux = 1 if notion in _PAIR_NOTIONS + ("ldp",) and complete else 0
    b = _Builder(N + n_aux)
    b.block(1, [(np.zeros(N), z, 1.0)], 1.0, 1.0)  # Σ_z f(z) = 1
    if notion in _PAIR_NOTIONS + ("ldp",):
        if complete:  # lo ≤ f(z) ≤ e^ε lo: every column holds all values of f
            lo_col = np.full(N, N)
            b.block(N, [(z, z, 1.0), (z, lo_col, -1.0)], 0.0, np.inf)
            b.block(N, [(z, z, 1.0), (z, lo_col, -ce)], -np.inf, 0.0)
        else:  # f(z) ≤ e^ε f(z − δ) for every neighbour difference δ = b − a
            deltas = np.unique(group.combine(relation.right, relation.left, -1))
            rows = np.arange(N * deltas.size)
            zz = np.tile(z, deltas.size)
            dd = np.repeat(deltas, N)
            b.block(
                rows.size, [(rows, zz, 1.0), (rows, group.combine(zz, dd, -1), -ce)], -np.inf, 0.0
            )
    elif notion in ("pml", "maximal_leakage"):
        # q_u = 1/N; PML: f ≤ e^ε/N; maximal leakage: N max f ≤ e^ε (the same bound)
        col_hi[:] = ce / N
    elif notion == "information_privacy":
        col_lo[:] = 1.0 / (ce * N)
        col_hi[:] = ce / N
    A, lo, hi = b.matrix()
    return _LP(
        A,
        np.concatenate([d0, np.zeros(n_aux)]),
        np.concatenate([col_lo, np.zeros(n_aux)]),
        np.concatenate([col_hi, np.full(n_aux, np.inf)]),
        lo,
        hi,
    )


# --------------------------------------------------------------------------------------------
# HiGHS
# --------------------------------------------------------------------------------------------
_STATUS = {
    highspy.HighsModelStatus.kOptimal: "optimal",
    highspy.HighsModelStatus.kInfeasible: "infeasible",
}


def _run_highs(lp: _LP, method: str, tol: float, options: dict, warm_start) -> dict:
    """Solve with :class:`highspy.Highs`; returns the primal solution and solver data."""
    inf = highspy.kHighsInf
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(options.get("verbose", False)))
    model = highspy.HighsLp()
    n_col, n_row = lp.A.shape[1], lp.A.shape[0]
    model.num_col_ = n_col
    model.num_row_ = n_row
    model.col_cost_ = lp.cost
    model.col_lower_ = lp.col_lo
    model.col_upper_ = np.where(np.isinf(lp.col_hi), inf, lp.col_hi)
    model.row_lower_ = np.where(np.isinf(lp.row_lo), -inf, lp.row_lo)
    model.row_upper_ = np.where(np.isinf(lp.row_hi), inf, lp.row_hi)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.num_col_ = n_col
    model.a_matrix_.num_row_ = n_row
    model.a_matrix_.start_ = lp.A.indptr.astype(np.int32)
    model.a_matrix_.index_ = lp.A.indices.astype(np.int32)
    model.a_matrix_.value_ = lp.A.data
    h.passModel(model)
    feas = float(min(1e-7, max(tol, 1e-10)))
    settings = {
        "primal_feasibility_tolerance": feas,
        "dual_feasibility_tolerance": feas,
    }
    if method == "simplex":
        settings["solver"] = "simplex"
    elif method == "ipm":
        settings.update(
            solver="ipm",
            ipm_optimality_tolerance=float(max(tol, 1e-12)),
            run_crossover="on" if options.get("crossover", False) else "off",
        )
    elif method == "pdlp":
        settings.update(solver="pdlp", pdlp_optimality_tolerance=float(max(tol, 1e-10)))
    if lp.A.nnz > 1e6:  # presolve finds nothing to remove here and costs ~25 s at n = 10
        settings["presolve"] = "off"
    for key in ("time_limit", "threads", "presolve"):
        if options.get(key) is not None:
            settings[key] = options[key]
    for key, value in settings.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise InputError(f"HiGHS rejected option {key} = {value!r}", "solver")
    warm_used = False
    if warm_start is not None and method == "simplex":
        basis = warm_start.get("basis") if isinstance(warm_start, dict) else None
        if (
            isinstance(basis, highspy.HighsBasis)
            and len(basis.col_status) == n_col
            and len(basis.row_status) == n_row
        ):
            warm_used = h.setBasis(basis) == highspy.HighsStatus.kOk
    start = time.perf_counter()
    h.run()
    solve_time = time.perf_counter() - start
    status = h.getModelStatus()
    info = h.getInfo()
    solution = h.getSolution()
    x = np.asarray(solution.col_value, dtype=float) if solution.value_valid else None
    out = {
        "status": _STATUS.get(status, "failed"),
        "highs_status": h.modelStatusToString(status),
        "x": x,
        "objective": float(info.objective_function_value),
        "solve_time_s": solve_time,
        "iterations": int(
            max(info.simplex_iteration_count, 0)
            + max(info.ipm_iteration_count, 0)
            + max(info.pdlp_iteration_count, 0)
            + max(info.crossover_iteration_count, 0)
        ),
        "max_primal_infeasibility": float(info.max_primal_infeasibility),
        "max_dual_infeasibility": float(info.max_dual_infeasibility),
        "warm_started": warm_used,
        "crossover": method == "ipm" and bool(options.get("crossover", False)),
    }
    if solution.dual_valid:
        y = np.asarray(solution.row_dual, dtype=float)
        rc = np.asarray(solution.col_dual, dtype=float)
        out["dual_objective"] = _dual_objective(lp, y, rc)
    if info.basis_validity == highspy.kBasisValidityValid:
        out["basis"] = h.getBasis()
        # polish only a vertex with residuals above round-off (measured: 1e-16–2e-14 on
        # most instances, ~1e-9 on skewed identifiability; the LU costs ~30 % of a warm step)
        if x is not None and out["status"] == "optimal" and lp.A.nnz <= 5e6:
            residual = _residual(lp, x)
            if residual > 1e-13:
                refined = _polish_vertex(lp, out["basis"])
                if refined is not None and _residual(lp, refined) <= residual:
                    out["x"] = refined
                    out["polished"] = True
    return out


def _run_info(lp: _LP, run: dict, method: str, build: float, *, reduced: bool) -> dict:
    """What a solve reports about its LP and the HiGHS run (``basis`` for warm starts)."""
    if method == "ipm" and run["crossover"]:
        method = "ipm+crossover"
    info = {
        "method": f"highs-{method}",
        "highs_status": run["highs_status"],
        "build_time_s": build,
        "solve_time_s": run["solve_time_s"],
        "lp_rows": int(lp.A.shape[0]),
        "lp_columns": int(lp.A.shape[1]),
        "lp_nonzeros": int(lp.A.nnz),
        "max_primal_infeasibility": run["max_primal_infeasibility"],
        "warm_started": run["warm_started"],
        "translation_reduced": reduced,
    }
    if "basis" in run:
        info["basis"] = run["basis"]
    return info


def _residual(lp: _LP, x: np.ndarray) -> float:
    """Largest bound or row violation of ``x``."""
    act = lp.A @ x
    viol = [
        np.max(lp.row_lo - act, initial=0.0),
        np.max(act - lp.row_hi, initial=0.0),
        np.max(lp.col_lo - x, initial=0.0),
        np.max(x - lp.col_hi, initial=0.0),
    ]
    return float(max(viol))


def _dual_objective(lp: _LP, y: np.ndarray, rc: np.ndarray) -> float:
    """``Σ_rows y·(bound hit) + Σ_cols rc·(bound hit)`` with HiGHS sign conventions."""
    val = 0.0
    for dual, lo, hi in ((y, lp.row_lo, lp.row_hi), (rc, lp.col_lo, lp.col_hi)):
        pos = dual > 0
        neg = dual < 0
        lo_f = np.where(np.isfinite(lo), lo, 0.0)
        hi_f = np.where(np.isfinite(hi), hi, 0.0)
        val += float(np.dot(dual[pos], lo_f[pos]) + np.dot(dual[neg], hi_f[neg]))
    return val


def _polish_vertex(lp: _LP, basis) -> np.ndarray | None:
    """Recompute a simplex vertex from its basis with a sparse LU (iterative refinement).

    Nonbasic columns sit at a bound, nonbasic rows at a bound; the basic columns solve the
    square system ``A[N_rows, B_cols] x_B = bound − A[N_rows, N_cols] x_N``. This removes
    the ~1e-9 primal residuals of the simplex (its feasibility tolerance), which matter
    for ratio constraints between tiny entries (identifiability with skewed priors).
    Returns ``None`` if the basis is unusable.
    """
    from scipy.sparse.linalg import splu

    col = np.fromiter((int(s) for s in basis.col_status), dtype=np.int8, count=lp.A.shape[1])
    row = np.fromiter((int(s) for s in basis.row_status), dtype=np.int8, count=lp.A.shape[0])
    basic_cols = np.flatnonzero(col == 1)
    tight_rows = np.flatnonzero(row != 1)
    if basic_cols.size != tight_rows.size:
        return None
    x = np.zeros(lp.A.shape[1])
    at_upper = col == 2
    x[at_upper] = lp.col_hi[at_upper]
    at_lower = (col == 0) | (col == 3) | (col == 4)
    x[at_lower] = np.where(np.isfinite(lp.col_lo[at_lower]), lp.col_lo[at_lower], 0.0)
    rhs = np.where(row[tight_rows] == 2, lp.row_hi[tight_rows], lp.row_lo[tight_rows])
    if not np.isfinite(rhs).all():
        return None
    A_rows = lp.A.tocsr()[tight_rows]
    rhs = rhs - A_rows @ x
    if basic_cols.size:
        try:
            lu = splu(A_rows[:, basic_cols].tocsc())
            x[basic_cols] = lu.solve(rhs)
        except (RuntimeError, ValueError):
            return None
    return x if np.isfinite(x).all() else None


# --------------------------------------------------------------------------------------------
# repair and measurement
# --------------------------------------------------------------------------------------------
def _clean(W: np.ndarray, floor: float = 1e-10) -> np.ndarray:
    """Clip negatives, drop numerically empty columns, renormalise rows.

    Interior-point answers leave unused outputs at ``~tol`` with arbitrary ratios; mixing
    cannot repair those cheaply (their column mass is ``~tol``), so columns whose largest
    entry is below ``floor`` are zeroed (costing at most ``floor · |X| · max d``).
    """
    W = np.clip(W, 0.0, None)
    empty = W.max(axis=0) <= floor
    W[:, empty] = 0.0
    sums = W.sum(axis=1)
    bad = ~(sums > 0)
    if bad.any():
        W[bad] = 1.0 / W.shape[1]
        sums[bad] = 1.0
    return W / sums[:, None]


#: Relative slack (per unit of 1 + ε) left unrepaired: the level may exceed ε by about
#: this much, well inside the solver layer's acceptance (1e-9 (1 + ε)).
_LEVEL_SLACK = 1e-10


def _theta_pairs(num_a, num_b, c_a, c_b, ce, slack: float = 0.0) -> float:
    """Least θ with ``(1−θ)(a − e^ε b) + θ(c_a − e^ε c_b) ≤ 0`` over the entries violated by
    more than ``a ≤ e^ε b (1 + slack)``."""
    lhs = num_a - ce * num_b
    lhs_c = c_a - ce * c_b
    viol = lhs > slack * ce * np.abs(num_b) + 1e-15 * (np.abs(num_a) + ce * np.abs(num_b))
    # entries where W_c is not strictly feasible (identifiability at ε = ε_X: p(a) = e^ε p(b))
    # cannot be repaired by mixing; they are left to the re-measured level
    ok = viol & (lhs_c < -1e-12 * (np.abs(c_a) + ce * np.abs(c_b)))
    if not ok.any():
        return 0.0
    return float(np.max(lhs[ok] / (lhs[ok] - lhs_c[ok])))


def _repair(
    W: np.ndarray,
    p_s: np.ndarray,
    notion: str,
    eps: float,
    pairs: tuple[np.ndarray, np.ndarray] | None,
    complete: bool,
) -> tuple[np.ndarray, float]:
    """Mix ``W`` (support rows) with the constant mechanism (rows = output marginal) just
    enough to meet every constraint exactly; returns the mix and ``θ``."""
    ce = float(np.exp(eps))
    slack = _LEVEL_SLACK * (1.0 + eps)
    c = p_s @ W  # output marginal: the rows of W_c
    theta = 0.0
    if notion in _PAIR_NOTIONS + ("ldp",):
        scale = p_s if notion == "identifiability" else np.ones_like(p_s)
        if notion == "ldp" or complete:
            # per column: max_x J ≤ e^ε min_x J with J = s·W. Mixing adds θ s_x c_u, so
            # max J_mix ≤ (1−θ) max J + θ c_u max s and min J_mix ≥ (1−θ) min J + θ c_u min s:
            # a sufficient θ (exact for dp/ldp, where s = 1 keeps argmax and argmin)
            J = scale[:, None] * W
            theta = _theta_pairs(
                J.max(axis=0), J.min(axis=0), scale.max() * c, scale.min() * c, ce, slack
            )
        else:
            left, right = pairs
            chunk = max(1, 2**22 // max(W.shape[1], 1))
            for s in range(0, left.size, chunk):
                a, b = left[s : s + chunk], right[s : s + chunk]
                theta = max(
                    theta,
                    _theta_pairs(
                        scale[a, None] * W[a],
                        scale[b, None] * W[b],
                        scale[a, None] * c[None, :],
                        scale[b, None] * c[None, :],
                        ce,
                        slack,
                    ),
                )
    elif notion in ("pml", "information_privacy"):
        # W ≤ e^ε q and (LIP) e^{−ε} q ≤ W, with q = p W; W_c has q = c
        q = c
        theta = _theta_pairs(
            W,
            np.broadcast_to(q, W.shape),
            np.broadcast_to(c, W.shape),
            np.broadcast_to(c, W.shape),
            ce,
            slack,
        )
        if notion == "information_privacy":
            theta = max(
                theta,
                _theta_pairs(
                    np.broadcast_to(q, W.shape),
                    W,
                    np.broadcast_to(c, W.shape),
                    np.broadcast_to(c, W.shape),
                    ce,
                    slack,
                ),
            )
    elif notion == "maximal_leakage":
        total = float(W.max(axis=0).sum())
        if total > ce * (1.0 + slack):  # (1−θ) total + θ·1 ≤ e^ε
            theta = (total - ce) / (total - 1.0)
    if theta > 0:
        theta = min(1.0, theta * (1 + 1e-12) + 1e-15)
        W = (1 - theta) * W + theta * c[None, :]
    return W, theta


def _rel_arg(rel: NeighborRelation | None):
    """What :mod:`privopt.measures` needs: ``"all"`` for the pair-free marker."""
    return "all" if rel is not None and rel.kind == "all" else rel


_LEVELS = {
    "dp": lambda prior, W, rel: (
        measures.ldp_level(prior, W)
        if rel is not None and rel.kind == "all"
        else measures.dp_level(prior, W, rel)
    ),
    "identifiability": lambda prior, W, rel: measures.identifiability_level(
        prior, W, _rel_arg(rel)
    ),
    "ldp": lambda prior, W, rel: measures.ldp_level(prior, W),
    "pml": lambda prior, W, rel: measures.pml_level(prior, W),
    "information_privacy": lambda prior, W, rel: measures.information_privacy_level(prior, W),
    "maximal_leakage": lambda prior, W, rel: measures.maximal_leakage(prior, W),
}


def _reduced_level(
    f: np.ndarray, notion: str, group: _Group, relation: NeighborRelation | None
) -> float:
    """The level of ``W[x,u] = f(u − x)`` under a uniform prior, from ``f`` alone."""
    N = group.size
    pos = f > 0
    if notion in ("pml", "maximal_leakage"):
        return float(max(np.log(N * f.max()), 0.0))
    if notion == "information_privacy":
        return float(np.abs(np.log(N * f[pos])).max())
    if notion == "ldp" or relation is None or relation.kind == "all":
        return float(np.log(f.max() / f.min())) if f.min() > 0 else float("inf")
    deltas = np.unique(group.combine(relation.right, relation.left, -1))
    z = np.arange(N)
    best = 0.0
    for dlt in deltas:
        other = f[group.combine(z, np.full(N, dlt), -1)]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(pos | (other > 0), np.log(f) - np.log(other), 0.0)
        best = max(best, float(np.nanmax(ratio)))
    return best


# --------------------------------------------------------------------------------------------
# entry points
# --------------------------------------------------------------------------------------------
def _choose_method(lp: _LP, reduced: bool) -> str:
    """Dual simplex for small LPs (exact vertex, warm-startable), IPX without crossover
    otherwise. Measured on PD-DP (m = 2, ε = 1, 2 cores, shared machine): simplex 0.3 s /
    5.7 s / 120 s at n = 5 / 6 / 7; IPX 0.1 s / 1.1 s / 19 s at n = 5 / 6 / 7 (random
    prior), 86 s at n = 8 (uniform). PDLP is fast on the uniform prior (5 s at n = 8) but
    did not converge in 300 s on a random prior at n = 8, so it is never chosen here."""
    if reduced or lp.A.nnz <= 1e4:
        return "simplex"
    return "ipm"


def solve(
    prior,
    distortion,
    notion: str,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors=None,
    tol: float = 1e-9,
    warm_start=None,
    method: str = "auto",
    symmetry: bool = True,
    **options,
) -> AlgorithmResult:
    """Minimise ``E[d]`` subject to ``level ≤ ε`` for a linear notion, with HiGHS.

    Parameters
    ----------
    prior : Prior or DatabasePrior or array_like
        Single-secret prior (dense pmf).
    distortion : Distortion or array_like
        ``|X| × |U|`` distortion (database Hamming may stay symbolic when the translation
        reduction applies).
    notion : str
        One of :data:`NOTIONS`.
    epsilon : float
        The privacy level (nats, ≥ 0).
    max_distortion : None
        Not supported (epsilon mode only).
    neighbors : NeighborRelation or {"hamming", "all"}, optional
        For ``dp`` / ``identifiability``: default Hamming on a database prior, all pairs
        otherwise.
    tol : float
        Feasibility / optimality tolerance handed to HiGHS (clamped to its ranges).
    warm_start : dict or AlgorithmResult, optional
        A previous result (or its ``info``) holding ``"basis"``; used by the simplex method
        when the LP has the same shape (sweeps over ε).
    method : {"auto", "simplex", "ipm", "pdlp"}
        HiGHS method. ``"auto"``: dual simplex for small or translation-reduced LPs, IPX
        (no crossover) otherwise; PDLP only when asked for.
    symmetry : bool
        Use the translation reduction when it applies (default True).
    **options
        ``time_limit`` (s), ``threads``, ``presolve``, ``crossover`` (IPM), ``verbose``.

    Returns
    -------
    AlgorithmResult
        ``objective`` = ``E[d]`` of the returned (repaired) mechanism; ``level`` measured by
        :mod:`privopt.measures`; ``certificate`` holds the HiGHS ``dual_objective`` (a lower
        bound up to the dual tolerance), ``duality_gap`` and ``repair_theta``; ``info`` holds
        ``build_time_s``, ``solve_time_s``, ``method``, LP sizes and (simplex) ``basis``.
    """
    t0 = time.perf_counter()
    if notion not in NOTIONS:
        raise InputError(
            f"the sparse-LP fast path solves {NOTIONS}, not {notion!r}", "privacy.notion"
        )
    if max_distortion is not None or epsilon is None:
        raise InputError(
            "the sparse-LP fast path works in epsilon mode only (minimise E[d] at level ε)",
            "privacy",
        )
    eps = float(epsilon)
    if not np.isfinite(eps) or eps < 0:
        raise InputError(f"must be a finite number ≥ 0, got {epsilon}", "privacy.epsilon")
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}: use one of {METHODS}", "solver.method")
    unknown = set(options) - {"time_limit", "threads", "presolve", "crossover", "verbose"}
    if unknown:
        raise InputError(f"unknown option(s) {sorted(unknown)}", "solver")
    if isinstance(warm_start, AlgorithmResult):
        warm_start = warm_start.info
    p = _prior_probs(prior)
    relation = _relation(prior, neighbors, notion)
    group = _translation_group(prior, distortion, relation) if symmetry else None
    if group is not None:
        return _solve_reduced(
            prior, distortion, notion, eps, relation, group, tol, method, options, warm_start, t0
        )
    d = distortion_matrix(distortion, p.size)
    support = np.flatnonzero(p > 0)
    p_s, d_s = p[support], d[support]
    S, U = d_s.shape
    if S * U > _MAX_VARIABLES:
        raise InputError(
            f"{S}×{U} = {S * U} mechanism entries exceed the sparse-LP limit {_MAX_VARIABLES}",
            "prior",
        )
    pairs, complete = None, False
    if relation is not None:
        least = 0.0
        if relation.kind == "all":  # auxiliary form: the pair list is never materialised
            complete = True
            if S > 1:
                least = float(np.log(p_s.max() / p_s.min()))
        else:
            rel = relation.restricted(support)
            index = np.full(p.size, -1)
            index[support] = np.arange(S)
            pairs = (index[rel.left], index[rel.right])
            complete = _is_complete(rel, S)
            if rel.n_pairs:
                least = float(np.max(np.log(p_s[pairs[0]] / p_s[pairs[1]])))
        if notion == "identifiability":
            # summing p(a)W[a,u] ≤ e^ε p(b)W[b,u] over u needs p(a) ≤ e^ε p(b); the constant
            # mechanism meets it then, so this is exactly the least feasible level ([004] L. 3)
            if eps < least - 1e-12:
                info = {
                    "least_achievable": least,
                    "method": "closed form (ε_X)",
                    "build_time_s": time.perf_counter() - t0,
                    "solve_time_s": 0.0,
                }
                return AlgorithmResult(status="infeasible", info=info)
    lp = _build_full(p_s, d_s, notion, eps, pairs, complete)
    build = time.perf_counter() - t0
    chosen = _choose_method(lp, False) if method == "auto" else method
    run = _run_highs(lp, chosen, tol, options, warm_start)
    if run["highs_status"] == "Unknown" and chosen == "ipm" and not options.get("crossover"):
        # IPX without crossover may stop at "Unknown" on degenerate LPs (e.g. ε = 0): retry
        # with crossover, which certifies a vertex
        run = _run_highs(lp, chosen, tol, dict(options, crossover=True), warm_start)
    info = _run_info(lp, run, chosen, build, reduced=False)
    if run["x"] is None or run["status"] == "infeasible":
        return AlgorithmResult(
            status=run["status"] if run["status"] != "optimal" else "failed",
            iterations=run["iterations"],
            info=info,
        )
    vertex = chosen == "simplex" or run["crossover"]
    floor = 1e-10 if vertex else max(1e-10, 100 * tol)
    Ws = _clean(run["x"][: S * U].reshape(S, U), floor)
    Ws, theta = _repair(Ws, p_s, notion, eps, pairs, complete)
    W = np.empty((p.size, U))
    W[support] = Ws
    W[np.setdiff1d(np.arange(p.size), support)] = p_s @ Ws  # unseen inputs: output marginal
    return _finish(prior, W, d, p, notion, eps, relation, run, theta, info, t0)


def _finish(prior, W, d, p, notion, eps, relation, run, theta, info, t0) -> AlgorithmResult:
    dist = float(np.sum(p[:, None] * W * d))
    level = float(_LEVELS[notion](prior, W, relation))
    cert = {"repair_theta": theta, "highs_objective": run["objective"]}
    if "dual_objective" in run:
        cert["dual_objective"] = run["dual_objective"]
        cert["lower_bound"] = run["dual_objective"]
        cert["duality_gap"] = dist - run["dual_objective"]
    info["total_time_s"] = time.perf_counter() - t0
    if "duality_gap" in cert and cert["duality_gap"] > 1e-7 * (1.0 + abs(dist)):
        info["warning"] = (
            f"the exactly feasible answer is {cert['duality_gap']:.3g} above HiGHS's dual bound "
            "(solver tolerance against tiny mechanism entries; try method='simplex' or a "
            "smaller tol)"
        )
    status = run["status"]
    if status == "optimal" and level > eps + 1e-9 * max(1.0, eps):
        status = "failed"
        info["message"] = f"repaired level {level:.12g} still above ε = {eps}"
    return AlgorithmResult(
        status=status,
        objective=dist,
        mechanism=W,
        level=level,
        distortion=dist,
        iterations=run["iterations"],
        certificate=cert,
        info=info,
    )


def _solve_reduced(
    prior, distortion, notion, eps, relation, group, tol, method, options, warm_start, t0
) -> AlgorithmResult:
    d0 = _first_row_distortion(distortion, group)
    lp = _build_reduced(d0, notion, eps, group, relation)
    build = time.perf_counter() - t0
    chosen = "simplex" if method == "auto" else method
    run = _run_highs(lp, chosen, tol, options, warm_start)
    N = group.size
    info = _run_info(lp, run, chosen, build, reduced=True)
    if run["x"] is None or run["status"] != "optimal":
        return AlgorithmResult(
            status="failed" if run["status"] == "optimal" else run["status"],
            iterations=run["iterations"],
            info=info,
        )
    f = _clean(run["x"][:N][None, :])[0]
    # repair in the reduced space: mix with the uniform f (the constant mechanism, level 0)
    theta = 0.0
    level = _reduced_level(f, notion, group, relation)
    if level > eps:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            g = (1 - mid) * f + mid / N
            lo, hi = (lo, mid) if _reduced_level(g, notion, group, relation) <= eps else (mid, hi)
        theta = hi
        f = (1 - theta) * f + theta / N
    lazy = TranslationInvariantMechanism(f, group)
    dist = float(np.dot(f, d0))
    level = _reduced_level(f, notion, group, relation)
    cert = {
        "repair_theta": theta,
        "highs_objective": run["objective"],
        # structured re-measurement from f alone (no dense matrix needed)
        "verification": {
            "level": level,
            "distortion": dist,
            "row_sums_ok": bool(abs(f.sum() - 1.0) <= 1e-9 and (f >= 0).all()),
            "max_row_sum_error": float(abs(f.sum() - 1.0)),
            "level_ok": bool(level <= eps + 1e-9 * max(1.0, eps)),
        },
    }
    if "dual_objective" in run:
        cert.update(
            dual_objective=run["dual_objective"],
            lower_bound=run["dual_objective"],
            duality_gap=dist - run["dual_objective"],
        )
    info["total_time_s"] = time.perf_counter() - t0
    return AlgorithmResult(
        status="optimal" if level <= eps + 1e-9 * max(1.0, eps) else "failed",
        objective=dist,
        mechanism=lazy.dense() if N <= _MAX_DENSE else None,
        lazy_mechanism=lazy,
        level=level,
        distortion=dist,
        iterations=run["iterations"],
        certificate=cert,
        info=info,
    )


def applies(prior, distortion, notion, mode, **options) -> bool:
    """Linear notion, single-secret prior, LP within reach.

    ``solve`` itself works in epsilon mode; a ``max_distortion`` request is served by the
    solver layer's line search over ε, so that mode is accepted here too, except for
    maximal leakage, whose least level the solver layer asks for directly.
    """
    if notion not in NOTIONS or mode not in ("epsilon", "max_distortion"):
        return False
    if notion == "maximal_leakage" and mode == "max_distortion":
        return False
    if isinstance(prior, JointPrior) or not isinstance(prior, (Prior, DatabasePrior)):
        return False
    try:
        n_out = (
            distortion.n_outputs if isinstance(distortion, Distortion) else np.shape(distortion)[1]
        )
    except (AttributeError, IndexError, TypeError):
        return False
    return _size(prior) * n_out <= _MAX_VARIABLES


def _with_method(method: str, **defaults):
    def run(prior, distortion, notion, **kwargs):
        kwargs.setdefault("method", method)
        for key, value in defaults.items():
            kwargs.setdefault(key, value)
        return solve(prior, distortion, notion, **kwargs)

    run.__doc__ = f"{solve.__doc__.splitlines()[0]} (HiGHS method {method!r}, {defaults})."
    return run


def applies_translation(prior, distortion, notion, mode, **options) -> bool:
    """:func:`applies`, and the translation reduction holds (uniform prior, distortion and
    neighbour relation invariant under the translations of the alphabet)."""
    if not applies(prior, distortion, notion, mode):
        return False
    try:
        relation = _relation(prior, options.get("neighbors"), notion)
        return _translation_group(prior, distortion, relation) is not None
    except InputError:
        return False


def _solve_translation(prior, distortion, notion, **kwargs):
    kwargs.setdefault("method", "auto")
    kwargs["symmetry"] = True
    return solve(prior, distortion, notion, **kwargs)


def _auto_simplex(notion: str, entries: float, sweep: bool) -> bool:
    """Sweeps through the dual simplex, each point warm-started from the previous basis
    (measured on this machine, benchmarks/README.md "Curves"): up to 70×70 for PML,
    information privacy, LDP and maximal leakage (k = 30: ×4.2 to ×5.7 faster than
    re-solving the cvxpy program through its Parameter), and up to 200×200 for PML
    (k = 70: ×12). Never for dp / identifiability, where the sparse LP's pair constraints
    make HiGHS slower than Clarabel (dp n = 7, arbitrary prior: 13.1 s against 6.9 s).
    """
    if notion == "pml":
        return sweep and entries <= 40_000
    if notion in ("ldp", "maximal_leakage", "information_privacy"):
        return sweep and entries <= 4900
    return False


def _auto_crossover(notion: str, entries: float, sweep: bool) -> bool:
    """Single solves of PML and information privacy from 60×60 on: HiGHS's interior point
    with crossover to an exact vertex (benchmarks/README.md "Single-alphabet LPs"): pml
    k = 100: 0.78 s against 9.7 s for Clarabel (whose answer was 1e-6 above the optimum) and
    2.2 s for the simplex; k = 200: 3.5 s / 74 s / 33 s; LIP k = 100: 2.6 s against 37 s,
    k = 200: 25 s against 271 s. LDP and maximal leakage stay with Clarabel, faster there
    (ldp k = 200: 0.87 s against 7.2 s).
    """
    return not sweep and notion in ("pml", "information_privacy") and entries >= 3600


# HiGHS's default method choice, IPM without crossover and PDLP are used only when named
# (priority 0): IPM without crossover stops short of a vertex (pml k = 100: 1e-5 above the
# optimum) and PDLP is a first-order method. The dual simplex and IPM + crossover are picked
# by the measured rules above; the translation-reduced LP is tiny and offered automatically.
for _name, _method, _defaults, _priority, _auto in (
    ("highs", "auto", {}, 0, large_instances),
    ("highs-simplex", "simplex", {}, 5, _auto_simplex),
    ("highs-ipm", "ipm", {}, 0, large_instances),
    ("highs-ipm-crossover", "ipm", {"crossover": True}, 6, _auto_crossover),
    ("highs-pdlp", "pdlp", {}, 0, large_instances),
):
    register(
        Algorithm(
            name=_name,
            notions=NOTIONS,
            applies=applies,
            solve=_with_method(_method, **_defaults),
            priority=_priority,
            warm_starts=_method == "simplex",
            auto=_auto,
            description=(
                f"sparse LP built with scipy.sparse and solved by HiGHS ({_method}"
                f"{' + crossover' if _defaults.get('crossover') else ''}); "
                "translation-symmetry reduction for uniform priors with invariant distortion"
            ),
        )
    )
register(
    Algorithm(
        name="highs-translation",
        notions=NOTIONS,
        applies=applies_translation,
        solve=_solve_translation,
        priority=20,
        description=(
            "uniform prior with translation-invariant distortion and neighbours: the LP "
            "reduces exactly to one column W[x, x+z] = f(z) (|U| variables), solved by HiGHS"
        ),
    )
)
