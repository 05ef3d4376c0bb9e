"""Every way privopt solves a point of a design request, behind one interface.

* :mod:`privopt.methods.cvxpy_program` — the papers' convex programs in cvxpy, one method per
  installed cvxpy solver (``CLARABEL``, ``HIGHS``, ``ECOS``, ``SCS``, …);
* :mod:`privopt.methods.sparse_lp` — the linear notions as a sparse LP handed to HiGHS
  (``sparse-highs-simplex``, ``sparse-highs-ipm-crossover``, ``sparse-highs-translation``, …);
* :mod:`privopt.methods.symmetric` — the exact single-letter reduction for i.i.d. database
  priors (``symmetric``);
* :mod:`privopt.methods.blahut_arimoto` — certified Blahut–Arimoto for mutual information
  (``blahut-arimoto``);
* :mod:`privopt.methods.block_ipm` — an interior point on the block-angular LP of the linear
  notions (one block per output column), for any prior (``block-ipm``);
* :mod:`privopt.methods.wang_identifiability` — Wang, Ying & Zhang's closed-form identifiability
  optimum E_i (``wang-identifiability``).

Each registers a :class:`~privopt.methods.base.Method` in :data:`METHODS`; the solve driver
(:mod:`privopt.solve`) picks them, verifies their answers and falls back from one to the next.
Importing this package registers every method without importing any solver (cvxpy, HiGHS,
scipy.optimize, …): each method imports its own when it first runs (see "How a method
registers" in :mod:`privopt.methods.base`).
This package may import the model, measures, notions, validation and request layers, never
the solve driver or the faces.
"""

from privopt.methods import (  # noqa: F401  (importing a module registers its methods)
    blahut_arimoto,
    block_ipm,
    cvxpy_program,
    sparse_lp,
    symmetric,
    wang_identifiability,
)
from privopt.methods.base import (
    ALIASES,
    METHODS,
    Answer,
    Certificate,
    Deadline,
    Measurement,
    Method,
    ProgressEvent,
    Task,
    lookup,
    method_names,
    register,
    register_alias,
)

__all__ = [
    "ALIASES",
    "METHODS",
    "Answer",
    "Certificate",
    "Deadline",
    "Measurement",
    "Method",
    "ProgressEvent",
    "Task",
    "lookup",
    "method_names",
    "register",
    "register_alias",
    "solve_point",
]


def solve_point(
    method: str,
    prior,
    distortion,
    notion: str,
    *,
    tol: float = 1e-9,
    warm=None,
    time_limit: float | None = None,
    **request,
) -> Answer:
    """Solve one point with one method and return its raw, unverified answer.

    For inspecting a method; :func:`privopt.design` is what users call (it verifies,
    certifies, falls back and handles budget mode for every notion).

    Parameters
    ----------
    method : str
        A registered method name.
    prior, distortion, notion
        As in :func:`privopt.design`.
    tol : float
        Accuracy asked of the method.
    warm : object, optional
        The ``warm`` of a previous answer of the same method.
    time_limit : float, optional
        Seconds.
    **request
        ``epsilon`` (an ε point) or ``max_distortion`` (a budget point, for methods that
        solve them), ``neighbors``, ``extra_distortions``, ``observe_secret`` and the
        notion's own options, as in :func:`privopt.request.prepare_request`.

    Returns
    -------
    Answer
    """
    from privopt.errors import InputError, close_matches
    from privopt.request import prepare_request

    found = lookup(method)
    if found is None:
        raise InputError(
            f"unknown method {method!r}; known: {', '.join(METHODS)}",
            "solver.name",
            suggestions=close_matches(method, METHODS),
        )
    req = prepare_request(prior, distortion, notion, **request)
    reason = found.unsupported(req)
    if reason is not None:
        raise InputError(f"{found.name} does not apply: {reason}", "solver.name")
    task = Task(
        req,
        epsilon=req.epsilon,
        budget=req.max_distortion,
        tol=tol,
        warm=warm,
        deadline=Deadline(time_limit),
    )
    return found.solve(task)
