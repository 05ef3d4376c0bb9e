"""``privopt audit``: measure every notion, the information measures and the tail audits on
a given mechanism (the file's ``[mechanism]``, or ``--mechanism`` as written by ``solve
--out``), the bound of a ``[composition]``, and check the file's ``[reference]``."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt._io import escape_text
from privopt.errors import InputError

from ._common import _about, _reference_exit, check_reference, load_mechanism, load_problem
from ._output import (
    _fmt,
    _header,
    _leakage_lines,
    _lines,
    _matrix_lines,
    _print_json,
    _reference_lines,
    _structure_lines,
)

if TYPE_CHECKING:  # pragma: no cover
    from privopt.io.files import ProblemSpec


def cmd_audit(args: argparse.Namespace) -> int:
    """``privopt audit``: measure every notion on a given mechanism.

    Parameters
    ----------
    args : argparse.Namespace
        FILE (with ``[mechanism]`` unless ``--mechanism`` is given), ``--json``, ``--unit``.

    Returns
    -------
    int
        The exit code: 0, or 4 when the audit contradicts the file's ``[reference]``.
    """
    spec = load_problem(args.file, "audit" if args.mechanism is None else "any")
    if args.mechanism is None:
        mech = spec.mechanism
    else:
        mech = load_mechanism(args.mechanism)
        if hasattr(mech, "describe"):  # held in structured form
            return _finish_structured_audit(spec, mech, args)
        _check_shape(spec, mech, args.mechanism)
    out = _audit(spec, mech)
    if spec.composition is not None and args.mechanism is None:
        with _about(spec.path):
            out["composition"] = _composition_levels(spec)
    checks = check_reference(spec.reference, out) if spec.reference else []
    if checks:
        out["reference_check"] = {"ok": all(c["ok"] for c in checks), "checks": checks}

    def sections(shown: dict) -> list[str]:
        lines = ["", "mechanism p(u|y)  (rows: inputs y, columns: outputs u)"]
        lines += _matrix_lines(mech.matrix, shown["inputs"], shown["outputs"])
        if "composition" in shown:
            lines += [""] + _composition_lines(shown["composition"])
        lines += [""] + _audit_leakage_lines(spec, shown, args.unit)
        lines += ["", f"PML per output ℓ(X→u) ({args.unit})"]
        lines += [
            f"  {escape_text(u):<12}{_fmt(v, 12)}"
            for u, v in zip(shown["outputs"], shown["pml_per_output"], strict=True)
        ]
        lines += _paper_audit_lines(shown)
        if shown["distortion"] is not None:
            lines += ["", f"distortion  E[d] = {_fmt(shown['distortion'], 12)}"]
        return lines

    return _finish_audit(spec, out, checks, args, sections)


def _check_shape(spec: ProblemSpec, mech, path: str) -> None:
    """Refuse a ``--mechanism`` whose rows are not the prior's inputs or whose columns are not
    the distortion's outputs."""
    if mech.n_inputs != spec.prior.n_inputs:
        raise InputError(
            f"has {mech.n_inputs} rows but the prior of {spec.path} has "
            f"{spec.prior.n_inputs} inputs",
            path,
        )
    if spec.distortion is not None and spec.distortion.n_outputs != mech.n_outputs:
        raise InputError(
            f"has {mech.n_outputs} outputs but the distortion of {spec.path} has "
            f"{spec.distortion.n_outputs}",
            path,
        )


def _finish_structured_audit(spec: ProblemSpec, mech, args: argparse.Namespace) -> int:
    """``privopt audit --mechanism`` of a mechanism held in structured form."""
    if mech.shape[0] != spec.prior.n_inputs:
        raise InputError(
            f"is a mechanism on {mech.shape[0]} inputs but the prior of {spec.path} has "
            f"{spec.prior.n_inputs}",
            args.mechanism,
        )
    out = _audit_structured(spec, mech)
    checks = check_reference(spec.reference, out) if spec.reference else []

    def sections(shown: dict) -> list[str]:
        lines = ["", f"mechanism held in structured form ({mech!r})"]
        lines += _structure_lines(shown["structured_mechanism"])
        return lines + [""] + _audit_leakage_lines(spec, shown, args.unit)

    return _finish_audit(spec, out, checks, args, sections)


def _finish_audit(
    spec: ProblemSpec,
    out: dict,
    checks: list[dict],
    args: argparse.Namespace,
    sections: Callable[[dict], list[str]],
) -> int:
    """Print the audit ``out`` in ``--unit``: as JSON, or the file's header, the report's
    ``sections`` and the reference checks; the exit code (4 on a reference mismatch)."""
    from privopt.solve.units import json_in_unit

    shown = json_in_unit(out, args.unit)  # --unit: the levels shown, after the reference check
    if args.json:
        _print_json(shown)
    else:
        lines = _header(spec) + sections(shown)
        if checks:
            lines += [""] + _reference_lines(spec, checks)
        print(_lines(lines))
    return _reference_exit(spec, checks, 0)


def _audit_leakage_lines(spec: ProblemSpec, out: dict, unit: str) -> list[str]:
    """The leakage table of an audit, the file's notion marked."""
    return _leakage_lines(out["leakage"], spec.notion, spec.prior, spec.neighbors, unit)


def _audit(spec: ProblemSpec, mechanism) -> dict:
    from privopt import measures
    from privopt.solve import leakage_report

    with _about(spec.path):
        matrix = mechanism.matrix
        leakage = leakage_report(spec.prior, matrix, spec.neighbors)
        leakage.update(_optioned_levels(spec, matrix))
        out: dict[str, Any] = {
            "leakage": leakage,
            "distortion": (
                measures.expected_distortion(spec.prior, matrix, spec.distortion)
                if spec.distortion is not None
                else None
            ),
            "pml_per_output": measures.pml_per_output(spec.prior, matrix).tolist(),
            "mechanism": matrix.tolist(),
            "inputs": list(mechanism.input_labels),
            "outputs": list(mechanism.output_labels),
            "file": spec.path,
        }
        if spec.notion is not None:
            out["notion"] = spec.notion
            out["epsilon"] = leakage.get(spec.notion)
        out.update(_paper_audits(spec, matrix))
    return out


def _audit_structured(spec: ProblemSpec, mechanism) -> dict:
    """The audit of a mechanism held in structured form (``solve --out x.json`` of a large
    answer): the leakage report computed on the structure, nothing of the full size built."""
    with _about(spec.path):
        leakage = mechanism.leakage(spec.prior)
    out: dict[str, Any] = {
        "leakage": leakage,
        "distortion": None,
        "structured_mechanism": mechanism.describe(),
        "file": spec.path,
    }
    if spec.notion is not None:
        out["notion"] = spec.notion
        out["epsilon"] = leakage.get(spec.notion)
    return out


def _optioned_levels(spec: ProblemSpec, matrix) -> dict[str, float]:
    """The levels of the notions that take options, where the file gives them all
    (e.g. ``robust_pml`` with ``[privacy] priors``)."""
    from privopt.notions import get_notion, notion_names

    out = {}
    for name in notion_names():
        notion = get_notion(name)
        declared = [o.name for o in notion.options]
        if not declared or not all(o.name in spec.options for o in notion.options if o.required):
            continue
        given = {k: spec.options[k] for k in declared if k in spec.options}
        if not given:
            continue
        neighbors = spec.neighbors if notion.uses_neighbors else None
        out[name] = float(notion.measure(spec.prior, matrix, neighbors, **given))
    return out


def _paper_audits(spec: ProblemSpec, matrix) -> dict[str, Any]:
    """The audits beyond the leakage report: information measures always, the tail and event
    levels at ``[privacy] delta``, the least δ at ``[privacy] epsilon``."""
    from privopt import measures
    from privopt.audit import disclosure, f_information, guarantees, persuasive

    prior = spec.prior
    out: dict[str, Any] = {
        "information": {
            "total_variation": f_information.total_variation_privacy(prior, matrix),
            "chi_square": f_information.chi_square_information(prior, matrix),
            "expected_pml": f_information.expected_pml(prior, matrix),
            "min_entropy": disclosure.min_entropy(prior.secret_probs),
            "singles_out": bool(disclosure.singles_out(prior, matrix)),
        }
    }
    if spec.delta is not None:
        tail: dict[str, Any] = {
            "delta": spec.delta,
            "pml_tail": measures.pml_tail_level(prior, matrix, spec.delta),
            "eml": measures.eml_level(prior, matrix, spec.delta),
        }
        if spec.delta < 1:
            tail["approximate_max_information"] = f_information.approximate_max_information(
                prior, matrix, spec.delta
            )
        if prior.observation is None:  # probabilistic DP is about the mechanism's own rows
            from privopt.validation import resolve_neighbors

            rel = resolve_neighbors(prior, spec.neighbors)
            tail["probabilistic_dp"] = persuasive.probabilistic_dp_level(
                matrix, spec.delta, rel.restricted(np.flatnonzero(prior.secret_probs > 0))
            )
        out["tail"] = tail
    priors = spec.options.get("priors")
    if isinstance(priors, list) and spec.options.get("about", "secret") == "secret":
        # the PML supremum over the convex hull of the listed priors (robust_pml's class)
        out["information"]["robust_pml_hull"] = measures.robust_pml_hull_level(
            prior, matrix, priors
        )
    if spec.epsilon is not None and math.isfinite(spec.epsilon):
        out["least_delta"] = {
            "epsilon": spec.epsilon,
            "pml_tail": guarantees.pml_least_delta(prior, matrix, spec.epsilon),
            "eml": guarantees.eml_least_delta(prior, matrix, spec.epsilon),
        }
    return out


def _paper_audit_lines(out: dict) -> list[str]:
    unit = out.get("unit", "nats")
    lines = ["", f"information measures (levels in {unit}; total variation and χ² have no unit)"]
    for key, value in out["information"].items():
        shown = ("yes" if value else "no") if isinstance(value, bool) else _fmt(value, 12)
        lines.append(f"  {key:<28}{shown}")
    if "tail" in out:
        lines += ["", f"tail and event audits at δ = {_fmt(out['tail']['delta'], 6)} ({unit})"]
        lines += [f"  {k:<28}{_fmt(v, 12)}" for k, v in out["tail"].items() if k != "delta"]
    if "least_delta" in out:
        lines += ["", f"least δ at ε = {_fmt(out['least_delta']['epsilon'], 6)} {unit}"]
        lines += [
            f"  {k:<28}{_fmt(v, 12)}" for k, v in out["least_delta"].items() if k != "epsilon"
        ]
    return lines


def _composition_levels(spec: ProblemSpec) -> dict:
    """The PML levels of the stages of ``[composition]`` and the papers' bound on the joint
    release ([Saeidian-PML]: Theorem 4(1) for adaptive and parallel releases, the
    post-processing inequality of Lemma 1 for ``then``)."""
    from privopt import measures

    comp = spec.composition
    first = comp["first"]
    if comp["kind"] == "then":
        eps1 = measures.pml_level(spec.prior, first.matrix)
        return {
            "kind": "then",
            "first": eps1,
            "bound": eps1,
            "joint": measures.pml_level(spec.prior, comp["mechanism"].matrix),
            "theorem": "post-processing: ℓ(X→z) ≤ max_y ℓ(X→y) (Saeidian et al. 2023, Lemma 1)",
        }
    second = comp["second"]
    if comp["kind"] == "parallel":
        second = [second] * first.n_outputs
    levels = measures.adaptive_composition_levels(
        spec.prior, first.matrix, [s.matrix for s in second]
    )
    levels["kind"] = comp["kind"]
    levels["theorem"] = (
        "ε₁-PML then ε₂-PML given y gives (ε₁+ε₂)-PML (Saeidian et al. 2023, Theorem 4(1))"
    )
    return levels


def _composition_lines(comp: dict) -> list[str]:
    lines = [f"composition ({comp['kind']})"]
    lines.append(f"  first stage PML level           {_fmt(comp['first'], 12)}")
    if "second" in comp:
        lines.append(f"  second stage PML level (max_y)  {_fmt(comp['second'], 12)}")
    lines.append(f"  bound on the joint release      {_fmt(comp['bound'], 12)}")
    holds = "holds" if comp["joint"] <= comp["bound"] + 1e-9 else "VIOLATED"
    lines.append(f"  PML level of the joint release  {_fmt(comp['joint'], 12)}  ({holds})")
    lines.append(f"  {comp['theorem']}")
    return lines
