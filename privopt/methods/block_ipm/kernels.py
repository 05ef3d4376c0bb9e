"""Per-column normal matrices of the block-angular LP, and how to invert them.

Every column ``u`` of the mechanism carries the same privacy rows ``G v_u ≤ 0`` (only the
interior-point scalings differ from column to column), so the Newton system of an interior
point needs, for each column, the matrix

    ``H_u = Gᵀ diag(d_u) G + diag(e_u)``

(``d_u`` the row scalings ``z/s``, ``e_u`` the bound scalings ``ν/v``) and the sum of the
coupled blocks of the inverses, ``Σ_u (H_u⁻¹)[sel, sel]`` (Schur complement on the row sums).
A kernel holds ``G`` in the form that makes this cheap:

* :class:`DenseColumns` — ``G`` sparse with several entries of ``v`` per row (the neighbour
  pairs of dp, identifiability and metric privacy). ``H_u`` is formed densely and inverted
  in place (Cholesky, above 128 variables through a Schur complement): ``O(n³)`` per column,
  the cores sharing the columns (:mod:`~privopt.methods.block_ipm.dense_inverse`).
* :class:`DiagonalPlusLowRank` — ``G = A + L Rᵀ`` with at most one nonzero per row of ``A``
  and a thin dense part (PML and information privacy through the output law ``pᵀv``). Then
  ``H_u = Λ_u + Y_u M_u Y_uᵀ`` with ``Λ_u`` diagonal and ``Y_u`` of ``2k`` columns, and the
  Woodbury identity inverts it in ``O(n k²)`` per column.
* :class:`ArrowColumns` — every row ties one mechanism entry to one auxiliary variable of
  the column (LDP's column minimum, maximal leakage's column maximum): ``H_u`` is an arrow
  matrix, inverted by eliminating the auxiliary variable with a Schur complement written as
  a sum of positive terms (no cancellation), so that ``H_u⁻¹`` is a diagonal plus a positive
  rank-one term.

The structure is the block-angular form of the papers' LPs: e.g. PD-DP, Wang, Ying & Zhang
(2016), eqs. (14)–(17), couples the output columns only through the row sums (16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from privopt._docstrings import complete_overrides
from privopt.methods.base import TimeLimitReached
from privopt.methods.block_ipm import dense_inverse

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import ArrayLike

__all__ = [
    "ArrowColumns",
    "ColumnKernel",
    "DenseColumns",
    "DiagonalPlusLowRank",
    "SingularBlock",
]


#: Columns of a dense factorisation between two looks at its ``stop`` callable (an
#: ``n × n`` inverse at n = 400 is ~40 MFlop: 16 of them take a fraction of a second).
STOP_EVERY = 16


class SingularBlock(ArithmeticError):
    """A normal matrix could not be factorised even after regularisation."""


class ColumnKernel:
    """The privacy rows ``G`` (``m × n``) shared by every column (see the module docstring).

    Attributes
    ----------
    n_rows, n_vars : int
        ``m`` and ``n``.
    """

    n_rows: int
    n_vars: int

    def __init_subclass__(cls, **kwargs) -> None:
        # the Parameters and Returns an override leaves out are the overridden method's
        super().__init_subclass__(**kwargs)
        complete_overrides(cls)

    def apply(self, V: np.ndarray) -> np.ndarray:
        """``G v_u`` for every column.

        Parameters
        ----------
        V : numpy.ndarray
            ``U × n``.

        Returns
        -------
        numpy.ndarray
            ``U × m``.
        """
        raise NotImplementedError

    def apply_t(self, Z: np.ndarray) -> np.ndarray:
        """``Gᵀ z_u`` for every column.

        Parameters
        ----------
        Z : numpy.ndarray
            ``U × m``.

        Returns
        -------
        numpy.ndarray
            ``U × n``.
        """
        raise NotImplementedError

    def factor(
        self, D: np.ndarray, E: np.ndarray, stop: Callable[[], bool] | None = None
    ) -> ColumnFactor:
        """Factorise every ``H_u = Gᵀ diag(D[u]) G + diag(E[u])``.

        Parameters
        ----------
        D : numpy.ndarray
            ``U × m``: positive row scalings.
        E : numpy.ndarray
            ``U × n``: positive diagonal terms.
        stop : callable, optional
            ``stop() -> bool``, asked between groups of columns by the kernels whose
            factorisation is long (``O(n³)`` per column): when it says so, the factorisation
            is abandoned with :class:`~privopt.methods.base.TimeLimitReached`.

        Returns
        -------
        ColumnFactor
            The factorisation of every column, for :meth:`ColumnFactor.solve` and
            :meth:`ColumnFactor.coupled_block`.

        Raises
        ------
        SingularBlock
            If a column's matrix cannot be factorised even after regularisation.
        TimeLimitReached
            When ``stop()`` said so.
        """
        raise NotImplementedError

    def column_rows(self) -> tuple[sp.csr_matrix, sp.csr_matrix | None]:
        """One column's privacy rows as an explicit sparse LP.

        Returns
        -------
        scipy.sparse.csr_matrix
            ``m × (n + k)``: the rows ``≤ 0`` over the column's ``n`` variables and ``k``
            free auxiliaries.
        scipy.sparse.csr_matrix or None
            ``k × (n + k)``: equality rows ``= 0`` defining the auxiliaries (``None`` when
            ``k = 0``). The duals of the first block are the kernel's ``z``: ``Gᵀz`` is
            ``apply_t(z)`` whatever the auxiliaries.
        """
        raise NotImplementedError


class ColumnFactor:
    """The factorised ``H_u`` of every column."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        complete_overrides(cls)

    def solve(self, R: np.ndarray) -> np.ndarray:
        """``H_u⁻¹ r_u`` for every column.

        Parameters
        ----------
        R : numpy.ndarray
            ``U × n``, or ``n`` (the same right-hand side for every column).

        Returns
        -------
        numpy.ndarray
            ``U × n``.
        """
        raise NotImplementedError

    def coupled_block(self, sel: np.ndarray) -> np.ndarray:
        """``Σ_u (H_u⁻¹)[sel, sel]``.

        Parameters
        ----------
        sel : numpy.ndarray of int
            The coupled variables of a column.

        Returns
        -------
        numpy.ndarray
            Dense, ``len(sel) × len(sel)``.
        """
        raise NotImplementedError


# --- dense columns ------------------------------------------------------------------------


class DenseColumns(ColumnKernel):
    """``G`` with two entries per row: ``alpha_k v[a_k] − beta_k v[b_k] ≤ 0``.

    Parameters
    ----------
    n_vars : int
        ``n``: the variables of a column.
    left, right : numpy.ndarray of int
        ``a_k`` and ``b_k``, in ``0 … n − 1``: ``m`` of each, one per row.
    alpha, beta : numpy.ndarray
        Positive coefficients, ``m`` of each.
    """

    def __init__(
        self, n_vars: int, left: ArrayLike, right: ArrayLike, alpha: ArrayLike, beta: ArrayLike
    ) -> None:
        self.n_vars = int(n_vars)
        left = np.asarray(left, dtype=np.int64)
        right = np.asarray(right, dtype=np.int64)
        alpha = np.asarray(alpha, dtype=float)
        beta = np.asarray(beta, dtype=float)
        self.n_rows = P = left.size
        k = np.arange(P)
        n = self.n_vars
        self.G = sp.csr_matrix(
            (
                np.concatenate([alpha, -beta]),
                (np.concatenate([k, k]), np.concatenate([left, right])),
            ),
            shape=(P, n),
        )
        self.GT = self.G.T.tocsr()
        # H_u's diagonal: Σ_k d_k (α_k² at a_k, β_k² at b_k); off-diagonal: −α_k β_k d_k at
        # (a_k, b_k) and (b_k, a_k)
        self._diag = sp.csr_matrix(
            (
                np.concatenate([alpha**2, beta**2]),
                (np.concatenate([left, right]), np.concatenate([k, k])),
            ),
            shape=(n, P),
        ).T.tocsr()
        # off-diagonal: one column per unordered pair {a_k, b_k} (both directions of a
        # neighbour pair land on it), written to (a, b) and (b, a) after the product; a
        # product onto all n² positions wrote a U × n² dense array per iteration (10 % of a
        # run at 2⁸ inputs)
        pair_low, pair_high = np.minimum(left, right), np.maximum(left, right)
        pairs, pair_of_row = np.unique(pair_low * n + pair_high, return_inverse=True)
        self._off = sp.csr_matrix((-alpha * beta, (k, pair_of_row.ravel())), shape=(P, pairs.size))
        low, high = pairs // n, pairs % n
        self._off_positions = (low * n + high, high * n + low)
        self._diag_positions = np.arange(n) * (n + 1)

    def apply(self, V: np.ndarray) -> np.ndarray:
        """``G v_u`` for every column, by one sparse product."""
        return np.asarray(self.G @ V.T).T

    def apply_t(self, Z: np.ndarray) -> np.ndarray:
        """``Gᵀ z_u`` for every column, by one sparse product."""
        return np.asarray(self.GT @ Z.T).T

    def column_rows(self) -> tuple[sp.csr_matrix, None]:
        """``G`` itself: no auxiliary variables.

        Returns
        -------
        scipy.sparse.csr_matrix
            ``m × n``: the rows ``≤ 0`` (see :meth:`ColumnKernel.column_rows`).
        None
            No equality rows.
        """
        return self.G, None

    def factor(
        self, D: np.ndarray, E: np.ndarray, stop: Callable[[], bool] | None = None
    ) -> _DenseFactor:
        """Forms every ``H_u`` densely and inverts it in place: ``O(n³)`` per column.

        Returns
        -------
        ColumnFactor
            The inverses ``H_u⁻¹``, ``U × n × n``.

        Raises
        ------
        SingularBlock
            If a column's ``H_u`` is not positive definite even after a diagonal shift.
        """
        U, n = E.shape
        H = np.zeros((U, n, n))  # C order: LAPACK works on each column's matrix in place

        def form(lo: int, hi: int) -> None:
            flat = H[lo:hi].reshape(hi - lo, n * n)
            off = np.asarray(D[lo:hi] @ self._off)  # columns × (number of neighbour pairs)
            flat[:, self._off_positions[0]] = off
            flat[:, self._off_positions[1]] = off
            flat[:, self._diag_positions] = np.asarray(D[lo:hi] @ self._diag) + E[lo:hi]

        # one inversion (dense_inverse) per column in every iteration: numpy's batched LU
        # inverse in the early iterations was slower over a whole run (PD-DP with a
        # Dirichlet prior on 2⁷ databases: 3.6–3.8 s against 3.2–3.6 s in six runs each;
        # metric privacy on a 10 × 10 map: 17.2–18.7 s against 16.6–17.6 s). Formed and
        # inverted in place, the cores sharing the columns, where LAPACK can be called
        # without the interpreter lock (dense_inverse): PD-DP on 2⁸ databases, 0.58 s →
        # 0.22 s per iteration
        def check() -> None:
            if stop is not None and stop():
                raise TimeLimitReached("the time limit passed during a factorisation")

        if not dense_inverse.AVAILABLE:  # pragma: no cover - scipy without Cython exports
            form(0, U)
            for u in range(U):
                check()
                H[u] = _spd_inverse(H[u])
            return _DenseFactor(H)

        def form_and_invert(lo: int, hi: int) -> tuple[list[int], np.ndarray]:
            # each chunk also sums its inverses while they are in the cache: the Schur
            # complement of the row sums is their sum (a second pass over the stack read
            # 115 MB per iteration at 3⁵ databases, 6.5 ms). A chunk is formed and inverted
            # STOP_EVERY columns at a time, asking ``stop`` in between (the same values:
            # the columns are independent, the sum is taken in the same order): on a 20 × 20
            # map one factorisation was 40 s on a loaded machine, far past a 20 s limit
            partial = np.zeros((n, n))
            failed: list[int] = []
            for a in range(lo, hi, STOP_EVERY):
                b = min(hi, a + STOP_EVERY)
                check()
                form(a, b)
                failed += dense_inverse.invert_spd_range(H, a, b, partial)
            return failed, partial

        chunks = dense_inverse.for_chunks(form_and_invert, U, U * float(n) ** 3)
        total = sum((partial for _, partial in chunks[1:]), chunks[0][1])
        for u in (u for failed, _ in chunks for u in failed):
            H[u] = 0.0  # the failed inversion left the column overwritten: form it again
            form(u, u + 1)
            H[u] = _spd_inverse(H[u])
            total += H[u]
        return _DenseFactor(H, total)


def _spd_inverse(H: np.ndarray) -> np.ndarray:
    """The inverse of a symmetric positive definite matrix by Cholesky (LAPACK potrf/potri),
    with a growing diagonal shift if the factorisation breaks down (interior-point normal
    matrices are nearly singular close to the optimum)."""
    shift = 0.0
    scale = float(np.max(np.abs(np.diagonal(H)))) or 1.0
    for _ in range(6):
        factor, info = lapack.dpotrf(H + shift * np.eye(H.shape[0]) if shift else H, lower=1)
        if info == 0:
            inverse, info = lapack.dpotri(factor, lower=1)
            if info == 0:
                lower = np.tril(inverse)
                full = lower + lower.T  # one triangle copy, not two (7 % of a run at 2⁸)
                full[np.diag_indices_from(full)] = np.diagonal(lower)
                return full
        shift = scale * (1e-14 if shift == 0.0 else shift / scale * 100.0)
    raise SingularBlock("a column's normal matrix is singular")


class _DenseFactor(ColumnFactor):
    def __init__(self, inverse: np.ndarray, total: np.ndarray | None = None):
        self.inverse = inverse
        self.total = total  # Σ_u H_u⁻¹ when the factorisation summed it on the way

    def solve(self, R: np.ndarray) -> np.ndarray:
        return dense_inverse.multiply_stack(self.inverse, R)

    def coupled_block(self, sel: np.ndarray) -> np.ndarray:
        if sel.size == self.inverse.shape[1] and np.array_equal(sel, np.arange(sel.size)):
            return self.total.copy() if self.total is not None else self.inverse.sum(axis=0)
        return self.inverse[:, sel][:, :, sel].sum(axis=0)


# --- diagonal plus low rank ---------------------------------------------------------------


class DiagonalPlusLowRank(ColumnKernel):
    """``G = A + L Rᵀ``: ``A`` with at most one nonzero per row, ``L`` (``m × k``) and
    ``R`` (``n × k``) dense and thin.

    Parameters
    ----------
    n_vars : int
        ``n``: the variables of a column.
    a_index : numpy.ndarray of int
        The variable of row ``i``'s nonzero of ``A`` (``-1``: none); ``m`` entries.
    a_value : numpy.ndarray
        Its value.
    L : numpy.ndarray
        ``m × k``.
    R : numpy.ndarray
        ``n × k``.
    """

    def __init__(
        self, n_vars: int, a_index: ArrayLike, a_value: ArrayLike, L: ArrayLike, R: ArrayLike
    ) -> None:
        self.n_vars = int(n_vars)
        self.a_index = np.asarray(a_index, dtype=np.int64)
        self.a_value = np.asarray(a_value, dtype=float)
        self.L = np.atleast_2d(np.asarray(L, dtype=float).reshape(self.a_index.size, -1))
        self.R = np.asarray(R, dtype=float).reshape(self.n_vars, -1)
        self.n_rows = self.a_index.size
        has = self.a_index >= 0
        rows = np.flatnonzero(has)
        self.A = sp.csr_matrix(
            (self.a_value[has], (rows, self.a_index[has])), shape=(self.n_rows, self.n_vars)
        )
        self.AT = self.A.T.tocsr()
        self._a_sq = sp.csr_matrix(
            (self.a_value[has] ** 2, (rows, self.a_index[has])), shape=(self.n_rows, self.n_vars)
        )

    def apply(self, V: np.ndarray) -> np.ndarray:
        """``A v_u + L (Rᵀ v_u)``: one sparse product and two thin dense ones."""
        # summed as m × U and returned transposed: adding the sparse product's transpose to
        # a C-ordered array mixed the orders (a strided loop over U × m)
        out = np.asarray(self.A @ V.T)
        out += self.L @ (V @ self.R).T
        return out.T

    def apply_t(self, Z: np.ndarray) -> np.ndarray:
        """``Aᵀ z_u + R (Lᵀ z_u)``: one sparse product and two thin dense ones."""
        out = np.asarray(self.AT @ Z.T)
        out += self.R @ (Z @ self.L).T
        return out.T

    def column_rows(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """``k`` auxiliaries ``t = Rᵀv``: the rows ``A v + L t ≤ 0`` and ``Rᵀv − t = 0``.

        Returns
        -------
        scipy.sparse.csr_matrix
            ``m × (n + k)``: ``[A, L]`` (see :meth:`ColumnKernel.column_rows`).
        scipy.sparse.csr_matrix
            ``k × (n + k)``: ``[Rᵀ, −I]``.
        """
        # G v = A v + L (Rᵀ v): auxiliaries t = Rᵀ v, rows A v + L t ≤ 0, Rᵀ v − t = 0
        k = self.L.shape[1]
        upper = sp.hstack([self.A, sp.csr_matrix(self.L)]).tocsr()
        equal = sp.hstack([sp.csr_matrix(self.R.T), -sp.identity(k)]).tocsr()
        return upper, equal

    def factor(
        self, D: np.ndarray, E: np.ndarray, stop: Callable[[], bool] | None = None
    ) -> _LowRankFactor:
        """Woodbury on ``H_u = Λ_u + Y_u M_u Y_uᵀ``: ``O(n k²)`` per column.

        Returns
        -------
        ColumnFactor
            ``Λ_u``, ``Λ_u⁻¹Y_u`` (``n × 2k``) and the inverse ``2k × 2k`` capacitance matrix
            of every column.

        Raises
        ------
        SingularBlock
            If a column's capacitance matrix is singular.
        """
        # H = AᵀDA + E + AᵀDL Rᵀ + R LᵀDA + R (LᵀDL) Rᵀ = Λ + Y M Yᵀ with
        # Λ = AᵀDA + E (diagonal: one nonzero per row of A), Y = [R, AᵀDL],
        # M = [[LᵀDL, I], [I, 0]], M⁻¹ = [[0, I], [I, −LᵀDL]]. Y is stored transposed
        # (U × 2k × n): the products then run over n contiguous entries (with n last and 2k
        # innermost they took 5 ms against 0.8 ms at k = 1,000, a third of a PML run)
        U = D.shape[0]
        k = self.L.shape[1]
        lam = np.asarray(D @ self._a_sq) + E  # U × n
        ADL = np.stack([np.asarray((D * self.L[:, j]) @ self.A) for j in range(k)], axis=1)
        LDL = np.einsum("ui,ij,il->ujl", D, self.L, self.L)  # U × k × k
        Yt = np.concatenate([np.broadcast_to(self.R.T, (U, k, self.n_vars)), ADL], axis=1)
        Minv = np.zeros((U, 2 * k, 2 * k))
        eye = np.eye(k)
        Minv[:, :k, k:] = eye
        Minv[:, k:, :k] = eye
        Minv[:, k:, k:] = -LDL
        LYt = np.ascontiguousarray(Yt / lam[:, None, :])  # (Λ⁻¹ Y)ᵀ, whatever ADL's order
        cap = Minv + np.einsum("uai,ubi->uab", Yt, LYt)  # capacitance M⁻¹ + Yᵀ Λ⁻¹ Y
        try:
            cap_inv = np.linalg.inv(cap)
        except np.linalg.LinAlgError as exc:
            raise SingularBlock("a column's capacitance matrix is singular") from exc
        return _LowRankFactor(lam, LYt, cap_inv)


class _LowRankFactor(ColumnFactor):
    """``H⁻¹ = Λ⁻¹ − Λ⁻¹Y C⁻¹ YᵀΛ⁻¹`` (Woodbury), ``C = M⁻¹ + YᵀΛ⁻¹Y``; ``(Λ⁻¹Y)ᵀ`` is
    held as ``U × 2k × n``."""

    def __init__(self, lam, LYt, cap_inv):
        self.lam = lam
        self.LYt = LYt
        self.cap_inv = cap_inv

    def solve(self, R: np.ndarray) -> np.ndarray:
        if R.ndim == 1:
            R = np.broadcast_to(R, self.lam.shape)
        t = np.einsum("uai,ui->ua", self.LYt, R)
        t = np.einsum("uab,ub->ua", self.cap_inv, t)
        return R / self.lam - np.einsum("uai,ua->ui", self.LYt, t)

    def coupled_block(self, sel: np.ndarray) -> np.ndarray:
        everything = sel.size == self.lam.shape[1] and np.array_equal(sel, np.arange(sel.size))
        Pt = self.LYt if everything else self.LYt[:, :, sel]  # U × 2k × c
        Qt = np.einsum("uab,uai->ubi", self.cap_inv, Pt)  # (P C⁻¹)ᵀ
        c = sel.size
        block = _gram(Qt, Pt)
        block[np.diag_indices(c)] += (1.0 / self.lam[:, sel]).sum(axis=0)
        return block


def _gram(Qt: np.ndarray, Pt: np.ndarray) -> np.ndarray:
    """``−Σ_u Q_u P_uᵀ`` (from ``U × r × c`` transposes) as one matrix product (BLAS)."""
    U, r, c = Qt.shape
    Qm = Qt.transpose(2, 0, 1).reshape(c, U * r)
    Pm = Pt.transpose(2, 0, 1).reshape(c, U * r)
    return -(Qm @ Pm.T)


# --- arrow columns --------------------------------------------------------------------------


class ArrowColumns(ColumnKernel):
    """Rows ``a_i v[x_i] + l_i v[aux] ≤ 0``: one mechanism entry and the column's auxiliary
    variable (the last one) per row, at most two rows per entry.

    Parameters
    ----------
    n_entries : int
        Mechanism entries per column (the auxiliary variable is ``v[n_entries]``).
    entry : numpy.ndarray of int
        ``x_i``, in ``0 … n_entries − 1``, each at most twice; ``m`` entries, one per row.
    a, l : numpy.ndarray
        The coefficients ``a_i`` and ``l_i``, ``m`` of each.

    Raises
    ------
    ValueError
        If an entry has more than two rows.
    """

    def __init__(self, n_entries: int, entry: ArrayLike, a: ArrayLike, l: ArrayLike) -> None:
        self.S = int(n_entries)
        self.n_vars = self.S + 1
        self.entry = np.asarray(entry, dtype=np.int64)
        self.a = np.asarray(a, dtype=float)
        self.l = np.asarray(l, dtype=float)
        self.n_rows = self.entry.size
        counts = np.bincount(self.entry, minlength=self.S)
        if counts.max(initial=0) > 2:
            raise ValueError("ArrowColumns takes at most two rows per entry")
        order = np.argsort(self.entry, kind="stable")
        first = np.full(self.S, -1)
        second = np.full(self.S, -1)
        for i in order:
            x = self.entry[i]
            if first[x] < 0:
                first[x] = i
            else:
                second[x] = i
        self._first, self._second = first, second
        rows = np.arange(self.n_rows)
        self.A = sp.csr_matrix((self.a, (rows, self.entry)), shape=(self.n_rows, self.S))
        self.AT = self.A.T.tocsr()
        self._sum = sp.csr_matrix(
            (np.ones(self.n_rows), (self.entry, rows)), shape=(self.S, self.n_rows)
        )

    def apply(self, V: np.ndarray) -> np.ndarray:
        """``a_i v_u[x_i] + l_i v_u[aux]`` for every row ``i`` and column ``u``."""
        return np.asarray(self.A @ V[:, : self.S].T).T + V[:, self.S : self.S + 1] * self.l

    def apply_t(self, Z: np.ndarray) -> np.ndarray:
        """``Aᵀ z_u`` on the entries and ``lᵀ z_u`` on the auxiliary variable."""
        out = np.empty((Z.shape[0], self.n_vars))
        out[:, : self.S] = np.asarray(self.AT @ Z.T).T
        out[:, self.S] = Z @ self.l
        return out

    def column_rows(self) -> tuple[sp.csr_matrix, None]:
        """``[A, l]``: the auxiliary is the column's last variable, so no equality rows.

        Returns
        -------
        scipy.sparse.csr_matrix
            ``m × n`` (see :meth:`ColumnKernel.column_rows`).
        None
            No equality rows.
        """
        return sp.hstack([self.A, sp.csr_matrix(self.l[:, None])]).tocsr(), None

    def factor(
        self, D: np.ndarray, E: np.ndarray, stop: Callable[[], bool] | None = None
    ) -> _ArrowFactor:
        """Eliminates the auxiliary: ``H_u⁻¹`` is a diagonal plus a rank-one term, ``O(n)``.

        Returns
        -------
        ColumnFactor
            Each ``H_u⁻¹`` as a diagonal plus a rank-one term (``2n − 1`` numbers per column).
        """
        S = self.S
        ES, ea = E[:, :S], E[:, S]
        lam = np.asarray((D * self.a**2) @ self._sum.T) + ES  # U × S
        beta = np.asarray((D * (self.a * self.l)) @ self._sum.T)  # W–aux coupling
        # σ = e_aux + Σ_x [e_x Σ_{i∋x} d_i l_i² + Σ_{i<j∋x} d_i d_j (a_i l_j − a_j l_i)²] / Λ_x
        # (Lagrange's identity: the aux's Schur complement as a sum of positive terms)
        dl2 = np.asarray((D * self.l**2) @ self._sum.T)
        num = ES * dl2
        pair = self._second >= 0
        if pair.any():
            i, j = self._first[pair], self._second[pair]
            cross = (self.a[i] * self.l[j] - self.a[j] * self.l[i]) ** 2
            num[:, pair] += D[:, i] * D[:, j] * cross
        sigma = ea + np.sum(num / lam, axis=1)
        omega = beta / lam
        return _ArrowFactor(lam, omega, sigma)


class _ArrowFactor(ColumnFactor):
    """``H⁻¹ = diag(1/Λ, 0) + ψψᵀ/σ`` with ``ψ = (Λ⁻¹β, −1)``."""

    def __init__(self, lam, omega, sigma):
        self.lam, self.omega, self.sigma = lam, omega, sigma

    def solve(self, R: np.ndarray) -> np.ndarray:
        U, S = self.lam.shape
        if R.ndim == 1:
            R = np.broadcast_to(R, (U, S + 1))
        psi_r = np.einsum("ui,ui->u", self.omega, R[:, :S]) - R[:, S]
        coef = psi_r / self.sigma
        out = np.empty((U, S + 1))
        out[:, :S] = R[:, :S] / self.lam + self.omega * coef[:, None]
        out[:, S] = -coef
        return out

    def coupled_block(self, sel: np.ndarray) -> np.ndarray:
        U, S = self.lam.shape
        psi = np.concatenate([self.omega, -np.ones((U, 1))], axis=1)[:, sel]
        scaled = psi / np.sqrt(self.sigma)[:, None]
        block = scaled.T @ scaled
        diag = np.concatenate([1.0 / self.lam, np.zeros((U, 1))], axis=1)[:, sel].sum(axis=0)
        block[np.diag_indices(sel.size)] += diag
        return block
