"""The statuses of an answer: one enum, whose string values are what JSON and the CLI show.

:class:`Status` is a ``str`` enum, so ``result.status == "optimal"`` holds and JSON encodes it
as the plain string. Its meaning, from the strongest to the weakest:

=====================  ======================================================================
value                  meaning
=====================  ======================================================================
``optimal``            re-measured by privopt (a channel that meets the request) and
                       certified optimal within the stated tolerance
``optimal_inaccurate`` re-measured and feasible, but its optimality could not be certified
                       within the tolerance (every applicable method was tried)
``infeasible``         no mechanism meets the request (the least achievable value is given
                       where it can be computed)
``time_limit``         the time limit ended the run before a certified answer was found
``failed``             a method stopped without a usable answer (internal to the driver:
                       it falls back to the next method)
``error``              a sweep point that could not be solved (its message says why)
=====================  ======================================================================
"""

from __future__ import annotations

__all__ = ["Status"]

from enum import Enum


class Status(str, Enum):
    """The status of an answer (see the module docstring)."""

    OPTIMAL = "optimal"
    OPTIMAL_INACCURATE = "optimal_inaccurate"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"
    FAILED = "failed"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def has_answer(self) -> bool:
        """Whether the status comes with a verified mechanism (``bool``: ``True`` for
        ``OPTIMAL`` and ``OPTIMAL_INACCURATE``)."""
        return self in (Status.OPTIMAL, Status.OPTIMAL_INACCURATE)
