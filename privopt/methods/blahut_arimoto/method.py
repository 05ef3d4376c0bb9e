"""Blahut–Arimoto as a :class:`~privopt.methods.base.Method` (mutual information)."""

from __future__ import annotations

__all__ = ["BlahutArimoto", "MAX_ENTRIES"]

import math
from typing import TYPE_CHECKING

from privopt.methods.base import (
    Answer,
    Certificate,
    Method,
    Stopping,
    Task,
    register,
    register_alias,
)
from privopt.methods.blahut_arimoto.rate_distortion import distortion_rate, rate_distortion
from privopt.model import JointPrior
from privopt.status import Status

if TYPE_CHECKING:
    from privopt.request import DesignRequest

#: Largest ``|X|·|U|`` handled (dense kernel and mechanism, ~8 bytes each, ×4).
MAX_ENTRIES = 2**25
#: Largest ``|Y|·|U|`` handled for a joint prior (the scheme keeps ``|S|·|Y|·|U|`` arrays).
JOINT_MAX_ENTRIES = 2**16

_STATUS = {
    "optimal": Status.OPTIMAL,
    "infeasible": Status.INFEASIBLE,
    "time_limit": Status.TIME_LIMIT,
    "failed": Status.FAILED,
}


#: From this many mechanism entries on, the solve leaves BLAS its own thread count (below,
#: one thread: matrix–vector products that threads slow down on a loaded machine).
LARGE_ENTRIES = 1_000_000


class BlahutArimoto(Method):
    """Blahut–Arimoto with Newton polishing and a certified slope search."""

    name = "blahut-arimoto"
    priority = 10
    warm_starts = True
    # its iterations, slope searches and bracket steps check the deadline
    stopping = Stopping.CHECKS
    description = (
        "Blahut–Arimoto with projected-Newton polishing and a certified slope search "
        "(min I(X;U) s.t. E[d] ≤ D, or min E[d] s.t. I ≤ ε); joint priors p(s, y) by the "
        "alternating scheme of Calmon–Fawaz Remark 2 with a Frank–Wolfe duality bound, "
        "first-order there: 300–1700× slower than the default (15–85 s against 0.05 s on "
        "2×3×3 to 4×16×5 joint priors), so chosen for them only when named"
    )

    def unsupported(self, request: DesignRequest) -> str | None:
        """See :meth:`~privopt.methods.base.Method.unsupported`."""
        if request.notion.name != "mutual_information":
            return "solves mutual_information only"
        if isinstance(request.prior, JointPrior):
            if request.entries > JOINT_MAX_ENTRIES:
                return f"joint priors up to {JOINT_MAX_ENTRIES} mechanism entries"
            if request.mode == "epsilon" and request.epsilon is not None and request.epsilon <= 0:
                return "ε = 0 (exact independence) is left to the convex program"
        if not request.is_plain:
            return "takes no extra distortion budgets or added constraints"
        if request.entries > MAX_ENTRIES:
            return f"{request.entries:.0f} mechanism entries exceed its limit {MAX_ENTRIES}"
        if request.distortion.is_database_hamming and request.prior.size > 2**14:
            return "the dense database distortion would not fit in memory"
        return None

    def auto(self, request: DesignRequest, *, sweep: bool = False) -> bool:
        """See :meth:`~privopt.methods.base.Method.auto`."""
        # certified by its duality gap and faster than the exponential-cone program at every
        # size measured from k = 30 on (benchmarks/README.md: ×11 at k = 30, ×4102 at k = 200).
        # Joint priors: first-order (multiplicative) steps, measured slower than Clarabel on
        # the Calmon–Fawaz counting query (16 × 5: 2–9 s against < 0.1 s) and 300–1700×
        # slower than the default on random joint priors (2×3×3: 15 s against 0.04 s; 3×4×4:
        # 85 s against 0.05 s; the same values to 4e-11), so only on request (said so in
        # the description that ``privopt solvers`` prints)
        return not isinstance(request.prior, JointPrior)

    def solve(self, task: Task) -> Answer:
        """See :meth:`~privopt.methods.base.Method.solve`."""
        request = task.request
        task.emit(self.name, "start")
        kwargs = dict(
            tol=min(task.tol, 1e-9),
            warm_start=task.warm,
            deadline=task.deadline if task.deadline.limited else None,
            **task.cache.get(("options", self.name), {}),
        )
        if request.entries >= LARGE_ENTRIES:
            # the Hessians (k × |S|², S the output support) dominate: let BLAS use every core
            kwargs.setdefault("blas_threads", None)
        if isinstance(request.prior, JointPrior):
            res = self._solve_joint(task)
        elif task.budget is not None:
            res = rate_distortion(request.prior, request.distortion, task.budget, **kwargs)
        else:
            eps = task.epsilon if math.isfinite(task.epsilon) else math.inf
            res = distortion_rate(request.prior, request.distortion, eps, **kwargs)
        answer = Answer(
            _STATUS.get(res.status, Status.FAILED),
            self.name,
            matrix=res.mechanism,
            objective=float(res.objective),
            iterations=res.iterations,
            solve_time=float(res.info.get("solve_time_s", 0.0)),
            least_achievable=res.info.get("least_achievable"),
            message=str(res.info.get("message", "")),
            warm=res if res.status == "optimal" else None,
            details={
                k: v
                for k, v in res.info.items()
                if isinstance(v, (int, float, str)) and k not in ("message",)
            },
        )
        if "lower_bound" in res.certificate:
            source = (
                "Blahut–Arimoto for p(s, y): Frank–Wolfe bound of the Lagrangian"
                if isinstance(request.prior, JointPrior)
                else "Blahut–Arimoto dual bound (Csiszár)"
            )
            answer.certificate = Certificate(float(res.certificate["lower_bound"]), source)
        return answer

    @staticmethod
    def _solve_joint(task: Task):
        from privopt.methods.blahut_arimoto.joint import (
            joint_distortion_rate,
            joint_rate_distortion,
        )

        request = task.request
        d = request.distortion.matrix
        deadline = task.deadline if task.deadline.limited else None
        tol = min(task.tol, 1e-8)
        if task.budget is not None:
            return joint_rate_distortion(request.prior, d, task.budget, tol, deadline)
        eps = task.epsilon if math.isfinite(task.epsilon) else math.inf
        return joint_distortion_rate(request.prior, d, eps, tol, deadline)


register(BlahutArimoto())
register_alias("blahut_arimoto", "blahut-arimoto")
