"""Mechanisms: row-stochastic matrices ``W[y, u] = p(u|y)`` with input and output labels."""

from __future__ import annotations

__all__ = ["Mechanism", "as_matrix"]

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from privopt._frames import html_table, pandas
from privopt.errors import InputError
from privopt.model._validate import SUM_TOLERANCE, as_labels, as_stochastic_matrix

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import ArrayLike

#: Largest side of a mechanism whose ``repr`` shows its matrix.
REPR_MAX_SIDE = 8
#: Rows and columns of a mechanism that its notebook display shows (``_repr_html_``).
HTML_MAX_ROWS = 16
HTML_MAX_COLUMNS = 10


class Mechanism:
    """A privacy mechanism ``p(u|y)``: a row-stochastic matrix with labels.

    Parameters
    ----------
    matrix : array_like
        ``|Y| × |U|``, finite, non-negative, rows summing to 1 within ``tol``.
    input_labels, output_labels : sequence of str, optional
        Names of the inputs (rows) and outputs (columns): ``|Y|`` and ``|U|`` distinct
        names; default ``"0", "1", …``.
    tol : float
        Row-sum tolerance (default 1e-9). Rows are renormalised exactly after the check.

    Raises
    ------
    InputError
        If the matrix is not such a matrix (field ``mechanism.matrix``) or the labels do not
        fit (fields ``mechanism.inputs``, ``mechanism.outputs``).

    Examples
    --------
    >>> rr = Mechanism([[0.75, 0.25], [0.25, 0.75]])
    >>> rr.then(rr).matrix[0, 0]
    0.625
    """

    def __init__(
        self,
        matrix: ArrayLike,
        input_labels: Sequence | None = None,
        output_labels: Sequence | None = None,
        tol: float = SUM_TOLERANCE,
    ) -> None:
        self.matrix = as_stochastic_matrix(matrix, "mechanism.matrix", tol)
        self.input_labels = as_labels(input_labels, self.matrix.shape[0], "mechanism.inputs")
        self.output_labels = as_labels(output_labels, self.matrix.shape[1], "mechanism.outputs")

    @classmethod
    def from_solver(
        cls,
        matrix: ArrayLike,
        input_labels: Sequence | None = None,
        output_labels: Sequence | None = None,
        clean_tol: float = 1e-7,
    ) -> Mechanism:
        """Clean a solver's answer: zero tiny negatives (> −clean_tol) and renormalise rows.

        Raises :class:`~privopt.errors.InputError` if an entry is more negative than
        ``clean_tol`` or a row sums far from 1, since that is not a rounding error.

        Parameters
        ----------
        matrix : array_like
            The solver's ``|Y| × |U|`` values of ``p(u|y)`` (rows = inputs), finite.
        input_labels, output_labels : sequence of str, optional
            Names of the ``|Y|`` inputs and ``|U|`` outputs, distinct; default
            ``"0", "1", …``.
        clean_tol : float
            Entries in ``[−clean_tol, 0)`` are set to 0 (default 1e-7, ``≥ 0``); after that
            a row may sum to 1 within ``max(clean_tol · |U|, 1e-6)``.

        Returns
        -------
        Mechanism
            ``|Y| × |U|``, non-negative, each row divided by its sum.
        """
        w = np.array(matrix, dtype=float)
        if not np.isfinite(w).all():
            raise InputError("solver returned non-finite entries", "mechanism.matrix")
        if (w < -clean_tol).any():
            raise InputError(
                f"solver returned an entry {w.min():.3g} < 0 beyond the cleaning tolerance",
                "mechanism.matrix",
            )
        w = np.clip(w, 0.0, None)
        sums = w.sum(axis=1)
        if (np.abs(sums - 1) > max(clean_tol * w.shape[1], 1e-6)).any():
            raise InputError(
                f"solver returned rows summing to {sums.min():.9g}..{sums.max():.9g}",
                "mechanism.matrix",
            )
        return cls(w / sums[:, None], input_labels, output_labels)

    @property
    def shape(self) -> tuple[int, int]:
        """``(|Y|, |U|)``: the numbers of inputs (rows) and outputs (columns)."""
        return self.matrix.shape

    @property
    def n_inputs(self) -> int:
        """Number of inputs ``|Y|`` (rows of :attr:`matrix`)."""
        return self.matrix.shape[0]

    @property
    def n_outputs(self) -> int:
        """Number of outputs ``|U|`` (columns of :attr:`matrix`)."""
        return self.matrix.shape[1]

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.matrix, dtype=dtype)

    # --- composition ----------------------------------------------------------------------
    def then(self, post: Mechanism | ArrayLike) -> Mechanism:
        """Post-processing: the chain ``Y → U → V`` with ``p(v|y) = Σ_u p(u|y) p(v|u)``.

        Parameters
        ----------
        post : Mechanism or array_like
            ``p(v|u)``: ``|U| × |V|``, one row per output of this mechanism (an array is
            validated as a :class:`Mechanism`: rows summing to 1 within 1e-9).

        Returns
        -------
        Mechanism
            ``|Y| × |V|``, with this mechanism's input labels and ``post``'s output labels.

        Raises
        ------
        InputError
            If ``post`` does not have ``|U|`` inputs, or is not a valid mechanism.
        """
        post = post if isinstance(post, Mechanism) else Mechanism(post)
        if post.n_inputs != self.n_outputs:
            raise InputError(
                f"post-processing takes {post.n_inputs} inputs but this mechanism has "
                f"{self.n_outputs} outputs: the alphabets must agree",
                "mechanism",
            )
        return Mechanism(self.matrix @ post.matrix, self.input_labels, post.output_labels)

    def parallel(self, other: Mechanism | ArrayLike) -> Mechanism:
        """Independent release of both mechanisms on the same input: outputs ``(u, v)`` with
        ``p(u, v|y) = p(u|y) p(v|y)`` (outputs ordered with ``u`` most significant).

        Parameters
        ----------
        other : Mechanism or array_like
            ``p(v|y)``: ``|Y| × |V|``, on the same ``|Y|`` inputs as this mechanism (an
            array is validated as a :class:`Mechanism`).

        Returns
        -------
        Mechanism
            ``|Y| × (|U|·|V|)``, with this mechanism's input labels and output labels
            ``"(u,v)"`` made of both mechanisms' output labels.

        Raises
        ------
        InputError
            If the numbers of inputs differ, or ``other`` is not a valid mechanism.
        """
        other = other if isinstance(other, Mechanism) else Mechanism(other)
        if other.n_inputs != self.n_inputs:
            raise InputError(
                f"the mechanisms have {self.n_inputs} and {other.n_inputs} inputs: they must "
                "act on the same input alphabet",
                "mechanism",
            )
        joint = (self.matrix[:, :, None] * other.matrix[:, None, :]).reshape(self.n_inputs, -1)
        labels = [f"({a},{b})" for a in self.output_labels for b in other.output_labels]
        return Mechanism(joint, self.input_labels, labels)

    def compose_adaptive(
        self, second: ArrayLike | Sequence[Mechanism], labels: Sequence | None = None
    ) -> Mechanism:
        """Adaptive composition: release ``Y ~ p(y|x)`` (this mechanism) and then
        ``Z ~ p(z|x, y)``, which sees both the input and ``Y``; the joint release ``(y, z)``
        has ``p(y, z|x) = p(y|x) p(z|x, y)`` ([Saeidian-PML], Sec. III-B; its PML is
        bounded by :func:`privopt.papers.closed_forms.adaptive_composition_pml`).

        Parameters
        ----------
        second : array_like or sequence of Mechanism
            ``|Y|`` row-stochastic matrices ``second[y][x, z] = p(z|x, y)``, one per output
            of this mechanism (an array of shape ``|Y| × |X| × |Z|``), or that many
            :class:`Mechanism` objects on this mechanism's inputs.
        labels : sequence of str, optional
            Names of the outputs ``z`` (default: those of the first second-stage mechanism,
            or ``"0", "1", …``).

        Returns
        -------
        Mechanism
            ``|X| × (|Y|·|Z|)``, outputs ``"(y,z)"`` ordered with ``y`` most significant.
        """
        stages = list(second) if not isinstance(second, np.ndarray) else list(second)
        if len(stages) != self.n_outputs:
            raise InputError(
                f"the second stage has {len(stages)} mechanisms but the first has "
                f"{self.n_outputs} outputs: give one p(z|x, y) per output y",
                "second",
            )
        mechs = [s if isinstance(s, Mechanism) else Mechanism(s) for s in stages]
        n_z = mechs[0].n_outputs
        for y, m in enumerate(mechs):
            if m.n_inputs != self.n_inputs or m.n_outputs != n_z:
                raise InputError(
                    f"second[{y}] is {m.n_inputs} × {m.n_outputs}; every second-stage "
                    f"mechanism must be {self.n_inputs} × {n_z} (inputs × outputs z)",
                    "second",
                )
        tensor = np.stack([m.matrix for m in mechs], axis=1)  # x × y × z
        joint = (self.matrix[:, :, None] * tensor).reshape(self.n_inputs, -1)
        z_labels = list(labels) if labels is not None else list(mechs[0].output_labels)
        names = [f"({a},{b})" for a in self.output_labels for b in z_labels]
        return Mechanism(joint, self.input_labels, names)

    # --- sampling -------------------------------------------------------------------------
    def sample(
        self,
        inputs: int | str | Sequence[int | str] | np.ndarray,
        rng: np.random.Generator | int | None = None,
        *,
        labels: bool = False,
    ) -> np.ndarray:
        """Draw one output per input: its index, or its label with ``labels=True``.

        Uses the Gumbel-max trick on ``log W`` so that outputs of tiny probability (1e-300)
        keep their exact chance instead of vanishing into a cumulative sum's rounding.

        Parameters
        ----------
        inputs : int, str or sequence of them
            The inputs, as row indices (integers) or input labels (strings).
        rng : numpy.random.Generator, int or None
            The random generator, or a seed for :func:`numpy.random.default_rng`.
        labels : bool
            Return output labels (``self.output_labels``) instead of output indices.

        Returns
        -------
        numpy.ndarray
            One entry per input, in the order given: output indices (``int64``) by default,
            output labels (a string array) with ``labels=True``.

        Raises
        ------
        InputError
            If an index is out of range or a label is unknown.

        Examples
        --------
        >>> rr = Mechanism([[1.0, 0.0], [0.0, 1.0]], ["no", "yes"], ["said no", "said yes"])
        >>> rr.sample(["yes", "no"], rng=0).tolist()
        [1, 0]
        >>> rr.sample(["yes", "no"], rng=0, labels=True).tolist()
        ['said yes', 'said no']
        """
        if isinstance(rng, (bool, np.bool_, float, str, bytes)):
            _refuse_rng(rng)  # default_rng would take True or 1.0, or fail with a TypeError
        try:
            rng = np.random.default_rng(rng)
        except (TypeError, ValueError):
            _refuse_rng(rng)
        idx = self._input_indices(inputs)
        with np.errstate(divide="ignore"):
            logw = np.log(self.matrix[idx])
        gumbel = rng.gumbel(size=logw.shape)
        drawn = np.argmax(logw + gumbel, axis=1)
        if labels:
            return np.array(self.output_labels, dtype=str)[drawn]
        return drawn

    def _input_indices(self, inputs) -> np.ndarray:
        arr = np.atleast_1d(np.asarray(inputs))
        if arr.dtype.kind in "iu":
            if arr.size and (arr.min() < 0 or arr.max() >= self.n_inputs):
                raise InputError(f"input indices must lie in 0..{self.n_inputs - 1}", "inputs")
            return arr.astype(np.int64)
        lookup = {label: i for i, label in enumerate(self.input_labels)}
        try:
            return np.array([lookup[str(a)] for a in arr], dtype=np.int64)
        except KeyError as exc:
            raise InputError(f"unknown input label {exc.args[0]!r}", "inputs") from None

    # --- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The mechanism as a JSON-ready dict, in the format that :meth:`from_dict` reads.

        Returns
        -------
        dict
            ``{"mechanism": rows, "inputs": input_labels, "outputs": output_labels}``:
            ``rows`` is :attr:`matrix` as a list of ``|Y|`` lists of ``|U|`` floats
            ``p(u|y)`` (rows = inputs, each summing to 1), and the labels are lists of the
            ``|Y|`` input and ``|U|`` output names (str). The lists are new: changing them
            leaves the mechanism as it is.
        """
        return {
            "mechanism": self.matrix.tolist(),
            "inputs": list(self.input_labels),
            "outputs": list(self.output_labels),
        }

    @classmethod
    def from_dict(cls, data: dict) -> Mechanism:
        """Read a mechanism from the dict that :meth:`to_dict` writes.

        Parameters
        ----------
        data : dict
            Entry ``"mechanism"`` (or, when it is absent, ``"matrix"``): the ``|Y| × |U|``
            matrix ``p(u|y)`` as a list of rows (rows = inputs), finite, non-negative, rows
            summing to 1 within 1e-9. Optional entries ``"inputs"`` and ``"outputs"``: the
            ``|Y|`` input and ``|U|`` output names, distinct (default ``"0", "1", …``).
            Other entries are ignored, so the JSON object of a design result (which has
            these three entries) reads too.

        Returns
        -------
        Mechanism
            Rows renormalised as by the constructor, which leaves the rows of
            :meth:`to_dict` unchanged: ``Mechanism.from_dict(m.to_dict()) == m``.

        Raises
        ------
        InputError
            If neither ``"mechanism"`` nor ``"matrix"`` is present (field ``mechanism``),
            or the matrix or labels are not valid (fields ``mechanism.matrix``,
            ``mechanism.inputs``, ``mechanism.outputs``).
        """
        if not isinstance(data, dict):
            raise InputError(
                f"expected a JSON object with a 'mechanism' entry, got {type(data).__name__}",
                "mechanism",
            )
        if "mechanism" not in data and "matrix" not in data:
            raise InputError("expected a 'mechanism' (or 'matrix') entry", "mechanism")
        matrix = data.get("mechanism", data.get("matrix"))
        return cls(matrix, data.get("inputs"), data.get("outputs"))

    def to_json(self, **kwargs: Any) -> str:
        """The mechanism as JSON text: the dict of :meth:`to_dict` through :func:`json.dumps`.

        Parameters
        ----------
        **kwargs
            Passed on to :func:`json.dumps` (e.g. ``indent=2``).

        Returns
        -------
        str
            A JSON object with the entries ``"mechanism"`` (the matrix as a list of rows of
            numbers, rows = inputs), ``"inputs"`` and ``"outputs"`` (lists of strings).
            Floats are written in their shortest exact form, so :meth:`from_json` gives back
            an equal mechanism.
        """
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Mechanism:
        """Read a mechanism from the JSON text that :meth:`to_json` writes.

        Parameters
        ----------
        text : str
            A JSON object in the format that :meth:`from_dict` reads (entries
            ``"mechanism"`` or ``"matrix"``, and optionally ``"inputs"`` and ``"outputs"``).

        Returns
        -------
        Mechanism
            ``|Y| × |U|``, as :meth:`from_dict` builds it.

        Raises
        ------
        InputError
            If ``text`` is not valid JSON or is nested too deeply to read (field
            ``mechanism``), or :meth:`from_dict` refuses its content.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc})", "mechanism") from None
        except RecursionError:  # arrays nested thousands deep exhaust the parser's stack
            raise InputError(
                "the JSON is nested too deeply to be a mechanism (a matrix is 2 levels deep)",
                "mechanism",
            ) from None
        try:
            return cls.from_dict(data)
        except RecursionError:
            raise InputError(
                "the JSON is nested too deeply to be a mechanism (a matrix is 2 levels deep)",
                "mechanism",
            ) from None

    # --- tables -----------------------------------------------------------------------------
    def to_frame(self, tidy: bool = False):
        """The mechanism as a pandas DataFrame (needs pandas: the ``[frames]`` extra).

        Parameters
        ----------
        tidy : bool
            ``False`` (default): the matrix, one row per input and one column per output
            (index ``input``, columns ``output``: their labels), ``p(u|y)`` in the cells.
            ``True``: one row per entry, columns ``input``, ``output`` and ``probability``
            (rows in the order of the matrix), e.g. for plotting libraries or a database.

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> rr = Mechanism([[0.75, 0.25], [0.25, 0.75]], ["no", "yes"], ["no", "yes"])
        >>> float(rr.to_frame().loc["yes", "yes"])
        0.75
        """
        pd = pandas("Mechanism.to_frame")
        if tidy:
            rows, cols = self.shape
            return pd.DataFrame(
                {
                    "input": np.repeat(np.asarray(self.input_labels, dtype=object), cols),
                    "output": np.tile(np.asarray(self.output_labels, dtype=object), rows),
                    "probability": self.matrix.ravel(),
                }
            )
        return pd.DataFrame(
            self.matrix,
            index=pd.Index(list(self.input_labels), name="input"),
            columns=pd.Index(list(self.output_labels), name="output"),
        )

    def _repr_html_(self) -> str:
        """The matrix as an HTML table in a notebook (the first rows and columns of a large
        one)."""
        rows, cols = self.shape
        shown_rows, shown_cols = min(rows, HTML_MAX_ROWS), min(cols, HTML_MAX_COLUMNS)
        header = ["y \\ u", *map(str, self.output_labels[:shown_cols])]
        body = [
            [str(self.input_labels[i]), *map(float, self.matrix[i, :shown_cols])]
            for i in range(shown_rows)
        ]
        cut = ""
        if (shown_rows, shown_cols) != (rows, cols):
            cut = f", first {shown_rows} × {shown_cols} shown (to_frame() has all of it)"
        caption = f"Mechanism p(u | y): {rows} inputs × {cols} outputs{cut}"
        return html_table(body, header, caption)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Mechanism):
            return NotImplemented
        return (
            self.shape == other.shape
            and np.array_equal(self.matrix, other.matrix)
            and self.input_labels == other.input_labels
            and self.output_labels == other.output_labels
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        """The matrix itself up to :data:`REPR_MAX_SIDE` rows and columns, else its shape."""
        rows, cols = self.shape
        if rows > REPR_MAX_SIDE or cols > REPR_MAX_SIDE:
            return f"Mechanism(shape={self.shape}: {rows} inputs × {cols} outputs, see .matrix)"
        # no suppress_small: a tiny entry is not a zero (a zero can make a level infinite)
        body = np.array2string(self.matrix, precision=6, separator=", ", prefix="Mechanism(")
        return f"Mechanism({body})"


def as_matrix(mechanism: Mechanism | ArrayLike) -> np.ndarray:
    """The matrix of a :class:`Mechanism`, or a validated row-stochastic array.

    Parameters
    ----------
    mechanism : Mechanism or array_like
        A mechanism, or a ``|Y| × |U|`` matrix ``p(u|y)`` (rows = inputs): finite,
        non-negative, rows summing to 1 within 1e-9.

    Returns
    -------
    numpy.ndarray
        ``|Y| × |U|`` float array: the mechanism's own :attr:`Mechanism.matrix` (not a copy),
        or a new array with the rows renormalised.

    Raises
    ------
    InputError
        If the matrix is not row-stochastic (field ``mechanism``).
    """
    if isinstance(mechanism, Mechanism):
        return mechanism.matrix
    return as_stochastic_matrix(mechanism, "mechanism", SUM_TOLERANCE)


def _refuse_rng(rng) -> NoReturn:
    raise InputError(
        "expected a numpy.random.Generator, a non-negative integer seed or None, got "
        f"{type(rng).__name__} {rng!r:.60}",
        "rng",
    )
