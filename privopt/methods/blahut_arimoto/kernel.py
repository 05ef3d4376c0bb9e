"""The Blahut–Arimoto kernel at one slope, its measures and the BLAS thread guard."""

from __future__ import annotations

__all__ = ["Kernel", "SlopePoint", "mutual_information", "ba_gap", "BlasThreads", "TINY"]

from dataclasses import dataclass

import numpy as np

#: Z values below this are recomputed in the log domain.
TINY = 1e-280


_BLAS_THREAD_FUNCS: list | None = None


def _blas_thread_funcs() -> list:
    """``(get, set)`` pairs for the OpenBLAS builds bundled with numpy and scipy wheels.

    Found by file name next to the packages (``numpy.libs``, ``scipy.libs``); empty on other
    builds (MKL, system BLAS), in which case thread control is silently skipped.
    """
    global _BLAS_THREAD_FUNCS
    if _BLAS_THREAD_FUNCS is not None:
        return _BLAS_THREAD_FUNCS
    import ctypes
    import glob
    import os

    import scipy

    funcs = []
    names = (
        "scipy_openblas_{}_num_threads64_",
        "scipy_openblas_{}_num_threads",
        "openblas_{}_num_threads64_",
        "openblas_{}_num_threads",
    )
    for package in (np, scipy):
        libdir = os.path.join(
            os.path.dirname(os.path.dirname(package.__file__)), f"{package.__name__}.libs"
        )
        for path in glob.glob(os.path.join(libdir, "*openblas*")):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in names:
                get = getattr(lib, name.format("get"), None)
                put = getattr(lib, name.format("set"), None)
                if get is not None and put is not None:
                    get.restype = ctypes.c_int
                    funcs.append((get, put))
                    break
    _BLAS_THREAD_FUNCS = funcs
    return funcs


class BlasThreads:
    """Context manager limiting the bundled OpenBLAS to ``n`` threads (``None``: no change).

    Blahut–Arimoto is dominated by matrix–vector products and moderate Cholesky/GEMM, for
    which BLAS threads barely help and, on a loaded machine, cost up to 10× (measured).
    """

    def __init__(self, n: int | None) -> None:
        """Remember the thread count.

        Parameters
        ----------
        n : int or None
            Threads for the bundled OpenBLAS inside the block; ``None`` leaves it unchanged.
        """
        self.n = n
        self.saved: list[tuple] = []

    def __enter__(self):
        if self.n is not None:
            for get, put in _blas_thread_funcs():
                self.saved.append((put, int(get())))
                put(int(self.n))
        return self

    def __exit__(self, *exc):
        for put, value in self.saved:
            put(value)
        self.saved.clear()
        return False


def _lse_rows(a: np.ndarray) -> np.ndarray:
    """Row-wise ``ln Σ exp`` (−inf for an all −inf row); faster than scipy's for 2-D arrays."""
    m = a.max(axis=1)
    finite = np.isfinite(m)
    out = np.full(a.shape[0], -np.inf)
    if finite.any():
        mf = m[finite]
        out[finite] = mf + np.log(np.exp(a[finite] - mf[:, None]).sum(axis=1))
    return out


def mutual_information(p: np.ndarray, W: np.ndarray) -> float:
    """``I(X;U) = Σ p(x) W[x,u] ln(W[x,u]/q(u))`` with ``0 ln 0 = 0`` (Wang, Ying & Zhang
    (2016), Def. 4, nats).

    Parameters
    ----------
    p : numpy.ndarray
        Prior pmf ``p(x)``, shape ``(k,)``.
    W : numpy.ndarray
        Row-stochastic mechanism ``W[x, u] = p(u|x)``, shape ``(k, n)``.

    Returns
    -------
    float
        ``I(X;U)`` in nats, ``≥ 0``.
    """
    q = p @ W
    rows = p > 0
    cols = q > 0  # outputs never used contribute nothing: skip them (O(k·|supp q|))
    Wr = W[np.ix_(rows, cols)]
    qc = q[cols]
    pos = Wr > 0
    ratio = np.zeros_like(Wr)
    ratio[pos] = np.log(Wr[pos] / np.broadcast_to(qc, Wr.shape)[pos])
    return float(max(np.sum(p[rows][:, None] * Wr * ratio), 0.0))


class Kernel:
    """``K[x,u] = e^{−s (d(x,u) − d_min(x))}`` (rows scaled to max 1) for one slope ``s``.

    ``s = inf`` gives the indicator of ``d(x,u) = d_min(x)`` (the ``D = D_min`` problem).
    """

    def __init__(self, d: np.ndarray, dmin: np.ndarray, p: np.ndarray, s: float) -> None:
        """Build ``K`` and ``ln K``.

        Parameters
        ----------
        d : numpy.ndarray
            Distortion ``d[x, u]``, shape ``(k, n)``.
        dmin : numpy.ndarray
            Row minima ``d_min(x) = min_u d(x, u)``, shape ``(k,)``.
        p : numpy.ndarray
            Prior pmf, shape ``(k,)``.
        s : float
            Slope ``s ≥ 0`` (``inf``: the ``D = D_min`` indicator kernel).
        """
        self.s = s
        self.d = d
        self.p = p
        excess = d - dmin[:, None]
        if np.isinf(s):
            self.K = (excess <= 1e-12 * max(1.0, float(d.max()))).astype(float)
            self.logK = np.where(self.K > 0, 0.0, -np.inf)
        else:
            self.logK = -s * excess
            self.K = np.exp(self.logK)
        # the true ln Z(x) is ln Z̃(x) − s·d_min(x); keep the shift for the certificate
        self.shift = np.zeros_like(dmin) if np.isinf(s) else -s * dmin
        self.pos = p > 0
        self.sqrt_p = np.sqrt(p)

    def restrict(self, cols: np.ndarray) -> Kernel:
        """The same kernel on the output columns ``cols`` only (the restricted problem
        ``min Φ(q)`` over ``q`` supported on ``cols``; rows keep their scaling).

        Parameters
        ----------
        cols : numpy.ndarray
            Output column indices (or a boolean mask over the outputs).

        Returns
        -------
        Kernel
            A kernel sharing ``p``, ``s`` and the row shift, with ``d``, ``K`` and ``ln K``
            restricted to ``cols``.
        """
        sub = object.__new__(Kernel)
        sub.s, sub.p, sub.pos, sub.sqrt_p, sub.shift = (
            self.s,
            self.p,
            self.pos,
            self.sqrt_p,
            self.shift,
        )
        sub.d = self.d[:, cols]
        sub.K = self.K[:, cols]
        sub.logK = self.logK[:, cols]
        return sub

    def z(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``Z̃ = K q`` with its log; rows that underflow are redone in the log domain.

        Parameters
        ----------
        q : numpy.ndarray
            Output pmf (non-negative), shape ``(n,)``.

        Returns
        -------
        zt : numpy.ndarray
            ``Z̃(x) = Σ_u K[x,u] q(u)``, shape ``(k,)``.
        logz : numpy.ndarray
            ``ln Z̃(x)`` (log-domain for the underflowing rows; ``-inf`` where ``Z̃ = 0``).
        bad : numpy.ndarray
            Boolean mask of the rows with ``Z̃ < TINY``.
        """
        zt = self.K @ q
        bad = zt < TINY
        with np.errstate(divide="ignore"):
            logz = np.log(zt)
            if bad.any():
                logq = np.log(q)
                logz[bad] = _lse_rows(self.logK[bad] + logq[None, :])
        return zt, logz, bad

    def ratio(
        self,
        zt: np.ndarray,
        logz: np.ndarray,
        bad: np.ndarray,
        cols: np.ndarray | None = None,
    ) -> np.ndarray:
        """``B[x,u] = K[x,u] / Z̃(x)`` (= ``W[x,u]/q(u)``) for the given columns.

        Parameters
        ----------
        zt, logz, bad : numpy.ndarray
            The three arrays returned by :meth:`z`.
        cols : numpy.ndarray, optional
            Output column indices; all columns by default.

        Returns
        -------
        numpy.ndarray
            ``B``, shape ``(k, len(cols))`` (or ``(k, n)``); non-finite entries set to 0.
        """
        K = self.K if cols is None else self.K[:, cols]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            B = K / zt[:, None]
            if bad.any():
                lk = self.logK[bad] if cols is None else self.logK[np.ix_(bad, cols)]
                B[bad] = np.exp(lk - logz[bad][:, None])
        B[~np.isfinite(B)] = 0.0
        return B

    def c(self, zt: np.ndarray, logz: np.ndarray, bad: np.ndarray) -> np.ndarray:
        """``c(u) = Σ_x p(x) K[x,u] / Z(x)`` (Blahut 1972, eq. (9)).

        Parameters
        ----------
        zt, logz, bad : numpy.ndarray
            The three arrays returned by :meth:`z`.

        Returns
        -------
        numpy.ndarray
            ``c``, shape ``(n,)`` (``c(u) ≤ 1`` on the support at the optimum).
        """
        good = self.pos & ~bad
        weights = np.zeros_like(zt)  # zero weights instead of a row selection: no copy of K
        weights[good] = self.p[good] / zt[good]
        out = weights @ self.K
        badp = self.pos & bad & np.isfinite(logz)
        if badp.any():
            lw = np.log(self.p[badp]) - logz[badp]
            with np.errstate(over="ignore"):
                out = out + np.exp(self.logK[badp] + lw[:, None]).sum(axis=0)
        return out

    def phi(self, q: np.ndarray) -> float:
        """``Φ(q) = −Σ p(x) ln Z̃(x) + Σ q`` (up to the constant row shift).

        Parameters
        ----------
        q : numpy.ndarray
            Non-negative output weights, shape ``(n,)``.

        Returns
        -------
        float
            ``Φ(q)`` (nats); ``inf`` when ``Z̃(x) = 0`` for an input of positive mass.
        """
        _, logz, _ = self.z(q)
        lz = logz[self.pos]
        if not np.isfinite(lz).all():
            return np.inf
        return float(-np.dot(self.p[self.pos], lz) + q.sum())

    def mechanism(self, q: np.ndarray) -> np.ndarray:
        """``W[x,u] = q(u) K[x,u] / Z(x)``; rows with ``Z = 0`` (zero prior mass) get ``K``'s
        row normalised.

        Parameters
        ----------
        q : numpy.ndarray
            Output pmf, shape ``(n,)``.

        Returns
        -------
        numpy.ndarray
            Row-stochastic ``W``, shape ``(k, n)``.
        """
        zt, logz, bad = self.z(q)
        S = np.flatnonzero(q > 0)  # W is zero outside the support: O(k·|S|) work
        W_S = q[S][None, :] * self.ratio(zt, logz, bad, S)
        sums = W_S.sum(axis=1)
        empty = ~(sums > 0)
        W = np.zeros(self.K.shape)
        if empty.any():
            W[empty] = self.K[empty] / self.K[empty].sum(axis=1, keepdims=True)
            W_S[empty] = 0.0
            sums[empty] = 1.0
        W[:, S] += W_S / sums[:, None]
        return W


@dataclass
class SlopePoint:
    """The converged Blahut–Arimoto solution at one slope.

    Attributes
    ----------
    s : float
        The slope (``0`` = constant output, ``inf`` = the ``D_min`` problem).
    q : numpy.ndarray
        Output pmf.
    W : numpy.ndarray
        Mechanism (all input rows).
    D : float
        ``E[d]`` of ``W``.
    I : float
        ``I(X;U)`` of ``W`` (nats).
    intercept : float
        ``a_s`` with ``R(D') ≥ a_s − s D'`` for every ``D'`` (Blahut's lower bound; ``-inf``
        when ``s`` is 0 or infinite).
    gap : float
        BA duality gap at this slope, ``ln max c − Σ q c ln c`` (nats).
    iterations : int
    dD_ds : float
        Slope derivative ``dD/ds`` of the optimal curve (``nan`` at the ends).
    method : str
        How the slope was solved (``"ba"``, ``"newton"``, ``"ipm+newton"``, ...).
    """

    s: float
    q: np.ndarray
    W: np.ndarray
    D: float
    I: float
    intercept: float
    gap: float
    iterations: int
    dD_ds: float = float("nan")
    method: str = ""


def ba_gap(q: np.ndarray, c: np.ndarray) -> float:
    """Blahut's gap ``ln max_u c(u) − Σ_u q(u) c(u) ln c(u)`` for a normalised ``q`` (≥ 0).

    Parameters
    ----------
    q : numpy.ndarray
        Output pmf, shape ``(n,)``.
    c : numpy.ndarray
        ``c(u)`` of :meth:`Kernel.c` at ``q``, shape ``(n,)``.

    Returns
    -------
    float
        The gap in nats (``inf`` when ``c`` is not finite).
    """
    if not np.isfinite(c).all():
        return np.inf
    pos = (q > 0) & (c > 0)
    return float(np.log(c.max()) - np.sum(q[pos] * c[pos] * np.log(c[pos])))
