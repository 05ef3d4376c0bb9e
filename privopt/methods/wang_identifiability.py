"""Closed-form optima offered as a method: Wang, Ying & Zhang's identifiability mechanism.

For identifiability with Hamming distortion and Hamming neighbours on a full-support prior,
[Wang-Ying-Zhang], Thm 1, give the optimum in closed form from ε̃_X on: the mechanism
E_i of eq. (29), of distortion ``h(ε)`` (eq. (36)), which also bounds every identifiable
mechanism's distortion from below (Lemma 1). At large ε the program's ``e^{±ε}``
coefficients defeat the LP solvers (answers off by up to 1e-2, or no answer), while the
closed form is exact; below ε̃_X E_i does not exist and the method steps aside.
"""

from __future__ import annotations

__all__ = ["WangIdentifiability"]

import time
from typing import TYPE_CHECKING

from privopt.methods.base import Answer, Certificate, Method, Stopping, Task, register
from privopt.papers.closed_form_checks import (
    identifiability_candidate,
    wang_identifiability_applies,
)
from privopt.status import Status

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from privopt.request import DesignRequest


class WangIdentifiability(Method):
    """E_i of [Wang-Ying-Zhang], eq. (29), certified by ``h(ε)`` (Lemma 1, Thm 1)."""

    name = "wang-identifiability"
    description = (
        "identifiability, Hamming distortion and neighbours: the closed-form optimum E_i "
        "(Wang, Ying & Zhang 2016, Thm 1) from ε̃_X on"
    )
    priority = 40
    stopping = Stopping.CHECKS  # a formula on at most 4096 symbols: nothing to stop

    def unsupported(self, request: DesignRequest) -> str | None:
        """Why the closed form cannot take ``request``, or ``None``: it needs identifiability
        with no extra budgets, constraints or options, on a full-support prior of at most
        4096 symbols with Hamming distortion and Hamming neighbours.
        """
        if request.notion.name != "identifiability":
            return "solves identifiability only"
        if not request.is_plain or request.options:
            return "takes no extra distortion budgets, constraints or options"
        if not wang_identifiability_applies(request.prior, request.distortion, request.neighbors):
            return (
                "needs a full-support prior of at most 4096 symbols with Hamming distortion "
                "and Hamming neighbours"
            )
        return None

    def solves_budget(self, request: DesignRequest) -> bool:
        """Never: the closed form answers ε points only; budget mode goes through the
        driver's line search."""
        return False

    def auto(self, request: DesignRequest, *, sweep: bool = False) -> bool:
        """Always picked where it applies: the closed form is exact, and steps aside below
        ε̃_X.

        Returns
        -------
        bool
            Always ``True``.
        """
        return True  # exact where it applies; it steps aside below ε̃_X

    def solve(self, task: Task) -> Answer:
        """Build E_i at ``task.epsilon`` and certify it with ``h(ε)``.

        Returns
        -------
        Answer
            ``OPTIMAL`` with the dense mechanism E_i, its distortion ``h(ε)`` as the objective
            and as the certificate's lower bound; ``FAILED`` for a budget point or where E_i
            does not exist (below ε̃_X).
        """
        start = time.perf_counter()
        request = task.request
        if task.epsilon is None:
            return Answer(Status.FAILED, self.name, message="solves ε points only")
        found = identifiability_candidate(
            request.prior, request.distortion, request.neighbors, float(task.epsilon)
        )
        if found is None:
            return Answer(Status.FAILED, self.name, message="E_i does not exist below ε̃_X")
        matrix, lower = found
        return Answer(
            Status.OPTIMAL,
            self.name,
            matrix=matrix,
            objective=lower,
            certificate=Certificate(lower, "h(ε) (Wang, Ying & Zhang 2016, Lemma 1 and Thm 1)"),
            solve_time=time.perf_counter() - start,
        )


register(WangIdentifiability())
