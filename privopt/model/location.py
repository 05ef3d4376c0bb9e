"""Location problems on a grid of map cells (geo-indistinguishability).

A :class:`LocationGrid` is ``rows × cols`` square cells of side ``cell_size``; the secrets and
the outputs are the cells, numbered row by row (cell ``(r, c)`` is ``r·cols + c``, labelled
``"r,c"``), with the cell centres as points. The prior comes from counts per cell (e.g.
check-ins, normalised) and the metric and the distortion from the distance between centres
([Andres-Geo]; [Bordenabe-Chatzikokolakis-Palamidessi], Sec. 6 use the same discretisation).
"""

from __future__ import annotations

import numpy as np

from privopt.errors import InputError
from privopt.model.distortion import Distortion
from privopt.model.metric import Metric, point_distances
from privopt.model.prior import Prior

__all__ = ["LocationGrid"]


class LocationGrid:
    """``rows × cols`` square map cells (see the module docstring).

    Parameters
    ----------
    rows, cols : int
        Numbers of rows and columns of cells, each ``≥ 1``.
    cell_size : float
        The side of a cell, in the unit of distances: positive and finite (default 1).
    counts : array_like, optional
        ``rows × cols`` non-negative counts (or weights) per cell; the prior is them
        normalised. Default: uniform.
    field : str
        The key named in messages.
    """

    def __init__(
        self, rows: int, cols: int, cell_size: float = 1.0, counts=None, field: str = "grid"
    ):
        for name, value in (("rows", rows), ("cols", cols)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise InputError(f"must be a positive integer, got {value!r}", f"{field}.{name}")
        try:
            size = float(cell_size)
        except (TypeError, ValueError):
            raise InputError(
                f"must be a positive number, got {cell_size!r}", f"{field}.cell_size"
            ) from None
        if not (np.isfinite(size) and size > 0):
            raise InputError(f"must be a positive number, got {cell_size!r}", f"{field}.cell_size")
        self.rows, self.cols, self.cell_size = int(rows), int(cols), size
        if counts is None:
            weights = np.ones((self.rows, self.cols))
        else:
            try:
                weights = np.array(counts, dtype=float)
            except (TypeError, ValueError):
                raise InputError("counts must be a matrix of numbers", f"{field}.counts") from None
            if weights.shape != (self.rows, self.cols):
                raise InputError(
                    f"counts have shape {weights.shape}, the grid is {self.rows} × {self.cols}",
                    f"{field}.counts",
                )
            if not np.isfinite(weights).all() or (weights < 0).any():
                raise InputError("counts must be finite and non-negative", f"{field}.counts")
            if weights.sum() <= 0:
                raise InputError("counts are all zero", f"{field}.counts")
        self.counts = weights

    @property
    def size(self) -> int:
        """The number of cells."""
        return self.rows * self.cols

    @property
    def labels(self) -> list[str]:
        """``"r,c"`` for every cell, row by row."""
        return [f"{r},{c}" for r in range(self.rows) for c in range(self.cols)]

    @property
    def points(self) -> np.ndarray:
        """Cell centres ``(x, y) = ((c + ½)·size, (r + ½)·size)``, ``size × 2``."""
        r, c = np.divmod(np.arange(self.size), self.cols)
        return np.stack([(c + 0.5) * self.cell_size, (r + 0.5) * self.cell_size], axis=1)

    def prior(self) -> Prior:
        """The counts normalised, as a :class:`~privopt.model.Prior` labelled by cell.

        Returns
        -------
        Prior
        """
        probs = self.counts.ravel() / self.counts.sum()
        return Prior(probs, labels=self.labels)

    def metric(self, norm: str = "euclidean") -> Metric:
        """The distance between cell centres.

        Parameters
        ----------
        norm : {"euclidean", "manhattan"}

        Returns
        -------
        Metric
        """
        d = self._distances(norm)
        return Metric(d, self.labels, norm, "privacy.metric", check=False, copy=False)

    def _distances(self, norm: str) -> np.ndarray:
        """The ``size × size`` distances between cell centres, refused before anything is
        allocated when they would exceed the memory bound
        (:func:`~privopt.model.metric.point_distances`)."""
        if norm not in ("euclidean", "manhattan"):
            raise InputError(f"a grid takes norm 'euclidean' or 'manhattan', got {norm!r}", "norm")
        return point_distances(
            self.points, norm, "grid", f"the cells of a {self.rows} × {self.cols} grid"
        )

    def distortion(self, norm: str = "euclidean", power: float = 1.0) -> Distortion:
        """``d(x, u) = dist(x, u)^power`` between cells (outputs = cells).

        Parameters
        ----------
        norm : {"euclidean", "manhattan"}
        power : float
            1: expected distance (the quality loss of [Andres-Geo]); 2: squared distance.

        Returns
        -------
        Distortion
        """
        d = self._distances(norm)
        if float(power) != 1.0:
            np.power(d, float(power), out=d)
        return Distortion(d, output_labels=self.labels)

    def as_map(self, values) -> np.ndarray:
        """A vector over the cells as a ``rows × cols`` array (row 0 first).

        Parameters
        ----------
        values : array_like
            One value per cell.

        Returns
        -------
        numpy.ndarray
        """
        arr = np.asarray(values, dtype=float)
        if arr.shape != (self.size,):
            raise InputError(
                f"expected {self.size} values (one per cell), got {arr.shape}", "values"
            )
        return arr.reshape(self.rows, self.cols)

    def __repr__(self) -> str:
        return f"LocationGrid({self.rows} × {self.cols}, cell_size={self.cell_size:g})"
