"""Structured mechanisms: the compact forms the fast paths answer with, read back from JSON.

A structured mechanism offers ``row(i)``, ``sample``, ``to_dense``, ``describe()`` (a
JSON-ready dict with its ``kind``) and ``leakage(prior)`` (the standard leakage report,
computed on the structure). :func:`from_description` turns a description back into the
mechanism (``privopt audit --mechanism`` reads what ``privopt solve --out`` wrote).
"""

from __future__ import annotations

__all__ = ["STRUCTURED_KINDS", "from_description"]

from privopt.errors import InputError
from privopt.methods.sparse_lp.translation import TranslationInvariantMechanism
from privopt.methods.symmetric.mechanism import SymmetricMechanism

#: Description ``kind`` → the class that reads it.
STRUCTURED_KINDS = {
    SymmetricMechanism.kind: SymmetricMechanism,
    TranslationInvariantMechanism.kind: TranslationInvariantMechanism,
}


def from_description(data: dict):
    """The structured mechanism described by ``data`` (from ``describe()``).

    Parameters
    ----------
    data : dict
        With a ``kind`` of :data:`STRUCTURED_KINDS`.

    Returns
    -------
    SymmetricMechanism or TranslationInvariantMechanism
    """
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in STRUCTURED_KINDS:
        raise InputError(
            f"unknown structured mechanism kind {kind!r}; known: {', '.join(STRUCTURED_KINDS)}",
            "structured_mechanism.kind",
        )
    return STRUCTURED_KINDS[kind].from_description(data)
