"""The exception hierarchy of privopt.

Every error raised on purpose by the package derives from :class:`PrivoptError`, so a
caller can catch one class. The command line maps the subclasses to exit codes:

==========================  ============================================  =========
class                       meaning                                       CLI exit
==========================  ============================================  =========
:class:`InputError`         the input is malformed (names field and fix)  2
:class:`InfeasibleError`    the request cannot be met (gives least value) 1
:class:`SolverError`        every solver failed or stopped early          3
:class:`VerificationError`  a solver answer failed its re-measurement     3
:class:`TaskLostError`      a task sent to an executor never came back   3
==========================  ============================================  =========
"""

from __future__ import annotations

__all__ = [
    "INPUT_ERROR_CODES",
    "close_matches",
    "did_you_mean",
    "PrivoptError",
    "InputError",
    "InfeasibleError",
    "SolverError",
    "VerificationError",
    "TaskLostError",
]

import difflib
from collections.abc import Iterable


class PrivoptError(Exception):
    """Base class of every error raised by privopt."""

    exit_code = 3


class InputError(PrivoptError, ValueError):
    """Malformed input: the message names the offending field and what would fix it.

    Parameters
    ----------
    message : str
        What is wrong and how to fix it.
    field : str, optional
        The argument or file key at fault (e.g. ``"prior.probs"``).
    code : str, optional
        What kind of mistake it is, for programs that react to it (the message is for
        people): one of :data:`INPUT_ERROR_CODES` where the raiser names one, else ``None``.
    suggestions : iterable of str, optional
        The valid names closest to a misspelt one (:func:`close_matches`), best first; the
        message then ends with "did you mean …?". Empty when there is no close name.

    Attributes
    ----------
    field : str or None
    code : str or None
    suggestions : tuple of str
        For programs (and tests): the names suggested, without parsing the message.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        field: str | None = None,
        code: str | None = None,
        suggestions: Iterable[str] = (),
    ):
        self.field = field
        self.code = code
        self.suggestions = tuple(suggestions)
        if self.suggestions:
            message = f"{message}{did_you_mean(self.suggestions)}"
        super().__init__(f"{field}: {message}" if field else message)


def close_matches(word: object, candidates: Iterable[str], n: int = 3) -> tuple[str, ...]:
    """The valid names closest to a misspelt ``word`` (:func:`difflib.get_close_matches`).

    Matched without regard to case, ``-`` or spaces (``"Max-Leakage"`` finds
    ``"maximal_leakage"``), with a cut-off of 0.6 (difflib's default), best first.

    Parameters
    ----------
    word : object
        What was given (anything that is not a string has no close match).
    candidates : iterable of str
        The valid names.
    n : int
        At most this many.

    Returns
    -------
    tuple of str
        Candidates as spelt in ``candidates``; empty when none is close.
    """
    if not isinstance(word, str) or not word:
        return ()

    def key(text: str) -> str:
        return text.strip().lower().replace("-", "_").replace(" ", "_")

    spelt: dict[str, str] = {}
    for name in candidates:
        spelt.setdefault(key(str(name)), str(name))
    found = difflib.get_close_matches(key(word), list(spelt), n=n, cutoff=0.6)
    return tuple(spelt[f] for f in found if spelt[f] != word)


def did_you_mean(suggestions: Iterable[str]) -> str:
    """The end of a message that suggests names: ``"; did you mean 'a' (or 'b')?"``.

    Parameters
    ----------
    suggestions : iterable of str
        Best first; empty gives ``""``.

    Returns
    -------
    str
    """
    names = [repr(s) for s in suggestions]
    if not names:
        return ""
    rest = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
    return f"; did you mean {names[0]}{rest}?"


#: The :attr:`InputError.code` values, and what each means.
INPUT_ERROR_CODES = {
    "missing_value": "a value is missing (an empty cell or a short row of a CSV file)",
    "extra_value": "a row of a CSV file with more values than the file's columns",
    "not_a_number": "a value that must be a number is not (text, NaN or infinity)",
    "latitude_range": "a latitude outside [-90, 90] degrees",
    "longitude_range": "a longitude outside [-180, 180] degrees",
    "negative_weight": "a negative count or weight",
    "duplicate_point": "two locations at the same coordinates",
    "outside_bounds": "a point outside the map's bounds",
    "outputs_do_not_cover": "an output grid that does not cover the map",
    "disconnected_graph": "a graph whose vertices are not all joined by paths",
    "bad_edge_weight": "an edge weight that is not a positive finite number (negative, 0, NaN)",
    "self_loop": "an edge from a vertex to itself",
    "duplicate_edge": "an edge given twice (in either direction) with different weights",
    "malformed_edge": "an edge that is not [a, b] or [a, b, weight]",
    "not_an_index": "an index that is not an integer (a fraction, a boolean, text)",
    "not_positive": "a number that must be positive is zero or negative (e.g. a cell size)",
    "zero_total_weight": "counts or weights that are all zero (no place has any mass)",
    "inverted_bounds": "bounds whose minimum is not below their maximum (swapped or equal)",
    "missing_file": "a file that does not exist",
    "unreadable_file": "a file that exists but cannot be opened or read",
    "not_a_regular_file": "a path that names a directory, a FIFO or a device, not a file",
    "file_too_large": "a file larger than the limit (PRIVOPT_MAX_FILE_BYTES)",
    "not_utf8": "a text file that is not UTF-8",
    "index_out_of_range": "an index outside the alphabet",
    "unknown_symbol": "a name that is not a symbol of the alphabet",
}


class InfeasibleError(PrivoptError):
    """The request has no solution.

    Parameters
    ----------
    message : str
        Why the request is infeasible.
    least_achievable : float, optional
        The least achievable value of the constrained quantity (a privacy level or a
        distortion), when it can be computed.
    quantity : str, optional
        What ``least_achievable`` measures (``"epsilon"`` or ``"distortion"``).
    """

    exit_code = 1

    def __init__(
        self,
        message: str,
        least_achievable: float | None = None,
        quantity: str | None = None,
    ):
        self.least_achievable = least_achievable
        self.quantity = quantity
        if least_achievable is not None:
            message = f"{message} (least achievable {quantity or 'value'}: {least_achievable:.12g})"
        super().__init__(message)


class SolverError(PrivoptError):
    """Every solver tried failed, stopped early, or returned an unusable answer."""

    exit_code = 3


class VerificationError(PrivoptError):
    """A solver answer violates its own constraints beyond tolerance when re-measured."""

    exit_code = 3


class TaskLostError(SolverError):
    """A task sent to an executor never came back with an answer.

    Its worker died (a ``BrokenProcessPool`` of a process pool whose process was killed,
    e.g. by the out-of-memory killer; Dask's ``KilledWorker`` once the scheduler's retries
    are spent), the executor was shut down, or the task raised an exception that is not a
    privopt error. :func:`privopt.solve_many` and :func:`privopt.sweep` put it in the place
    of the lost point and keep every point that did come back.

    Parameters
    ----------
    message : str
        What was lost and why.
    cause : str, optional
        The name of the exception the executor gave (e.g. ``"BrokenProcessPool"``).
    """

    exit_code = 3

    def __init__(self, message: str, cause: str | None = None):
        self.cause = cause
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (str(self), self.cause))
