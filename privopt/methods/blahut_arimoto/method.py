"""Blahut–Arimoto as a :class:`~privopt.methods.base.Method` (mutual information)."""

from __future__ import annotations

import math

from privopt.methods.base import Answer, Certificate, Method, Task, register, register_alias
from privopt.methods.blahut_arimoto.rate_distortion import distortion_rate, rate_distortion
from privopt.model import JointPrior
from privopt.status import Status

__all__ = ["BlahutArimoto", "MAX_ENTRIES"]

#: Largest ``|X|·|U|`` handled (dense kernel and mechanism, ~8 bytes each, ×4).
MAX_ENTRIES = 2**25

_STATUS = {
    "optimal": Status.OPTIMAL,
    "infeasible": Status.INFEASIBLE,
    "time_limit": Status.TIME_LIMIT,
    "failed": Status.FAILED,
}


class BlahutArimoto(Method):
    """Blahut–Arimoto with Newton polishing and a certified slope search."""

    name = "blahut-arimoto"
    priority = 10
    warm_starts = True
    description = (
        "Blahut–Arimoto with projected-Newton polishing and a certified slope search "
        "(min I(X;U) s.t. E[d] ≤ D, or min E[d] s.t. I ≤ ε); single-secret priors"
    )

    def unsupported(self, request) -> str | None:
        if request.notion.name != "mutual_information":
            return "solves mutual_information only"
        if isinstance(request.prior, JointPrior):
            return "needs a single secret (no joint prior)"
        if not request.is_plain:
            return "takes no extra distortion budgets or added constraints"
        if request.entries > MAX_ENTRIES:
            return f"{request.entries:.0f} mechanism entries exceed its limit {MAX_ENTRIES}"
        if request.distortion.is_database_hamming and request.prior.size > 2**14:
            return "the dense database distortion would not fit in memory"
        return None

    def auto(self, request, *, sweep: bool = False) -> bool:
        # certified by its duality gap and faster than the exponential-cone program at every
        # size measured from k = 30 on (benchmarks/README.md: ×11 at k = 30, ×4102 at k = 200)
        return True

    def solve(self, task: Task) -> Answer:
        request = task.request
        task.emit(self.name, "start")
        kwargs = dict(
            tol=min(task.tol, 1e-9),
            warm_start=task.warm,
            deadline=task.deadline if task.deadline.limited else None,
            **task.cache.get(("options", self.name), {}),
        )
        if task.budget is not None:
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
            answer.certificate = Certificate(
                float(res.certificate["lower_bound"]), "Blahut–Arimoto dual bound (Csiszár)"
            )
        return answer


register(BlahutArimoto())
register_alias("blahut_arimoto", "blahut-arimoto")
