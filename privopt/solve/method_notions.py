"""Which method solves which notion (``privopt solvers``): each method asked, through its own
applicability rule (:func:`~privopt.solve.selection.why_not`), about one small request per
notion and kind of prior.

A method is listed for a notion when it can solve that notion on at least one kind of prior
(a single secret with a uniform or a non-uniform pmf, a joint prior of ``S`` and ``Y``, a
database with i.i.d. rows), and the kinds are named; whether it applies to a given request
still depends on that request (``po.design`` says why not when it is named but does not
apply).
"""

from __future__ import annotations

__all__ = ["PRIOR_KINDS", "method_notions", "notions_text", "small_request"]

from privopt.errors import InputError
from privopt.methods import METHODS
from privopt.model import DatabasePrior, JointPrior, as_prior
from privopt.notions import get_notion, notion_names
from privopt.request import DesignRequest, prepare_request
from privopt.solve.selection import why_not

#: The kinds of prior each method is asked about, with a small instance of each.
PRIOR_KINDS = {
    "uniform": lambda: [0.25, 0.25, 0.25, 0.25],
    "single": lambda: [0.4, 0.3, 0.2, 0.1],
    "joint": lambda: JointPrior([[0.3, 0.1], [0.2, 0.4]]),
    "database": lambda: DatabasePrior(m=2, n=2, row_probs=[0.6, 0.4]),
}


def small_request(
    kind: str, notion: str, *, epsilon: float | None = 1.0, max_distortion: float | None = None
) -> DesignRequest:
    """A small request of ``notion`` on the kind of prior ``kind``, with Hamming distortion.

    Parameters
    ----------
    kind : str
        A key of :data:`PRIOR_KINDS`.
    notion : str
    epsilon : float, optional
        The level (ignored when ``max_distortion`` is given).
    max_distortion : float, optional
        A budget instead of a level.

    Returns
    -------
    DesignRequest
        With the options the notion gives for an example request
        (:meth:`~privopt.notions.Notion.sample_options`).

    Raises
    ------
    InputError
        When the notion does not take this kind of prior.
    """
    prior = PRIOR_KINDS[kind]()
    options = get_notion(notion).sample_options(as_prior(prior))
    point = {"epsilon": epsilon} if max_distortion is None else {"max_distortion": max_distortion}
    return prepare_request(prior, "hamming", notion, **point, **options)


def _request(kind: str, notion: str, mode: str) -> DesignRequest:
    if mode == "epsilon":
        return small_request(kind, notion, epsilon=1.0)
    return small_request(kind, notion, max_distortion=0.5)


def method_notions() -> dict[str, dict[str, list[str]]]:
    """For each registered method, the notions it solves and on which kinds of prior.

    Returns
    -------
    dict
        ``{method name: {notion name: [prior kinds]}}`` with the kinds of
        :data:`PRIOR_KINDS` on which the method accepts a level (ε) request of that notion;
        notions it never solves are left out.
    """
    requests = {}
    for notion in notion_names():
        for kind in PRIOR_KINDS:
            try:
                requests[notion, kind] = _request(kind, notion, "epsilon")
            except InputError:  # a notion that does not take this kind of prior
                continue
    table: dict[str, dict[str, list[str]]] = {}
    for name, method in METHODS.items():
        solves: dict[str, list[str]] = {}
        for (notion, kind), request in requests.items():
            if why_not(method, request) is None:
                solves.setdefault(notion, []).append(kind)
        table[name] = solves
    return table


#: How the kinds of prior read in ``privopt solvers``.
KIND_TEXT = {
    "uniform": "uniform single secret",
    "single": "single secret",
    "joint": "joint (S, Y)",
    "database": "database",
}


def notions_text(solves: dict[str, list[str]]) -> str:
    """One line for ``privopt solvers``: the notions, grouped by the kinds of prior.

    Parameters
    ----------
    solves : dict
        One method's entry of :func:`method_notions`.

    Returns
    -------
    str
        E.g. ``"dp, identifiability (single secret, database); mutual_information (any
        prior)"``; ``"none"`` when empty.
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for notion, kinds in solves.items():
        groups.setdefault(tuple(kinds), []).append(notion)
    parts = []
    for kinds, notions in groups.items():
        if set(kinds) == set(PRIOR_KINDS):
            where = "any prior"
        else:
            shown = [k for k in kinds if not (k == "uniform" and "single" in kinds)]
            where = ", ".join(KIND_TEXT[k] for k in shown)
        parts.append(f"{', '.join(notions)} ({where})")
    return "; ".join(parts) or "none"
