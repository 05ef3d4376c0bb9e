"""Per-column normal matrices of sparse pair rows, factorised in block-tridiagonal form.

When every privacy row ties two entries of a column along the edges of a sparse graph (the
cells of a map and their neighbours, a road network, a spanner, Hamming neighbours), the
normal matrix of column ``u``,

    ``H_u = Gᵀ diag(d_u) G + diag(e_u)``,

has the graph's sparsity pattern. Numbered by reverse Cuthill–McKee ([George-Liu], ch. 4;
:func:`scipy.sparse.csgraph.reverse_cuthill_mckee`), its nonzeros lie within a band of
half-width ``b`` (``b = k`` for the 4-neighbour grid of ``k × k`` cells, which has
``n = k²`` cells). Cut into blocks of order ``b``, every ``H_u`` is **block tridiagonal**,
with the same block structure for every column. So all the columns are factorised together,
block step by block step, each step a batch of small dense operations over the columns
(numpy's stacked Cholesky, inverse and matrix products; the threads of
:mod:`~privopt.methods.block_ipm.dense_inverse` share the columns):

* **factor**: ``L_ii = chol(H_ii − L_{i,i−1} L_{i,i−1}ᵀ)``, ``L_{i+1,i} = H_{i+1,i} L_iiᵀ⁻¹``
  — ``O(n b²)`` per column instead of the dense ``O(n³)``, and ``O(n b)`` memory per column
  instead of ``n²``;
* **solve**: block forward and back substitution, ``O(n b)`` per column;
* **the Schur complement on the row sums**, ``Σ_u H_u⁻¹``: through the block LDLᵀ form of
  the factor, a block forward substitution on the identity and a block back substitution
  for the lower block triangle of ``H_u⁻¹`` only (``H_u⁻¹`` is symmetric), ``≈ 2 b n²``
  flops per column against ``n³`` for a dense Cholesky inverse; the inverses are summed
  chunk by chunk of columns and never held together.

The interior point, its certificate and its polish are unchanged
(:mod:`~privopt.methods.block_ipm.interior_point`): the kernel only changes how the same
Newton systems are solved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from privopt.methods.base import TimeLimitReached
from privopt.methods.block_ipm import dense_inverse
from privopt.methods.block_ipm.kernels import ColumnFactor, DenseColumns, SingularBlock
from privopt.methods.block_ipm.ordering import SCHUR_CHUNK_BYTES, band_order

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import ArrayLike

__all__ = ["BandColumns"]

#: The work of one ``b × b`` by block-row product (flops) from which the Schur complement's
#: back substitution calls BLAS once per column to update in place, rather than forming the
#: products of all the chunk's columns in one batched ``matmul`` and subtracting them (a
#: foreign call costs a few microseconds; a product of 10⁶ flops takes about 25).
GEMM_CALL_FLOPS = 1e6

#: Attempts, each with a 100 times larger diagonal shift, before a block that is not
#: positive definite to round-off is declared singular (as for the dense kernel).
SHIFT_ATTEMPTS = 6


class BandColumns(DenseColumns):
    """Pair rows ``alpha_k v[a_k] − beta_k v[b_k] ≤ 0`` on a sparse graph, whose normal
    matrices are factorised in block-tridiagonal form (see the module docstring).

    Parameters
    ----------
    n_vars : int
        ``n``: the variables of a column.
    left, right : numpy.ndarray of int
        ``a_k`` and ``b_k``, in ``0 … n − 1``: one of each per row.
    alpha, beta : numpy.ndarray
        Positive coefficients, one of each per row.
    order : numpy.ndarray of int, optional
        The numbering (:func:`band_order`); computed when not given.
    """

    def __init__(
        self,
        n_vars: int,
        left: ArrayLike,
        right: ArrayLike,
        alpha: ArrayLike,
        beta: ArrayLike,
        order: np.ndarray | None = None,
    ) -> None:
        super().__init__(n_vars, left, right, alpha, beta)
        n = self.n_vars
        left = np.asarray(left, dtype=np.int64)
        right = np.asarray(right, dtype=np.int64)
        if order is None:
            order, width = band_order(n, left, right)
        else:
            order = np.asarray(order, dtype=np.int64)
            position = np.empty(n, dtype=np.int64)
            position[order] = np.arange(n)
            width = max(int(np.max(np.abs(position[left] - position[right]), initial=1)), 1)
        self.order = order
        self.position = np.empty(n, dtype=np.int64)
        self.position[order] = np.arange(n)
        self.block = b = width
        self.n_blocks = nb = -(-n // b)
        self.padded = nb * b
        # every column's blocks live in one flat row: nb diagonal blocks, then nb − 1
        # sub-diagonal blocks (block i + 1 below block i), each b × b, C order
        self._sub_offset = nb * b * b
        self.flat_size = self._sub_offset + (nb - 1) * b * b
        pos = self.position
        # the diagonal of H (and 1 on the padding, which is decoupled from everything)
        diagonal_at = np.arange(self.padded)
        self._diag_target = (diagonal_at // b) * b * b + (diagonal_at % b) * (b + 1)
        # the off-diagonal entries: one per unordered pair (DenseColumns' _off columns)
        low = self._off_positions[0] // n
        high = self._off_positions[0] % n
        row = np.maximum(pos[low], pos[high])
        col = np.minimum(pos[low], pos[high])
        row_block, col_block = row // b, col // b
        same = row_block == col_block
        within_r, within_c = row % b, col % b
        diag_flat = row_block * b * b
        sub_flat = self._sub_offset + col_block * b * b + within_r * b + within_c
        pair_index = np.arange(low.size)
        self._off_target = np.concatenate(
            [
                np.where(same, diag_flat + within_r * b + within_c, sub_flat),
                (diag_flat + within_c * b + within_r)[same],
            ]
        )
        self._off_source = np.concatenate([pair_index, pair_index[same]])

    def _blocks(self, D: np.ndarray, E: np.ndarray) -> np.ndarray:
        """Every column's ``H_u`` in the flat block layout (``U × flat_size``)."""
        U = E.shape[0]
        flat = np.zeros((U, self.flat_size))
        diagonal = np.ones((U, self.padded))
        diagonal[:, : self.n_vars] = (np.asarray(D @ self._diag) + E)[:, self.order]
        flat[:, self._diag_target] = diagonal
        if self._off_source.size:
            off = np.asarray(D @ self._off)
            flat[:, self._off_target] = off[:, self._off_source]
        return flat

    def factor(
        self, D: np.ndarray, E: np.ndarray, stop: Callable[[], bool] | None = None
    ) -> _BandFactor:
        """Factorise every ``H_u`` by block-tridiagonal Cholesky (module docstring); ``stop``
        is asked between groups of columns here and in the factor's
        :meth:`~_BandFactor.coupled_block`.

        Returns
        -------
        ColumnFactor
            For :meth:`ColumnFactor.solve` and :meth:`ColumnFactor.coupled_block`.

        Raises
        ------
        SingularBlock
            If a block is not positive definite even after a diagonal shift.
        TimeLimitReached
            When ``stop()`` said so.
        """
        U = E.shape[0]
        b, nb = self.block, self.n_blocks
        inverse = np.empty((U, nb, b, b))
        below = np.empty((U, max(nb - 1, 0), b, b))

        # the matrices are formed a few columns at a time (a whole range's blocks would
        # double the factors' memory for a moment)
        step = max(1, int(SCHUR_CHUNK_BYTES // (8.0 * self.flat_size)))

        def factor_range(lo: int, hi: int) -> None:
            for first in range(lo, hi, step):
                _check(stop)
                last = min(hi, first + step)
                flat = self._blocks(D[first:last], E[first:last])
                diagonal = flat[:, : self._sub_offset].reshape(last - first, nb, b, b)
                sub = flat[:, self._sub_offset :].reshape(last - first, nb - 1, b, b)
                for i in range(nb):
                    block = diagonal[:, i]
                    if i > 0:
                        previous = below[first:last, i - 1]
                        block -= previous @ np.swapaxes(previous, 1, 2)
                    inverse[first:last, i] = np.linalg.inv(_cholesky_stack(block))
                    if i < nb - 1:
                        below[first:last, i] = sub[:, i] @ np.swapaxes(inverse[first:last, i], 1, 2)

        dense_inverse.for_chunks(factor_range, U, U * float(self.padded) * b * b)
        return _BandFactor(self, inverse, below, D, E, stop)

    def coupling_blocks(self, D: np.ndarray, E: np.ndarray) -> np.ndarray:
        """The sub-diagonal blocks ``H_{i+1,i}`` of a few columns' normal matrices.

        Parameters
        ----------
        D, E : numpy.ndarray
            The rows of :meth:`factor`'s ``D`` and ``E`` for those columns.

        Returns
        -------
        numpy.ndarray
            ``c × (n_blocks − 1) × b × b``, in the band numbering.
        """
        flat = self._blocks(D, E)
        b = self.block
        return flat[:, self._sub_offset :].reshape(E.shape[0], self.n_blocks - 1, b, b)


def _check(stop: Callable[[], bool] | None) -> None:
    if stop is not None and stop():
        raise TimeLimitReached("the time limit passed during a factorisation")


def _cholesky_stack(A: np.ndarray) -> np.ndarray:
    """The lower Cholesky factors of a stack of symmetric matrices; a matrix that is not
    positive definite to round-off is shifted (``10⁻¹⁴`` of its largest diagonal entry,
    then 100 times more each attempt) as the dense kernel does."""
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        pass
    out = np.empty_like(A)
    eye = np.eye(A.shape[-1])
    for u in range(A.shape[0]):
        scale = float(np.max(np.abs(np.diagonal(A[u])))) or 1.0
        shift = 0.0
        for _ in range(SHIFT_ATTEMPTS):
            try:
                out[u] = np.linalg.cholesky(A[u] + shift * eye if shift else A[u])
                break
            except np.linalg.LinAlgError:
                shift = scale * 1e-14 if shift == 0.0 else shift * 100.0
        else:
            raise SingularBlock("a column's normal matrix is singular")
    return out


class _BandFactor(ColumnFactor):
    """Every column's block-tridiagonal Cholesky factor: the inverses of the diagonal
    blocks ``L_ii⁻¹`` and the sub-diagonal blocks ``L_{i+1,i}``, in the band numbering; and
    the scalings it was formed from (not copied), whose sub-diagonal blocks ``H_{i+1,i}`` the
    Schur complement re-forms a few columns at a time."""

    def __init__(
        self,
        kernel: BandColumns,
        inverse: np.ndarray,
        below: np.ndarray,
        D: np.ndarray,
        E: np.ndarray,
        stop: Callable[[], bool] | None = None,
    ):
        self.kernel = kernel
        self.inverse = inverse
        self.below = below
        self.D, self.E = D, E
        self.stop = stop

    def solve(self, R: np.ndarray) -> np.ndarray:
        """``H_u⁻¹ r_u`` for every column, by block forward and back substitution."""
        K = self.kernel
        U, nb, b = self.inverse.shape[0], K.n_blocks, K.block
        R = np.broadcast_to(R, (U, K.n_vars)) if R.ndim == 1 else R
        out = np.empty((U, K.n_vars))

        def solve_range(lo: int, hi: int) -> None:
            x = np.zeros((hi - lo, K.padded))
            x[:, : K.n_vars] = R[lo:hi][:, K.order]
            x = x.reshape(hi - lo, nb, b)
            inverse, below = self.inverse[lo:hi], self.below[lo:hi]
            for i in range(nb):  # L y = r
                r = x[:, i]
                if i > 0:
                    r = r - np.einsum("uab,ub->ua", below[:, i - 1], x[:, i - 1])
                x[:, i] = np.einsum("uab,ub->ua", inverse[:, i], r)
            for i in range(nb - 1, -1, -1):  # Lᵀ x = y
                r = x[:, i]
                if i < nb - 1:
                    r = r - np.einsum("uba,ub->ua", below[:, i], x[:, i + 1])
                x[:, i] = np.einsum("uba,ub->ua", inverse[:, i], r)
            out[lo:hi][:, K.order] = x.reshape(hi - lo, K.padded)[:, : K.n_vars]

        dense_inverse.for_chunks(solve_range, U, U * float(K.padded) * b * 4)
        return out

    def coupled_block(self, sel: np.ndarray) -> np.ndarray:
        """``Σ_u (H_u⁻¹)[sel, sel]``, each inverse formed chunk by chunk of columns (module
        docstring) and summed.
        """
        K = self.kernel
        U, nb, b, N = self.inverse.shape[0], K.n_blocks, K.block, K.padded
        chunk = max(1, int(SCHUR_CHUNK_BYTES // (8.0 * N * N)))

        def sum_range(lo: int, hi: int) -> np.ndarray:
            lower = np.zeros((N, N))  # the lower block triangle of Σ H_u⁻¹ (band numbering)
            # one work array for every chunk of the range: a fresh one per chunk was paged
            # in again each time (a 50 × 50 map: 7 of 45 ms per column)
            work = np.empty((min(chunk, hi - lo), nb, b, N))
            for start in range(lo, hi, chunk):
                _check(self.stop)
                end = min(hi, start + chunk)
                coupling = K.coupling_blocks(self.D[start:end], self.E[start:end])
                _add_inverses(self.inverse[start:end], self.below[start:end], coupling, lower, work)
            return lower

        parts = dense_inverse.for_chunks(sum_range, U, U * 2.0 * b * N * N)
        lower = parts[0]
        for part in parts[1:]:
            lower += part
        # the strictly lower blocks are mirrored; the diagonal blocks were formed whole
        diagonal = [lower[i * b : (i + 1) * b, i * b : (i + 1) * b].copy() for i in range(nb)]
        for i in range(nb):
            lower[i * b : (i + 1) * b, i * b : (i + 1) * b] = 0.0
        full = lower + lower.T
        for i, block in enumerate(diagonal):
            full[i * b : (i + 1) * b, i * b : (i + 1) * b] = 0.5 * (block + block.T)
        full = full[: K.n_vars, : K.n_vars]
        # back to the variables' numbering, then the coupled ones
        total = full[np.ix_(K.position, K.position)]
        if sel.size == K.n_vars and np.array_equal(sel, np.arange(sel.size)):
            return total
        return total[np.ix_(sel, sel)]


def _add_inverses(
    inverse: np.ndarray,
    below: np.ndarray,
    coupling: np.ndarray,
    lower: np.ndarray,
    work: np.ndarray,
) -> None:
    """Add the lower block triangle of ``H_u⁻¹`` of a few columns to ``lower``.

    The block LDLᵀ form of the factor, ``H = (I + Ľ) P (I + Ľ)ᵀ`` with the pivots
    ``P_i = L_ii L_iiᵀ`` and ``Ľ_{i+1,i} = H_{i+1,i} P_i⁻¹``, gives
    ``H⁻¹ = (I + Ľ)⁻ᵀ P⁻¹ (I + Ľ)⁻¹`` (block LDLᵀ factorisation, [Higham-ASNA] ch. 13).
    With ``W = (I + Ľ)⁻¹`` (block lower triangular), ``Z = P⁻¹ W`` has block rows

        ``Z_i = K_i Z_{i−1}`` on the first ``i`` block columns, ``K_i = −P_i⁻¹ H_{i,i−1}``,
        and ``P_i⁻¹`` on block column ``i``;

    and ``Y = H⁻¹ = Z − Ľᵀ Y`` has block rows ``Y_i = Z_i − N_i Y_{i+1}`` with
    ``N_i = P_i⁻¹ H_{i+1,i}ᵀ = L_ii⁻ᵀ L_{i+1,i}ᵀ``. Restricted to the first ``i + 1`` block
    columns, block row ``i`` of ``Y`` needs only ``Y_{i+1}`` restricted to the same columns,
    so the lower block triangle is formed alone: one product of a ``b × b`` block by a block
    row per step forward and one back, ``2 b n²`` flops per column (the ``b × b`` products
    are negligible), each back step a single ``dgemm`` that updates ``Z_i`` in place
    (:func:`~privopt.methods.block_ipm.dense_inverse.multiply_add`).

    Parameters
    ----------
    inverse : numpy.ndarray
        ``c × nb × b × b``: ``L_ii⁻¹``.
    below : numpy.ndarray
        ``c × (nb − 1) × b × b``: ``L_{i+1,i}``.
    coupling : numpy.ndarray
        ``c × (nb − 1) × b × b``: ``H_{i+1,i}``.
    lower : numpy.ndarray
        ``nb·b × nb·b``; the lower block triangles are added to it.
    work : numpy.ndarray
        At least ``c × nb × b × nb·b``; overwritten.
    """
    c, nb, b = inverse.shape[0], inverse.shape[1], inverse.shape[2]
    inverse_t = np.swapaxes(inverse, 2, 3)
    pivot_inverse = inverse_t @ inverse  # P_i⁻¹ = L_ii⁻ᵀ L_ii⁻¹
    step = -(pivot_inverse[:, 1:] @ coupling)  # K_i, i ≥ 1
    back = inverse_t[:, :-1] @ np.swapaxes(below, 2, 3)  # N_i, i < nb − 1
    Z = work[:c]
    Z[:, 0, :, :b] = pivot_inverse[:, 0]
    for i in range(1, nb):
        width = i * b
        np.matmul(step[:, i - 1], Z[:, i - 1, :, :width], out=Z[:, i, :, :width])
        Z[:, i, :, width : width + b] = pivot_inverse[:, i]
    last = (nb - 1) * b
    lower[last:, :] += Z[:, nb - 1].sum(axis=0)
    product = None
    for i in range(nb - 2, -1, -1):
        width = (i + 1) * b
        if 2.0 * b * b * width >= GEMM_CALL_FLOPS:
            for u in range(c):
                dense_inverse.multiply_add(
                    back[u, i], Z[u, i + 1, :, :width], Z[u, i, :, :width], -1.0, 1.0
                )
        else:  # a call per column would cost more than its product: one batched product
            if product is None:
                product = np.empty((c, b, width))
            np.matmul(back[:, i], Z[:, i + 1, :, :width], out=product[:, :, :width])
            Z[:, i, :, :width] -= product[:, :, :width]
        lower[i * b : width, :width] += Z[:, i, :, :width].sum(axis=0)
