"""Guarantees that are audits, not design constraints: why, and the convex stand-ins.

(ε,δ)-PML ([Saeidian-PML] Def. 5), (ε,δ)-EML (Defs 10–11) and persuasive privacy or
probabilistic DP with δ > 0 ([Bon-Persuasive] Defs 3 and 7) define non-convex sets of
mechanisms: two mechanisms can meet the guarantee while their midpoint does not
(e.g. for (ln 1.2, 0.1)-PML with a uniform binary prior, ``[[.2,0,.8],[0,0,1]]`` and
``[[.6,0,.4],[.4,0,.6]]`` both meet it and their midpoint has an output of mass 0.3 with
leakage ln 4/3). They are measured exactly (:func:`privopt.measures.pml_tail_level`,
:func:`privopt.measures.eml_level`, :func:`privopt.audit.persuasive.probabilistic_dp_level`,
:func:`privopt.audit.guarantees.pml_least_delta`, …) but :func:`privopt.design` refuses them with
an :class:`~privopt.errors.InputError` that names the reason and the convex stand-ins the
papers give:

* a **sufficient** condition, designed exactly: ε-PML implies (ε,δ)-PML and (ε,δ)-EML for
  every δ (the EML level does not increase with δ, [Saeidian-PML] Theorem 3); pure ε-DP
  implies (ε,δ)-probabilistic DP; ε-PML under one prior is (L, {P_X}, ε, 0)-persuasive
  privacy;
* a **necessary** condition, a relaxation whose answer must be audited: (ε,δ)-PML implies
  maximal leakage ``L ≤ ln(e^ε + δ e^{ε_max})`` ([Saeidian-PML] Lemma 3(2)), so the
  ``maximal_leakage`` design at that level bounds the least distortion from below.
"""

from __future__ import annotations

__all__ = ["NON_CONVEX_GUARANTEES", "refuse_non_convex", "refuse_delta"]

from privopt.errors import InputError

_PML_STAND_INS = (
    "convex stand-ins: notion 'pml' at the same ε (sufficient: ε-PML implies (ε,δ)-PML and "
    "(ε,δ)-EML for every δ), or notion 'maximal_leakage' at ln(e^ε + δ·e^ε_max) (necessary, "
    "Lemma 3(2) of the PML paper: a lower bound on the distortion; audit its answer with "
    "privopt.measures.pml_tail_level / eml_level)"
)
_PP_STAND_INS = (
    "convex stand-ins: δ = 0, i.e. notion 'dp' (pure ε-DP implies (ε,δ)-probabilistic DP and "
    "is persuasive privacy over two-point priors, Prop. 6 of the persuasive-privacy paper), "
    "'pml' (one prior) or 'ldp' (every prior); audit the answer with "
    "privopt.audit.persuasive.probabilistic_dp_delta / privopt.measures.persuasive_privacy_delta"
)

#: Name → why it cannot be designed, and what to design instead.
NON_CONVEX_GUARANTEES: dict[str, str] = {
    "pml_tail": "(ε,δ)-PML with δ > 0 is not a convex constraint (a union of polytopes: two "
    "mechanisms can meet it while their midpoint does not); " + _PML_STAND_INS,
    "eml": "(ε,δ)-EML with δ > 0 is not a convex constraint (its level is not quasi-convex in "
    "the mechanism); " + _PML_STAND_INS,
    "persuasive_privacy": "persuasive privacy with δ > 0 is a chance constraint, not convex; "
    + _PP_STAND_INS,
    "probabilistic_dp": "(ε,δ)-probabilistic DP with δ > 0 is a chance constraint, not convex; "
    + _PP_STAND_INS,
}
_ALIASES = {
    "tail_pml": "pml_tail",
    "approximate_pml": "pml_tail",
    "event_pml": "eml",
    "pp": "persuasive_privacy",
    "pdp": "probabilistic_dp",
}
#: The notions whose δ-versions are the guarantees above.
_DELTA_OF = {
    "pml": "pml_tail",
    "dp": "probabilistic_dp",
    "ldp": "probabilistic_dp",
    "robust_pml": "pml_tail",
}


def refuse_non_convex(name: str) -> None:
    """Raise the explanatory :class:`~privopt.errors.InputError` if ``name`` is one of the
    non-convex guarantees (or an alias); return otherwise.

    Parameters
    ----------
    name : str
        A notion name as given by the user.

    Returns
    -------
    None
        Returns only when ``name`` is not a refused guarantee.
    """
    key = _ALIASES.get(str(name), str(name))
    if key in NON_CONVEX_GUARANTEES:
        raise InputError(
            f"{name!r} cannot be designed: {NON_CONVEX_GUARANTEES[key]}", "privacy.notion"
        )


def refuse_delta(notion_name: str, delta: float | None) -> None:
    """Refuse a design with ``delta > 0`` (the δ-version of a notion is not convex); δ = 0
    (or ``None``) is the notion itself and passes.

    Parameters
    ----------
    notion_name : str
        The canonical notion name.
    delta : float or None
        The δ given.

    Returns
    -------
    None
        Returns only for δ = 0 or ``None``.
    """
    if delta is None:
        return
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InputError(f"expected a number in [0, 1], got {delta!r}", "privacy.delta") from None
    if not 0.0 <= value <= 1.0:
        raise InputError(f"must lie in [0, 1], got {value}", "privacy.delta")
    if value == 0.0:
        return
    key = _DELTA_OF.get(notion_name)
    reason = (
        NON_CONVEX_GUARANTEES[key]
        if key
        else f"the notion {notion_name!r} has no δ-version; δ is for 'pml' ((ε,δ)-PML) and "
        "'dp' (probabilistic DP), and only in audits"
    )
    raise InputError(f"δ = {value:g} > 0 cannot be designed: {reason}", "privacy.delta")
