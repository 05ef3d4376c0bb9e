"""``[reference]``: what the answer must be, and the comparison of a result with it
(:func:`check_reference`)."""

from __future__ import annotations

import math
from typing import Any

from privopt.errors import InputError
from privopt.notions import get_notion

from ._reader import _Reader

#: Default tolerance of a ``[reference]`` comparison.
DEFAULT_REFERENCE_TOLERANCE = 1e-6


class _ReferenceSection(_Reader):
    """``[reference]``: what the answer must be."""

    def reference(self, t: dict) -> dict:
        out: dict[str, Any] = {}
        for key in ("distortion", "epsilon", "least_achievable"):
            if key in t:
                out[key] = self.number(t, key, "reference", allow_inf=True)
        if "tolerance" in t:
            tol = self.number(t, "tolerance", "reference")
            if tol <= 0:
                raise self.err("reference.tolerance", f"must be > 0, got {tol}")
            out["tolerance"] = tol
        for key in ("what", "status"):
            value = self.string(t, key, "reference")
            if value is not None:
                out[key] = value
        if out.get("status") not in (None, "optimal", "infeasible"):
            raise self.err("reference.status", 'expected "optimal" or "infeasible"')
        if "pml_per_output" in t:
            out["pml_per_output"] = [
                float(v) for v in self.vector(t, "pml_per_output", "reference")
            ]
        if "leakage" in t:
            leak = t["leakage"]
            if not isinstance(leak, dict):
                raise self.err("reference.leakage", "expected a table notion = value")
            out["leakage"] = {}
            for key in leak:
                try:
                    canonical = get_notion(key).name
                except InputError as exc:
                    message = str(exc).split(": ", 1)[-1]
                    raise self.err(f"reference.leakage.{key}", message) from None
                out["leakage"][canonical] = self.number(
                    leak, key, "reference.leakage", allow_inf=True
                )
        return out


def check_reference(reference: dict, result: dict) -> list[dict]:
    """Compare a result (the JSON object of ``solve`` or ``audit``) with a ``[reference]``.

    Parameters
    ----------
    reference : dict
        The ``[reference]`` table (:attr:`ProblemSpec.reference`).
    result : dict
        The JSON object of the result.

    Returns
    -------
    list of dict
        One record ``{"key", "expected", "got", "ok"}`` per quantity the reference gives:
        ``status`` (when the result has one) and ``least_achievable``; ``distortion``,
        ``epsilon``, ``leakage.<notion>`` and ``pml_per_output`` only when the result has an
        answer (or no status). Numbers agree when their absolute difference is within
        ``reference.tolerance`` (default 1e-6).
    """
    tol = reference.get("tolerance", DEFAULT_REFERENCE_TOLERANCE)
    checks: list[dict] = []

    def close(expected, got) -> bool:
        if got is None or expected is None:
            return got is None and expected is None
        if math.isinf(expected) or math.isinf(got):
            return expected == got
        return abs(got - expected) <= tol

    def add(key, expected, got, ok=None):
        checks.append(
            {
                "key": key,
                "expected": expected,
                "got": got,
                "ok": bool(close(expected, got) if ok is None else ok),
            }
        )

    status = result.get("status")
    if "status" in reference and status is not None:
        add("status", reference["status"], status, reference["status"] == status)
    if "least_achievable" in reference:
        add("least_achievable", reference["least_achievable"], result.get("least_achievable"))
    if status in (None, "optimal", "optimal_inaccurate"):
        for key in ("distortion", "epsilon"):
            if key in reference:
                add(key, reference[key], result.get(key))
        for key, value in reference.get("leakage", {}).items():
            got = result.get("leakage", {}).get(key)
            add(f"leakage.{key}", value, math.inf if got is None and value == math.inf else got)
        if "pml_per_output" in reference:
            expected = reference["pml_per_output"]
            got = result.get("pml_per_output")
            ok = (
                got is not None
                and len(got) == len(expected)
                and all(close(e, g) for e, g in zip(expected, got, strict=True))
            )
            add("pml_per_output", expected, got, ok)
    return checks
