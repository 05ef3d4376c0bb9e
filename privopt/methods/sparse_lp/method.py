"""The linear notions as a hand-built sparse LP handed straight to HiGHS.

Every notion with an encoding in :mod:`~privopt.methods.sparse_lp.encodings` is a set of
linear inequalities on the mechanism ``W`` for a fixed prior, so ``min E[d] s.t. level ≤ ε``
is an LP. It is assembled with :mod:`scipy.sparse` from the neighbour arrays (no modelling
layer) and solved by HiGHS's dual simplex, interior point (with or without crossover) or
PDLP. When the prior is uniform and the distortion and relation translation invariant, the
LP shrinks exactly to one row (:mod:`~privopt.methods.sparse_lp.translation`); whatever the
symmetry, ``sparse-highs-symmetry`` shrinks it exactly to one variable per class of its
coarsest equitable partition (:mod:`~privopt.methods.sparse_lp.equitable`).

**Structure (why no column decomposition).** For dp, identifiability and ldp every privacy
row involves one output column only, so the LP is block-angular: ``|U|`` blocks (one cone
``C = {w ≥ 0: w_a ≤ e^ε w_b}`` per column) linked only by the ``|X|`` row sums. Dualising the
row sums gives ``max Σ_x λ(x)`` s.t. ``p∘d(·,u) − λ ∈ C*`` for every ``u``: Dantzig–Wolfe with
one generalized-network pricing problem per column, which does not shrink the work.

The answer is the LP's primal point (cleaned of interior-point noise); its certificate is
HiGHS's dual bound. The solve driver re-measures it, repairs tolerance-sized violations and
checks the gap like any other answer.
"""

from __future__ import annotations

__all__ = [
    "SparseLP",
    "solve_point",
    "full_program",
    "MAX_VARIABLES",
    "MAX_DENSE",
    "WARM_SIMPLEX_ENTRIES",
]

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.methods.base import (
    Answer,
    Certificate,
    Measurement,
    Method,
    Task,
    plain_linear_reason,
    register,
    register_alias,
)
from privopt.methods.multipliers import offer, wanted
from privopt.methods.sparse_lp.assembly import LinearProgram, RowBuilder
from privopt.methods.sparse_lp.encodings import (
    ENCODINGS,
    WARM_SIMPLEX_ENTRIES,
    FullLP,
    ReducedLP,
)
from privopt.methods.sparse_lp.equitable import (
    EquitablePartition,
    equitable_partition,
    symbol_classes,
)
from privopt.methods.sparse_lp.multipliers import lp_multipliers
from privopt.methods.sparse_lp.translation import (
    TranslationInvariantMechanism,
    first_row,
    translation_group,
)
from privopt.model import NeighborRelation
from privopt.notions._mixing import least_mixing_weight
from privopt.request import DesignRequest
from privopt.status import Status

if TYPE_CHECKING:
    from collections.abc import Callable

    from privopt.methods.sparse_lp.highs import HighsRun

#: Largest ``|supp p|·|U|`` handled (mechanism variables).
MAX_VARIABLES = 2**21
#: Largest alphabet for which a translation-invariant answer is also returned densely.
MAX_DENSE = 4096
_STATUS = {
    "optimal": Status.OPTIMAL,
    "infeasible": Status.INFEASIBLE,
    "time_limit": Status.TIME_LIMIT,
    "failed": Status.FAILED,
}


def _complete(relation: NeighborRelation | None, n_support: int) -> bool:
    return relation is not None and (
        relation.kind == "all" or relation.n_pairs == n_support * (n_support - 1)
    )


def _relation(request: DesignRequest) -> NeighborRelation | None:
    """The pair relation of the notion's encoding (``None`` for notions without pairs)."""
    return ENCODINGS[request.notion.name].relation(request)


def _choose(lp: LinearProgram, reduced: bool) -> str:
    """Dual simplex for small LPs (exact vertex, warm-startable), IPX otherwise. Measured on
    PD-DP (m = 2, ε = 1, 2 cores): simplex 0.3 s / 5.7 s / 120 s at n = 5 / 6 / 7; IPX
    0.1 s / 1.1 s / 19 s; PDLP did not converge in 300 s on a random prior at n = 8."""
    return "simplex" if reduced or lp.A.nnz <= 1e4 else "ipm"


def _clean(W: np.ndarray, floor: float = 1e-10) -> np.ndarray:
    """Clip negatives, drop numerically empty columns, renormalise rows.

    Interior-point answers leave unused outputs at ``~tol`` with arbitrary ratios; mixing
    cannot repair those cheaply (their column mass is ``~tol``), so columns whose largest
    entry is below ``floor`` are zeroed (costing at most ``floor · |X| · max d``).
    """
    W = np.clip(W, 0.0, None)
    W[:, W.max(axis=0) <= floor] = 0.0
    sums = W.sum(axis=1)
    bad = ~(sums > 0)
    if bad.any():
        W[bad] = 1.0 / W.shape[1]
        sums[bad] = 1.0
    return W / sums[:, None]


#: Notions whose warm-started points run HiGHS's primal simplex from the previous basis
#: rather than the dual: 50-point LDP curves (k = 30 / 60) took 0.26 s / 1.11 s against
#: 0.42 s / 2.13 s. Not kept for PML (0.31 s against 0.29 s), maximal leakage (0.20 s
#: against 0.18 s at k = 30) or information privacy (8 % faster, within noise).
WARM_PRIMAL_NOTIONS = frozenset({"ldp"})


def _run(task: Task, lp: LinearProgram, method: str, crossover: bool, options: dict) -> HighsRun:
    name = options.get("name", "sparse-highs")

    def progress(count: int) -> None:
        task.emit(name, "iteration", count)

    if method == "clarabel":
        from privopt.methods.sparse_lp.clarabel_run import run_clarabel

        return run_clarabel(
            lp, task.tol, task.deadline.remaining() if task.deadline.limited else None
        )
    from privopt.methods.sparse_lp.highs import run_highs  # imports highspy

    run = run_highs(
        lp,
        method,
        task.tol,
        crossover=crossover,
        time_limit=task.deadline.remaining() if task.deadline.limited else None,
        warm_basis=task.warm if method == "simplex" else None,
        warm_primal=task.request.notion.name in WARM_PRIMAL_NOTIONS,
        threads=options.get("threads"),
        presolve=options.get("presolve"),
        verbose=bool(options.get("verbose", False)),
        on_iteration=progress if task.report is not None else None,
    )
    if run.highs_status == "Unknown" and method == "ipm" and not crossover:
        # IPX without crossover may stop at "Unknown" on degenerate LPs (e.g. ε = 0): retry
        # with crossover, which certifies a vertex
        run = _run(task, lp, method, True, options)
    return run


def _solve_lp(task, lp, method, crossover, options, start, *, reduced: bool):
    """Run HiGHS and wrap the run in an :class:`Answer` (``OPTIMAL`` only with a point)."""
    build = time.perf_counter() - start
    run = _run(task, lp, method, crossover, options)
    answer = Answer(
        _STATUS[run.status],
        options["name"],
        iterations=run.iterations,
        solve_time=run.solve_time,
        build_time=build,
        details=_details(lp, run, method, reduced=reduced),
        warm=run.basis,
    )
    if run.x is None or run.status != "optimal":
        answer.status = Status.FAILED if run.status == "optimal" else answer.status
        solver = "Clarabel" if method == "clarabel" else "HiGHS"
        answer.message = f"{solver}: {run.highs_status}"
    return run, answer


def _details(lp: LinearProgram, run: HighsRun, method: str, reduced: bool) -> dict:
    if method == "ipm" and run.crossover:
        method = "ipm+crossover"
    return {
        "highs_method" if method != "clarabel" else "method": method,
        "highs_status": run.highs_status,
        "lp_rows": int(lp.A.shape[0]),
        "lp_columns": int(lp.A.shape[1]),
        "lp_nonzeros": int(lp.A.nnz),
        "max_primal_infeasibility": run.max_primal_infeasibility,
        "warm_started": run.warm_started,
        "translation_reduced": reduced,
    }


def full_program(
    request: DesignRequest, eps: float, *, relaxed: bool = False
) -> tuple[LinearProgram, np.ndarray]:
    """The notion's full sparse LP at level ``eps`` on the prior's support.

    Variables: ``W[i,u]`` at ``i·U + u`` (``i`` indexing the support), then the encoding's
    auxiliaries; rows: the ``S`` row sums, then the encoding's rows. Every variable lies in
    ``[0, 1]`` (rows sum to 1; the auxiliaries are column maxima, minima or output
    probabilities): the box makes the dual bound rigorous
    (:meth:`~privopt.methods.sparse_lp.assembly.LinearProgram.lower_bound`).

    Parameters
    ----------
    request : DesignRequest
        A request whose notion has an encoding.
    eps : float
        The level (nats), at most the notion's ``largest_written_level`` unless ``relaxed``.
    relaxed : bool
        Leave the privacy rows out.

    Returns
    -------
    LinearProgram
        The LP (``S·U`` mechanism variables, then the auxiliaries).
    numpy.ndarray
        The support.
    """
    enc = ENCODINGS[request.notion.name]
    relation = _relation(request)
    p = request.prior.probs
    support = np.flatnonzero(p > 0)
    d = request.distortion.matrix
    p_s, d_s = p[support], d[support]
    S, U = d_s.shape
    pairs = None
    if relation is not None and hasattr(relation, "relabelled"):
        pairs = relation.relabelled(support)  # weighted pairs (metric privacy)
    elif relation is not None and relation.kind != "all":
        rel = relation.restricted(support)
        index = np.full(p.size, -1)
        index[support] = np.arange(S)
        pairs = NeighborRelation(S, index[rel.left], index[rel.right], rel.kind)
    limit = request.notion.largest_written_level  # the ratio is unused beyond (relaxed)
    full = FullLP(p_s, U, float(np.exp(min(eps, limit))), pairs, _complete(relation, S), eps)
    n_aux = 0 if relaxed else enc.n_aux(full)
    rows = RowBuilder(S * U + n_aux)
    rows.block(S, [(np.repeat(np.arange(S), U), full.entries.ravel(), 1.0)], 1.0, 1.0)
    if not relaxed:
        enc.full(rows, full)
    cost = np.concatenate([(p_s[:, None] * d_s).ravel(), np.zeros(n_aux)])
    return rows.program(cost, np.zeros(S * U + n_aux), np.ones(S * U + n_aux)), support


def solve_point(
    task: Task,
    *,
    method: str = "auto",
    crossover: bool = False,
    symmetry: bool = True,
    equitable: bool = False,
    name: str = "sparse-highs",
    options: dict | None = None,
) -> Answer:
    """Least ``E[d]`` subject to level ≤ ε for a linear notion, with HiGHS.

    Parameters
    ----------
    task : Task
        An ε point (``task.epsilon``) of a request whose notion has a sparse-LP encoding.
    method : {"auto", "simplex", "ipm", "pdlp"}
        HiGHS algorithm; ``"auto"``: dual simplex for small or reduced LPs, IPX otherwise.
    crossover : bool
        IPM: finish at an exact vertex.
    symmetry : bool
        Use the translation reduction when it applies.
    equitable : bool
        Reduce the LP by its coarsest equitable partition
        (:mod:`~privopt.methods.sparse_lp.equitable`) when that shrinks it at least 1.5 times.
    name : str
        The method name reported.
    options : dict, optional
        ``threads``, ``presolve``, ``verbose`` for HiGHS.

    Returns
    -------
    Answer
        ``matrix`` (dense; also ``structured`` for a reduced LP), ``objective`` = HiGHS's
        objective, ``certificate`` = its dual bound, ``warm`` = the basis.
    """
    from privopt.methods.sparse_lp.highs import HIGHS_METHODS  # imports highspy

    start = time.perf_counter()
    options = dict(options or {}, name=name)
    request = task.request
    if task.epsilon is None:
        raise InputError("the sparse LP solves ε points only", "privacy")
    if method not in ("auto", "clarabel", *HIGHS_METHODS):
        raise InputError(f"unknown HiGHS method {method!r}", "solver")
    eps = float(task.epsilon)
    cap = request.max_level()
    if math.isfinite(cap) and eps > cap:
        eps = cap
    relaxed = not request.notion.writes_level(eps)
    enc = ENCODINGS[request.notion.name]
    relation = _relation(request)
    group = None
    if symmetry and not relaxed:
        group = translation_group(request.prior, request.distortion, relation)
    task.emit(name, "start")
    if group is not None:
        return _solve_reduced(task, enc, relation, group, eps, method, options, start)
    lp, support = full_program(request, eps, relaxed=relaxed)
    p = request.prior.probs
    p_s = p[support]
    S, U = support.size, request.distortion.n_outputs
    partition, solved = _partition(task, lp, name) if equitable and not relaxed else (None, lp)
    if task.deadline.expired():  # spent on the assembly or the refinement: HiGHS gets nothing
        return Answer(
            Status.TIME_LIMIT,
            name,
            message=f"time limit of {task.deadline.seconds:g} s reached while the LP was built",
        )
    chosen = _choose(solved, False) if method == "auto" else method
    if partition is not None and method == "auto" and chosen == "ipm":
        crossover = True  # a vertex of the reduced LP (uniform 10 × 10 map: 3.6 s, simplex 5.9 s)
    run, answer = _solve_lp(task, solved, chosen, crossover, options, start, reduced=False)
    if partition is not None:
        _lift(run, answer, partition, lp)
    elif not relaxed and run.row_dual is not None and wanted(task):  # a certified curve's
        found = lp_multipliers(  # dual point (privopt.solve.curve_band)
            request, relation, _complete(relation, S), support, run.row_dual, eps, name
        )
        if found is not None:
            offer(task, found)
    if answer.status != Status.OPTIMAL:
        return answer
    vertex = chosen == "simplex" or run.crossover
    floor = 1e-10 if vertex else max(1e-10, 100 * task.tol)
    Ws = _clean(run.x[: S * U].reshape(S, U), floor)
    W = np.empty((p.size, U))
    W[support] = Ws
    W[np.setdiff1d(np.arange(p.size), support)] = p_s @ Ws  # unseen inputs: output marginal
    answer.matrix = W
    answer.objective = run.objective
    if math.isfinite(run.dual_objective):
        answer.certificate = Certificate(
            run.dual_objective,
            f"Lagrangian bound from {'Clarabel' if chosen == 'clarabel' else 'HiGHS'}'s row duals"
            + (" (LP without the privacy rows)" if relaxed else "")
            + (
                " of the symmetry-reduced LP, lifted to the full LP"
                if partition is not None
                else ""
            ),
        )
    if relaxed:
        limit = request.notion.largest_written_level
        answer.details["relaxed"] = f"ε > {limit:g}: solved without the privacy rows"
    return answer


def _partition(
    task: Task, lp: LinearProgram, name: str
) -> tuple[EquitablePartition | None, LinearProgram]:
    """The LP's equitable partition and the LP reduced by it (``(None, lp)`` without a
    useful one): the partition of the previous point of the run if it is still equitable
    (only ``e^ε`` changed), otherwise a new colour refinement."""
    key = ("equitable", name)
    previous = task.cache.get(key)
    if isinstance(previous, EquitablePartition):
        reduced = previous.reduce(lp)
        if reduced is not None:
            return previous, reduced
    partition = equitable_partition(lp, expired=task.deadline.expired)
    reduced = partition.reduce(lp) if partition is not None else None
    if reduced is None:
        task.cache[key] = None
        return None, lp
    task.cache[key] = partition
    return partition, reduced


def _lift(run: HighsRun, answer: Answer, partition: EquitablePartition, lp: LinearProgram):
    """Carry a run on the reduced LP back to ``lp``: the point by the classes, the bound
    recomputed on ``lp`` itself from the lifted row duals."""
    answer.details.update(
        symmetry_reduced=True,
        lp_rows=int(lp.A.shape[0]),
        lp_columns=int(lp.A.shape[1]),
        lp_nonzeros=int(lp.A.nnz),
        reduced_rows=partition.n_row_classes,
        reduced_columns=partition.n_col_classes,
    )
    if run.x is not None:
        run.x = partition.lift(run.x)
    run.dual_objective = (
        lp.lower_bound(partition.lift_duals(run.row_dual))
        if run.row_dual is not None
        else float("nan")
    )


def _solve_reduced(task, enc, relation, group, eps, method, options, start) -> Answer:
    request = task.request
    N = group.size
    d0 = first_row(request.distortion, group)
    complete = relation is not None and relation.kind == "all"
    col_lo, col_hi = np.zeros(N), np.full(N, np.inf)
    reduced = ReducedLP(group, float(np.exp(eps)), relation, complete, col_lo, col_hi)
    n_aux = enc.n_aux_reduced(reduced)
    rows = RowBuilder(N + n_aux)
    rows.block(1, [(np.zeros(N), np.arange(N), 1.0)], 1.0, 1.0)  # Σ_z f(z) = 1
    enc.reduced(rows, reduced)
    lp = rows.program(
        np.concatenate([d0, np.zeros(n_aux)]),
        np.concatenate([reduced.col_lo, np.zeros(n_aux)]),
        np.concatenate([np.minimum(reduced.col_hi, 1.0), np.ones(n_aux)]),
    )
    chosen = "simplex" if method == "auto" else method
    run, answer = _solve_lp(task, lp, chosen, False, options, start, reduced=True)
    if answer.status != Status.OPTIMAL:
        return answer
    f = _clean(run.x[:N][None, :])[0]
    mech = TranslationInvariantMechanism(f, group)

    def level_of(theta: float) -> float:
        g = (1 - theta) * f + theta / N
        return enc.reduced_level(g, group, relation, complete)

    # the one mixing rule, applied to the generating row (a dense matrix may be out of reach)
    theta = least_mixing_weight(level_of, eps + 1e-10 * (1 + eps))
    if theta:
        mech = mech.mixed(theta)
    answer.structured = mech
    answer.objective = run.objective
    level = enc.reduced_level(mech.f, group, relation, complete)
    dist = float(mech.f @ d0)
    answer.measured = Measurement(
        level,
        dist,
        float(abs(mech.f.sum() - 1.0)) + float(max(0.0, -mech.f.min())),
        {"via": "generating row", "repair_weight": theta or 0.0},
    )
    if N <= MAX_DENSE:
        answer.matrix = mech.to_dense(MAX_DENSE)
    if math.isfinite(run.dual_objective):
        answer.certificate = Certificate(
            run.dual_objective, "Lagrangian bound from HiGHS's row duals (reduced LP)"
        )
    return answer


class SparseLP(Method):
    """The sparse LP solved by one HiGHS algorithm.

    Parameters
    ----------
    name : str
    method : {"auto", "simplex", "ipm", "pdlp"}
    crossover : bool
    translation_only : bool
        Apply only where the translation reduction holds.
    equitable : bool
        Apply only where the prior and distortion have a symmetry, and reduce the LP by its
        equitable partition.
    priority : int
    auto_rule : callable or None
        ``auto_rule(notion, entries, sweep) -> bool``.
    description : str
        One line for the method listing.
    """

    def __init__(
        self,
        name: str,
        method: str,
        *,
        crossover: bool = False,
        translation_only: bool = False,
        equitable: bool = False,
        priority: int = 0,
        auto_rule: Callable[[str, float, bool], bool] | None = None,
        description: str = "",
    ) -> None:
        """Store the configuration.

        Parameters
        ----------
        name, method, crossover, translation_only, equitable, priority, auto_rule, description
            As in the class docstring.
        """
        self.name = name
        self.method = method
        self.crossover = crossover
        self.translation_only = translation_only
        self.equitable = equitable
        self.priority = priority
        self.warm_starts = method == "simplex" or (
            method == "auto" and (translation_only or equitable)
        )
        self.auto_rule = auto_rule
        self.description = description
        if translation_only:
            self.memory_model = "dense"
        else:  # Clarabel's factorisation fills in more than HiGHS's (privopt.resources)
            self.memory_model = "sparse_clarabel" if method == "clarabel" else "sparse"

    def unsupported(self, request: DesignRequest) -> str | None:
        """See :meth:`~privopt.methods.base.Method.unsupported`."""
        reason = plain_linear_reason(request, ENCODINGS)
        if reason is not None:
            return reason
        # metric privacy's weighted pairs are never translation invariant: its O(k³) pair
        # search is left to the methods that use the pairs (and to the memory estimates)
        weighted = request.notion.name == "metric_dp"
        group = (
            None
            if weighted
            else translation_group(request.prior, request.distortion, _relation(request))
        )
        if self.translation_only and group is None:
            return "needs a uniform prior with a translation-invariant distortion and relation"
        if group is None and request.entries > MAX_VARIABLES:
            return f"{request.entries:.0f} mechanism entries exceed its limit {MAX_VARIABLES}"
        if group is None and request.distortion.is_database_hamming and request.prior.size > 2**14:
            return "the dense database distortion would not fit in memory"
        if self.equitable:
            found = _symmetry(request)
            if found is None:
                return (
                    f"searches for symmetry up to {MAX_SYMMETRY_SEARCH} mechanism entries "
                    f"({request.entries:.0f} given)"
                )
            if found == (0, 0):
                return (
                    "finds no symmetry of the prior and distortion (every input and every "
                    "output can be told apart)"
                )
        return None

    def solves_budget(self, request: DesignRequest) -> bool:
        """Never: ε points only; budget mode goes through the driver's line search."""
        return False

    def auto(self, request: DesignRequest, *, sweep: bool = False) -> bool:
        """See :meth:`~privopt.methods.base.Method.auto`."""
        if self.equitable:
            return _auto_equitable(request)
        if self.auto_rule is None:
            return False
        return bool(self.auto_rule(request.notion.name, request.entries, sweep))

    def solve(self, task: Task) -> Answer:
        """See :meth:`~privopt.methods.base.Method.solve`."""
        options = dict(task.cache.get(("options", self.name), {}))
        unknown = set(options) - {"symmetry", "threads", "presolve", "verbose"}
        if unknown:
            raise InputError(
                f"unknown option(s) {sorted(unknown)} for {self.name}; it takes symmetry, "
                "threads, presolve, verbose",
                "solver_options",
            )
        return solve_point(
            task,
            method=self.method,
            crossover=self.crossover,
            symmetry=bool(options.pop("symmetry", True)),
            equitable=self.equitable,
            name=self.name,
            options=options,
        )


#: Largest ``|supp p|·|U|`` on which the prior and distortion are searched for symmetry.
MAX_SYMMETRY_SEARCH = 2**22
#: The last few symmetry searches, by the identity of the prior and distortion (kept alive
#: here so that an identity is never reused while cached).
_SYMMETRY_CACHE: list[tuple[object, object, tuple[int, int] | None]] = []


def _symmetry(request: DesignRequest) -> tuple[int, int] | None:
    """How many inputs and outputs share a class with another one under colour refinement
    of the prior and distortion (:func:`~privopt.methods.sparse_lp.equitable.symbol_classes`);
    ``(0, 0)`` when there is no symmetry, ``None`` when the instance is too large to search."""
    prior, distortion = request.prior, request.distortion
    for cached_prior, cached_distortion, found in _SYMMETRY_CACHE:
        if cached_prior is prior and cached_distortion is distortion:
            return found
    support = np.flatnonzero(prior.probs > 0)
    found = None
    if support.size * distortion.n_outputs <= MAX_SYMMETRY_SEARCH:
        inputs, outputs = symbol_classes(prior.probs[support], distortion.matrix[support])
        found = (
            support.size - (int(inputs.max()) + 1),
            distortion.n_outputs - (int(outputs.max()) + 1),
        )
    _SYMMETRY_CACHE.append((prior, distortion, found))
    del _SYMMETRY_CACHE[:-4]
    return found


def _auto_equitable(request: DesignRequest) -> bool:
    """Chosen when colour refinement of the prior and distortion leaves at most 1/16 of the
    (input, output) pairs as (input class, output class) pairs, from 400 mechanism entries on
    (an upper bound on the LP's reduction; the method solves the full LP when the reduction
    falls short). Measured in benchmarks/README.md, "Symmetry reduction": exchangeable
    database priors (1/134 to 1/809 of the pairs) and uniform maps (1/17 to 1/44) gain
    ×4–×124; a prior symmetric about its middle (1/4 of the pairs) lost to ``block-ipm`` at
    k = 200 (PML 1.5 s against 0.46 s)."""
    if request.entries < 400:
        return False
    found = _symmetry(request)
    if found is None:
        return False
    support = int(np.count_nonzero(request.prior.probs > 0))
    merged_inputs, merged_outputs = found
    pairs = (support - merged_inputs) * (request.distortion.n_outputs - merged_outputs)
    return pairs * 16 <= request.entries


def _auto_simplex(notion: str, entries: float, sweep: bool) -> bool:
    """Sweeps through the dual simplex, each point warm-started from the previous basis
    (benchmarks/README.md "Curves"): up to 70×70 for PML, information privacy, LDP and
    maximal leakage (k = 30: ×4.2 to ×5.7 faster than re-solving the cvxpy program through
    its Parameter), and up to 200×200 for PML (k = 70: ×12); dp and identifiability up to
    2,500 entries (50-point sweeps: dp on 50 secrets 1.5 s against 9.1 s, on 2⁵ databases
    3.3 s against 6.7 s, identifiability on 2⁵ databases 1.0 s against 1.9 s), not beyond,
    where the pair rows make HiGHS slower than Clarabel (dp on 2⁶ databases with an
    arbitrary prior: 89 s against 15 s)."""
    return sweep and entries <= WARM_SIMPLEX_ENTRIES.get(notion, -1)


def _auto_crossover(notion: str, entries: float, sweep: bool) -> bool:
    """Single solves of PML and information privacy from 60×60 on: HiGHS's interior point
    with crossover to an exact vertex (benchmarks/README.md "Single-alphabet LPs"): pml
    k = 100: 0.78 s against 9.7 s for Clarabel and 2.2 s for the simplex; k = 200: 3.5 s /
    74 s / 33 s; LIP k = 100: 2.6 s against 37 s, k = 200: 25 s against 271 s. LDP and maximal
    leakage stay with Clarabel, faster there (ldp k = 200: 0.87 s against 7.2 s)."""
    return not sweep and notion in ("pml", "information_privacy") and entries >= 3600


def _auto_translation(notion: str, entries: float, sweep: bool) -> bool:
    """The reduced LP has ``|U|`` variables: from 4096 entries on it beats the cvxpy program,
    compilation included (benchmarks/README.md, PD-DP uniform n = 8: ×238)."""
    return entries >= 4096


def _auto_highs(notion: str, entries: float, sweep: bool) -> bool:
    """Metric privacy at every size (the pair rows go straight to HiGHS, no modelling layer;
    benchmarks/README.md "Metric privacy"), and single solves of every linear notion below
    3600 entries: measured ×1.3–×8 faster than the cvxpy program with HiGHS at k = 4–30
    (pml k = 10: 2.0 ms against 17.6 ms; dp k = 30: 50 ms against 68 ms), and an exact
    vertex where the cvxpy program's answer needs a repair that spoils its certificate
    (identifiability with priors down to 1e-12 at ε = 14–30 in the optimality fuzzer: 22
    of 1,000 instances were left ``optimal_inaccurate``). The cvxpy program stays the
    fallback, and the default for sweeps of dp and identifiability beyond 2,500 entries
    (through its Parameter; :func:`_auto_simplex` below that)."""
    if notion == "metric_dp":
        return True
    return not sweep and entries < 3600


def _auto_metric_large(notion: str, entries: float, sweep: bool) -> bool:
    """Metric privacy from 400 mechanism entries on (a 20-cell map): Clarabel's interior
    point on the assembled LP, 8.2 s against 16 s for HiGHS's on an 8 × 8 map
    (benchmarks/README.md, "Metric privacy")."""
    return notion == "metric_dp" and entries >= 400 and not sweep


_BASE = "sparse LP built with scipy.sparse, solved by HiGHS"
for _method in (
    SparseLP(
        "sparse-highs",
        "auto",
        auto_rule=_auto_highs,
        description=f"{_BASE} (simplex when small, else IPM)",
    ),
    SparseLP(
        "sparse-highs-simplex",
        "simplex",
        priority=5,
        auto_rule=_auto_simplex,
        description=f"{_BASE} dual simplex (exact vertex, warm-started in sweeps)",
    ),
    SparseLP("sparse-highs-ipm", "ipm", description=f"{_BASE} interior point, no crossover"),
    SparseLP(
        "sparse-highs-ipm-crossover",
        "ipm",
        crossover=True,
        priority=6,
        auto_rule=_auto_crossover,
        description=f"{_BASE} interior point with crossover to an exact vertex",
    ),
    SparseLP("sparse-highs-pdlp", "pdlp", description=f"{_BASE} PDLP (first-order)"),
    SparseLP(
        "sparse-clarabel",
        "clarabel",
        priority=5,
        auto_rule=_auto_metric_large,
        description=(
            "sparse LP built with scipy.sparse, solved by Clarabel's interior point (no "
            "modelling layer)"
        ),
    ),
    SparseLP(
        "sparse-highs-symmetry",
        "auto",
        equitable=True,
        priority=15,
        description=(
            "the sparse LP reduced exactly by its symmetries (the coarsest equitable partition "
            "of variables and rows, found by colour refinement), solved by HiGHS; any "
            "relabelling that keeps prior, distortion and neighbours, no group given"
        ),
    ),
    SparseLP(
        "sparse-highs-translation",
        "auto",
        translation_only=True,
        priority=20,
        auto_rule=_auto_translation,
        description=(
            "uniform prior with translation-invariant distortion and neighbours: the LP "
            "reduces exactly to one row W[x, x+z] = f(z), solved by HiGHS"
        ),
    ),
):
    register(_method)
for _old in ("simplex", "ipm", "ipm-crossover", "pdlp", "translation"):
    register_alias(f"highs-{_old}", f"sparse-highs-{_old}")
