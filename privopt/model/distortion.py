"""Distortion functions ``d(y, u)`` on (input alphabet) × (output alphabet).

A :class:`Distortion` is a non-negative matrix ``d[y, u]`` (rows: inputs ``y``, columns:
outputs ``u``; the two alphabets may differ), plus its ``kind`` and parameters so that fast
paths can recognise structure (Hamming on databases, [Wang-Ying-Zhang] §2).
"""

from __future__ import annotations

__all__ = ["Distortion", "DISTORTION_KINDS"]

import math
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt.errors import InputError
from privopt.model._validate import (
    as_labels,
    as_positive_int,
    as_real_array,
    check_nonnegative,
)
from privopt.model.prior import MAX_MATERIALISED_DATABASES, database_digits
from privopt.resources import format_bytes, max_memory

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import ArrayLike

DISTORTION_KINDS = ("hamming", "absolute", "squared", "matrix")


class Distortion:
    """A distortion matrix ``d[y, u] ≥ 0``.

    Build one with the class methods :meth:`hamming`, :meth:`absolute`, :meth:`squared`,
    :meth:`from_matrix` or :meth:`database_hamming`.

    Parameters
    ----------
    matrix : array_like or None
        ``|Y| × |U|`` non-negative finite matrix. ``None`` only for a distortion kept
        symbolic, whose ``params`` give its shape (:meth:`database_hamming`).
    output_labels : sequence of str, optional
        Names of the outputs ``u``; default ``"0", "1", …``.
    kind : str
        Informational: how the matrix was made (one of :data:`DISTORTION_KINDS`; default
        ``"matrix"``).
    copy : bool
        ``False``: a float matrix is kept as it is instead of copied (for the builders that
        made it, e.g. a map's distances; the caller must not change it afterwards).
    **params
        Structure kept in :attr:`params` for the fast paths (:meth:`database_hamming` gives
        ``m``, ``n``, ``n_inputs``, ``n_outputs`` and ``database=True``). With
        ``matrix=None``, ``n_outputs`` is required, and ``n_inputs`` is read by :attr:`shape`.

    Raises
    ------
    InputError
        If the matrix is not a non-negative finite 2-d array (field ``distortion.matrix``),
        both it and ``n_outputs`` are missing, or the labels are not ``|U|`` distinct names
        (field ``distortion.output_labels``).
    """

    def __init__(
        self,
        matrix: ArrayLike | None,
        output_labels: Sequence | None = None,
        kind: str = "matrix",
        *,
        copy: bool = True,
        **params: Any,
    ) -> None:
        if matrix is not None:
            matrix = as_real_array(matrix, "distortion.matrix", ndim=2, copy=copy)
            check_nonnegative(matrix, "distortion.matrix")
            self.__dict__["matrix"] = matrix
            n_out = matrix.shape[1]
        elif "n_outputs" in params:
            n_out = params["n_outputs"]
        else:
            raise InputError(
                "missing: give a matrix d[y, u] (rows = inputs, columns = outputs) or use "
                "Distortion.hamming / absolute / squared / database_hamming",
                "distortion.matrix",
            )
        self.kind = kind
        self.params = params
        self.output_labels = (
            None
            if output_labels is None
            else as_labels(output_labels, n_out, "distortion.output_labels")
        )

    @cached_property
    def matrix(self) -> np.ndarray:
        """The dense ``|Y| × |U|`` matrix (built lazily for databases)."""
        m, n = self.params["m"], self.params["n"]
        if m**n > 2**14:
            raise InputError(
                f"a dense Hamming distortion on m**n = {m**n} databases would need "
                f"{(m**n) ** 2 * 8 / 2**30:.1f} GiB; use a structured fast path",
                "distortion",
            )
        digits = database_digits(m, n)
        out = np.zeros((m**n, m**n))
        for i in range(n):
            out += digits[:, i][:, None] != digits[:, i][None, :]
        return out

    @property
    def shape(self) -> tuple[int, int]:
        """``(|Y|, |U|)``; for a symbolic distortion, read from :attr:`params` without
        building the matrix."""
        if "matrix" in self.__dict__:
            return self.matrix.shape
        return (self.params["n_inputs"], self.params["n_outputs"])

    @property
    def n_inputs(self) -> int:
        """Number of inputs ``|Y|`` (rows)."""
        return self.shape[0]

    @property
    def n_outputs(self) -> int:
        """Number of outputs ``|U|`` (columns)."""
        return self.shape[1]

    # --- constructors ---------------------------------------------------------------------
    @classmethod
    def hamming(cls, size: int) -> Distortion:
        """``d(y, u) = [y ≠ u]`` on one alphabet of ``size`` symbols.

        Parameters
        ----------
        size : int
            Number of symbols, ``≥ 1``; the dense ``size × size`` matrix (8 bytes an entry)
            must fit the memory bound (``PRIVOPT_MAX_MEMORY``).

        Returns
        -------
        Distortion
            ``size × size``, 0 on the diagonal and 1 elsewhere, of kind ``"hamming"``.

        Raises
        ------
        InputError
            If ``size`` is not a positive integer or the matrix would not fit (field
            ``distortion.size``).
        """
        size = _dense_size(size)
        return cls(1.0 - np.eye(size), kind="hamming")

    @classmethod
    def absolute(cls, size: int | None = None, values: ArrayLike | None = None) -> Distortion:
        """``d(y, u) = |v_y − v_u|`` with ``v`` the 0-based indices or the given ``values``.

        Parameters
        ----------
        size : int, optional
            Number of symbols ``k ≥ 1``. Required without ``values``; with them, optional
            and then equal to their number.
        values : array_like, optional
            The symbols' values ``v_0, …, v_{k−1}``: a flat list of finite real numbers.
            Default: ``0, 1, …, size − 1``.

        Returns
        -------
        Distortion
            ``k × k``, of kind ``"absolute"``: 0 on the diagonal, non-negative, symmetric.

        Raises
        ------
        InputError
            If neither is given (field ``distortion``), the values are not such a list or
            do not number ``size`` (field ``distortion.values``), or ``size`` is not a
            positive integer whose dense matrix fits the memory bound (``distortion.size``).
        """
        v = _symbol_values(size, values)
        return cls(np.abs(v[:, None] - v[None, :]), kind="absolute")

    @classmethod
    def squared(cls, size: int | None = None, values: ArrayLike | None = None) -> Distortion:
        """``d(y, u) = (v_y − v_u)²`` with ``v`` the 0-based indices or the given ``values``.

        Parameters
        ----------
        size : int, optional
            As in :meth:`absolute`.
        values : array_like, optional
            As in :meth:`absolute`.

        Returns
        -------
        Distortion
            ``k × k``, of kind ``"squared"``: 0 on the diagonal, non-negative, symmetric.

        Raises
        ------
        InputError
            As :meth:`absolute`.
        """
        v = _symbol_values(size, values)
        return cls((v[:, None] - v[None, :]) ** 2, kind="squared")

    @classmethod
    def from_matrix(cls, matrix: ArrayLike, output_labels: Sequence | None = None) -> Distortion:
        """An arbitrary non-negative matrix, rows = inputs ``y``, columns = outputs ``u``.

        Parameters
        ----------
        matrix : array_like
            ``d[y, u]``: ``|Y| × |U|``, finite, non-negative (the alphabets may differ).
        output_labels : sequence of str, optional
            ``|U|`` distinct names of the outputs; default ``None`` (no names).

        Returns
        -------
        Distortion
            Of kind ``"matrix"``, holding ``matrix`` as a float array.

        Raises
        ------
        InputError
            If the matrix or the labels are not valid (fields ``distortion.matrix``,
            ``distortion.output_labels``).
        """
        return cls(matrix, output_labels=output_labels, kind="matrix")

    @classmethod
    def database_hamming(cls, m: int, n: int) -> Distortion:
        """Row-wise Hamming distance on ``Dⁿ``: the number of rows in which ``x`` and ``y``
        differ ([Wang-Ying-Zhang] §2). The dense matrix is built only when asked for.

        Parameters
        ----------
        m, n : int
            As in :class:`~privopt.model.HammingNeighbors`.

        Returns
        -------
        Distortion
            Symbolic, of shape ``m**n × m**n`` and kind ``"hamming"``, with ``params``
            ``m``, ``n``, ``n_inputs``, ``n_outputs`` and ``database=True``. Its values lie in
            ``0 … n``; its dense :attr:`matrix` can be built only for ``m**n ≤ 2**14``.

        Raises
        ------
        InputError
            If ``m`` or ``n`` is not such an integer (fields ``prior.database.m``,
            ``prior.database.n``).
        """
        m = as_positive_int(m, "prior.database.m", minimum=2)
        n = as_positive_int(n, "prior.database.n")
        if m**n > MAX_MATERIALISED_DATABASES:
            pass  # kept symbolic; only structured fast paths can use it
        return cls(None, kind="hamming", m=m, n=n, n_inputs=m**n, n_outputs=m**n, database=True)

    @property
    def is_database_hamming(self) -> bool:
        """True for the symbolic row-wise Hamming distance of :meth:`database_hamming`."""
        return bool(self.params.get("database"))

    def expected(self, input_probs: np.ndarray, mechanism: np.ndarray) -> float:
        """``E[d(Y, U)] = Σ_{y,u} p(y) W[y,u] d(y,u)`` ([Wang-Ying-Zhang] eq. 14; [Calmon-Fawaz]
        eq. 15).

        Parameters
        ----------
        input_probs : numpy.ndarray
            ``p(y)``, length ``|Y|`` (not checked: a pmf is expected).
        mechanism : numpy.ndarray
            ``W[y, u] = p(u|y)``, shape ``|Y| × |U|`` (not checked: row-stochastic is
            expected).

        Returns
        -------
        float
            ``E[d(Y, U)] ≥ 0``, in the distortion's own units.

        Raises
        ------
        InputError
            For a symbolic database distortion whose dense matrix is too large to build.
        """
        return float(np.sum(input_probs[:, None] * mechanism * self.matrix))

    def __repr__(self) -> str:
        return f"Distortion(kind={self.kind!r}, shape={self.shape})"


def _dense_size(size) -> int:
    """An alphabet size whose dense ``size × size`` matrix fits the memory bound."""
    size = as_positive_int(size, "distortion.size")
    need = 8.0 * float(size) ** 2 if size < 2**512 else math.inf
    if need > max_memory():
        raise InputError(
            f"a dense {size} x {size} distortion needs {format_bytes(need)}, above the memory "
            f"bound of {format_bytes(max_memory())} (PRIVOPT_MAX_MEMORY); use fewer symbols",
            "distortion.size",
        )
    return size


def _symbol_values(size, values) -> np.ndarray:
    if values is not None:
        v = as_real_array(values, "distortion.values", ndim=1)
        if size is not None and int(size) != v.size:
            raise InputError(
                f"has {v.size} values but the alphabet has {size} symbols", "distortion.values"
            )
        return v
    if size is None:
        raise InputError("give the alphabet size or the symbol values", "distortion")
    return np.arange(_dense_size(size), dtype=float)
