"""Inverting a stack of symmetric positive definite matrices in place, on every core.

The dense kernel of the block interior point inverts one normal matrix per output column in
every iteration (``U`` Cholesky inversions of ``n × n``; 256 of 256 × 256 per iteration for
PD-DP on 2⁸ databases). scipy's LAPACK wrappers (``scipy.linalg.lapack.dpotrf``) copy each
matrix to Fortran order and back and hold the interpreter lock while LAPACK runs, so the
columns were inverted one after the other on one core. Here LAPACK's ``dpotrf`` / ``dpotri``
are called **in place** through the function pointers scipy exports for Cython
(``scipy.linalg.cython_lapack``), by :mod:`ctypes`, which releases the interpreter lock for
the duration of a foreign call: the columns are split between threads, one per core.

Matrices above :data:`LAPACK_ORDER` are split in two and inverted through the Schur
complement of their leading block (four matrix products per split, which numpy's BLAS runs
without the interpreter lock too); the blocks at the bottom of the recursion go to LAPACK in
place. A column that is not positive definite to round-off is reported to the caller, who
rebuilds it.

If the function pointers cannot be found (a scipy build without them), :data:`AVAILABLE` is
``False`` and callers keep their per-matrix path.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

import numpy as np

from privopt.methods.block_ipm.ordering import worker_count

__all__ = [
    "AVAILABLE",
    "for_chunks",
    "invert_spd_range",
    "multiply_add",
    "multiply_stack",
    "worker_count",
]

T = TypeVar("T")

_INT_P = ctypes.POINTER(ctypes.c_int)
#: ``void d<name>(char *uplo, int *n, double *a, int *lda, int *info)``; a ``CFUNCTYPE``
#: call releases the interpreter lock.
_PROTOTYPE = ctypes.CFUNCTYPE(None, ctypes.c_char_p, _INT_P, ctypes.c_void_p, _INT_P, _INT_P)


#: ``void dgemm(char *transa, char *transb, int *m, int *n, int *k, double *alpha, double *a,
#: int *lda, double *b, int *ldb, double *beta, double *c, int *ldc)``.
_GEMM_PROTOTYPE = ctypes.CFUNCTYPE(
    None,
    ctypes.c_char_p,
    ctypes.c_char_p,
    _INT_P,
    _INT_P,
    _INT_P,
    ctypes.POINTER(ctypes.c_double),
    ctypes.c_void_p,
    _INT_P,
    ctypes.c_void_p,
    _INT_P,
    ctypes.POINTER(ctypes.c_double),
    ctypes.c_void_p,
    _INT_P,
)


def _exported_function(module: str, name: str, prototype):
    """``name`` from scipy's Cython exports ``scipy.linalg.<module>`` as a ctypes function of
    ``prototype`` (``None`` if absent)."""
    try:
        from importlib import import_module

        capsule = import_module(f"scipy.linalg.{module}").__pyx_capi__[name]
        api = ctypes.pythonapi
        api.PyCapsule_GetName.restype = ctypes.c_char_p
        api.PyCapsule_GetName.argtypes = [ctypes.py_object]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        pointer = api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))
    except (ImportError, AttributeError, KeyError, ValueError, TypeError):  # pragma: no cover
        return None
    return prototype(pointer) if pointer else None


_POTRF = _exported_function("cython_lapack", "dpotrf", _PROTOTYPE)
_POTRI = _exported_function("cython_lapack", "dpotri", _PROTOTYPE)
_GEMM = _exported_function("cython_blas", "dgemm", _GEMM_PROTOTYPE)
#: Whether the in-place, lock-free LAPACK calls are available.
AVAILABLE = _POTRF is not None and _POTRI is not None

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:  # solves running in several threads share one pool
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=worker_count(), thread_name_prefix="privopt-spd")
        return _POOL


def _forget_pool() -> None:
    """A forked child has none of the parent's threads: it starts its own pool (and lock)."""
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def for_chunks(task: Callable[[int, int], T], count: int, work: float) -> list[T]:
    """Run ``task(lo, hi)`` on contiguous chunks of ``range(count)``, one per core.

    Parameters
    ----------
    task : callable
        ``task(lo, hi)``; it must release the interpreter lock for most of its time
        (LAPACK through ctypes, numpy loops) to gain anything, and must not itself call
        :func:`for_chunks` (the pool would wait on itself).
    count : int
        The items (columns) to share.
    work : float
        A rough count of flops or bytes; below ``10⁶`` one call runs in the calling thread
        (a thread hand-over costs about 0.1 ms).

    Returns
    -------
    list
        The chunks' results, in order.
    """
    workers = min(worker_count(), count)
    if workers <= 1 or work < 1e6:
        return [task(0, count)]
    bounds = np.linspace(0, count, workers + 1).astype(int)
    futures = [
        _pool().submit(task, int(lo), int(hi))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
        if hi > lo
    ]
    # every chunk ends before a result or an error is handed back: a chunk stopped by the
    # time limit must not leave the other running in the pool, outside the caller's BLAS
    # thread limit (seen: a process that answered at 2.4 s ended 13.5 s later)
    wait(futures)
    errors = [future.exception() for future in futures]
    if any(error is not None for error in errors):
        # raised with no future left in this frame: the error's traceback refers to the
        # frames it passed through, and a future holding the error from one of them was a
        # reference cycle that kept the failed chunk's arrays (the factors of every column)
        # until the cyclic collector ran. A 30 × 30 map's factorisations that failed and
        # were retried with a stronger regularisation held up to ten sets of factors,
        # 1.8 GB, beyond the memory estimate
        error = next(error for error in errors if error is not None)
        futures = errors = None
        try:
            raise error
        finally:
            error = None
    return [future.result() for future in futures]


#: Matrices up to this order are inverted by LAPACK (``dpotrf`` then ``dpotri``); larger ones
#: are split in two and inverted through their Schur complement (:func:`_invert_in_place`),
#: whose work is matrix products. Measured on one core (inverting an ``n × n`` matrix):
#: n = 256 1.27 ms → 0.87 ms, n = 243 0.95 → 0.71, n = 128 0.21 → 0.17, n = 100 0.12 → 0.10;
#: splits down to 32 or up to 128 were no faster.
LAPACK_ORDER = 128

_BELOW_DIAGONAL: dict[int, np.ndarray] = {}


def _below_diagonal(n: int) -> np.ndarray:
    mask = _BELOW_DIAGONAL.get(n)
    if mask is None:
        mask = _BELOW_DIAGONAL.setdefault(n, np.tri(n, k=-1, dtype=bool))
    return mask


def _lapack_in_place(M: np.ndarray, lead: int) -> bool:
    """Invert the symmetric positive definite view ``M`` (rows ``lead`` elements apart) by
    ``dpotrf``/``dpotri`` in place; ``False`` if the factorisation broke down.

    A C-ordered block is its own Fortran-ordered transpose with leading dimension ``lead``,
    so LAPACK's lower triangle is the C block's upper one; it is mirrored onto the strictly
    lower triangle at the end (numpy copies the overlapping transposed view first).
    """
    n = M.shape[0]
    size, leading, info = ctypes.c_int(n), ctypes.c_int(lead), ctypes.c_int(0)
    address = M.ctypes.data
    _POTRF(b"L", ctypes.byref(size), address, ctypes.byref(leading), ctypes.byref(info))
    if info.value != 0:
        return False
    _POTRI(b"L", ctypes.byref(size), address, ctypes.byref(leading), ctypes.byref(info))
    if info.value != 0:
        return False
    np.copyto(M, M.T, where=_below_diagonal(n))
    return True


def _invert_in_place(M: np.ndarray, lead: int) -> bool:
    """Invert the symmetric positive definite view ``M`` in place (both triangles written);
    ``False`` if it is not positive definite to round-off (``M`` is then overwritten).

    For ``M = [[A, B], [Bᵀ, C]]``, with ``X = A⁻¹B`` and the Schur complement
    ``S = C − BᵀX`` (positive definite with ``M``), ``Y = X S⁻¹`` gives
    ``M⁻¹ = [[A⁻¹ + Y Xᵀ, −Y], [−Yᵀ, S⁻¹]]`` (block elimination through the Schur
    complement, [Higham-ASNA] ch. 13–14); ``A⁻¹`` and ``S⁻¹`` recursively. The work is
    ``4/3 n³`` flops against ``n³`` for ``dpotrf`` + ``dpotri``, but in four matrix products
    per split, which run three to four times faster than LAPACK's triangular kernels at
    these orders.
    """
    n = M.shape[0]
    if n <= LAPACK_ORDER:
        return _lapack_in_place(M, lead)
    half = n // 2
    A, B = M[:half, :half], M[:half, half:]
    B_t, C = M[half:, :half], M[half:, half:]
    if not _invert_in_place(A, lead):
        return False
    X = A @ B
    C -= B_t @ X
    if not _invert_in_place(C, lead):
        return False
    Y = X @ C
    A += Y @ X.T
    np.copyto(A, A.T, where=_below_diagonal(half))  # Y Xᵀ is symmetric only to round-off
    np.negative(Y, out=B)
    np.negative(Y.T, out=B_t)
    return True


def invert_spd_range(H: np.ndarray, lo: int, hi: int, total: np.ndarray | None = None) -> list[int]:
    """Replace ``H[lo:hi]`` of a C-contiguous stack by the inverses, in place.

    Parameters
    ----------
    H : numpy.ndarray
        ``U × n × n``, float64, C-contiguous; each ``H[u]`` symmetric positive definite,
        both triangles written. Overwritten by the inverses (both triangles written).
    lo, hi : int
        The matrices to invert, ``lo ≤ u < hi``.
    total : numpy.ndarray, optional
        ``n × n``: each inverse is added to it as soon as it is computed, while it is still in
        the cache (the failed matrices are not added).

    Returns
    -------
    list of int
        The matrices that are not positive definite to round-off (a Cholesky factorisation
        broke down), in increasing order. They are left overwritten: the caller rebuilds
        them.

    Raises
    ------
    RuntimeError
        If :data:`AVAILABLE` is ``False``.
    ValueError
        If ``H`` is not a C-contiguous float64 stack of square matrices.
    """
    if not AVAILABLE:  # pragma: no cover - guarded by the caller
        raise RuntimeError("LAPACK's dpotrf/dpotri are not exported by this scipy")
    if H.dtype != np.float64 or not H.flags.c_contiguous or H.ndim != 3:
        raise ValueError("a C-contiguous U × n × n float64 stack is required")
    n = H.shape[1]
    failed = []
    for u in range(lo, hi):
        if not _invert_in_place(H[u], n):
            failed.append(u)
        elif total is not None:
            total += H[u]
    return failed


def multiply_stack(A: np.ndarray, R: np.ndarray) -> np.ndarray:
    """``A[u] @ R[u]`` for every ``u`` (or ``A[u] @ R`` for one vector), threads sharing ``u``.

    The products read the whole stack once and are bound by memory bandwidth; numpy's
    ``einsum`` loop releases the interpreter lock, so each core streams its share (measured
    with 256 matrices of 256 × 256: 9.4 ms for ``numpy.matmul``, 3.3 ms on two cores).

    Parameters
    ----------
    A : numpy.ndarray
        ``U × n × n``.
    R : numpy.ndarray
        ``U × n`` (one right-hand side per matrix) or ``n`` (the same for all).

    Returns
    -------
    numpy.ndarray
        ``U × n``.
    """
    U, n = A.shape[0], A.shape[1]
    # the columns' right-hand sides must be C-ordered: the sparse products leave them in
    # Fortran order, on which einsum's loop strides across rows (PD-DP on 2⁸ databases:
    # 19.6 ms against 4.1 ms per product, a fifth of the run)
    R = np.ascontiguousarray(R)
    out = np.empty((U, n))

    def multiply(lo: int, hi: int) -> None:
        if R.ndim == 1:
            np.einsum("uij,j->ui", A[lo:hi], R, out=out[lo:hi])
        else:
            np.einsum("uij,uj->ui", A[lo:hi], R[lo:hi], out=out[lo:hi])

    for_chunks(multiply, U, U * float(n) * n)
    return out


def multiply_add(A: np.ndarray, B: np.ndarray, C: np.ndarray, alpha: float, beta: float) -> None:
    """``C ← alpha·A B + beta·C`` in place, for row-major views of larger arrays.

    numpy's ``matmul`` has no ``beta``: ``C −= A @ B`` forms the product in a temporary and
    passes over ``C`` again. BLAS's ``dgemm`` (scipy's Cython export, through :mod:`ctypes`,
    without the interpreter lock) updates ``C`` in one pass, on the views as they are: a
    C-ordered ``m × k`` block whose rows are ``lda`` apart is the Fortran-ordered ``k × m``
    block of leading dimension ``lda``, so ``C = A B`` is computed as ``Cᵀ = Bᵀ Aᵀ``.

    Parameters
    ----------
    A, B, C : numpy.ndarray
        float64, two-dimensional, ``m × k``, ``k × n`` and ``m × n``, each with unit stride
        along its rows (any stride between rows); ``C`` must not overlap ``A`` or ``B``.
    alpha, beta : float
        The factors.

    Returns
    -------
    None
        ``C`` is overwritten.
    """
    m, k = A.shape
    n = B.shape[1]
    if _GEMM is None or min(m, n, k) == 0 or not all(_blas_view(M) for M in (A, B, C)):
        product = A @ B
        if beta == 0.0:
            np.multiply(product, alpha, out=C)
        else:
            C *= beta
            C += alpha * product
        return
    rows_c, cols_c, inner = ctypes.c_int(n), ctypes.c_int(m), ctypes.c_int(k)
    lead_b = ctypes.c_int(max(B.strides[0] // 8, n))
    lead_a = ctypes.c_int(max(A.strides[0] // 8, k))
    lead_c = ctypes.c_int(max(C.strides[0] // 8, n))
    factor, keep = ctypes.c_double(alpha), ctypes.c_double(beta)
    _GEMM(
        b"N",
        b"N",
        ctypes.byref(rows_c),
        ctypes.byref(cols_c),
        ctypes.byref(inner),
        ctypes.byref(factor),
        B.ctypes.data,
        ctypes.byref(lead_b),
        A.ctypes.data,
        ctypes.byref(lead_a),
        ctypes.byref(keep),
        C.ctypes.data,
        ctypes.byref(lead_c),
    )


def _blas_view(M: np.ndarray) -> bool:
    """Whether ``M`` can be handed to BLAS as it is: float64, 2-D, unit stride along its
    rows, rows that do not overlap, 32-bit sizes."""
    if M.dtype != np.float64 or M.ndim != 2 or M.strides[1] != 8 or M.strides[0] % 8:
        return False
    lead = M.strides[0] // 8
    return (M.shape[0] <= 1 or lead >= M.shape[1]) and lead < 2**31 and M.size < 2**31
