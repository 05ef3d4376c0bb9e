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
    "PrivoptError",
    "InputError",
    "InfeasibleError",
    "SolverError",
    "VerificationError",
    "TaskLostError",
]


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
    """

    exit_code = 2

    def __init__(self, message: str, field: str | None = None):
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


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
