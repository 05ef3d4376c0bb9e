"""Levels in bits: ``unit="bits"`` of :func:`privopt.design`, :func:`privopt.sweep`,
:func:`privopt.leakage_report` and ``privopt solve|audit --unit bits``.

privopt computes in nats; a level in bits is the level in nats divided by ``ln 2``. What is
converted: the level asked for (``epsilon``), the level of the answer (``epsilon``), the
leakage of every notion, the least achievable level of an infeasible request, the PML per
output of an audit. What stays in nats whatever the unit: the certificate, the line search's
bracket and the closed-form checks (they are privopt's internal evidence, documented in
nats). Distortions have no unit.
"""

from __future__ import annotations

__all__ = [
    "UNITS",
    "check_unit",
    "from_nats",
    "least_level_message",
    "json_in_unit",
    "records_in_unit",
    "result_in_unit",
    "to_nats",
]

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from privopt.errors import InputError, close_matches
from privopt.measures import NATS_PER_BIT

#: The units of a level.
UNITS = ("nats", "bits")


def check_unit(unit: Any, field: str = "unit") -> str:
    """``unit`` if it is ``"nats"`` or ``"bits"``.

    Parameters
    ----------
    unit : object
    field : str
        The argument or option named in the error.

    Returns
    -------
    str

    Raises
    ------
    InputError
        For any other value.
    """
    if unit not in UNITS:
        raise InputError(
            f"unknown unit {unit!r}: use 'nats' or 'bits'",
            field,
            suggestions=close_matches(unit, UNITS),
        )
    return unit


def to_nats(value: float | None, unit: str) -> float | None:
    """A level given in ``unit``, in nats (``None`` stays ``None``).

    Parameters
    ----------
    value : float or None
        The level, in ``unit``.
    unit : {"nats", "bits"}
        The unit ``value`` is given in.

    Returns
    -------
    float or None
        ``value`` in nats (``value`` itself when ``unit`` is ``"nats"``).
    """
    if value is None or unit == "nats":
        return value
    return float(value) * NATS_PER_BIT


def from_nats(value: float | None, unit: str) -> float | None:
    """A level in nats, in ``unit`` (``None`` stays ``None``; ``inf`` stays ``inf``).

    Parameters
    ----------
    value : float or None
        The level, in nats.
    unit : {"nats", "bits"}
        The unit to give it in.

    Returns
    -------
    float or None
        ``value`` in ``unit`` (``value`` itself when ``unit`` is ``"nats"``).
    """
    if value is None or unit == "nats":
        return value
    return float(value) / NATS_PER_BIT


class _LeakageIn(Mapping):
    """A leakage mapping (notion → level in nats) read in another unit."""

    def __init__(self, leakage: Mapping[str, float], unit: str):
        self._leakage = leakage
        self._unit = unit

    def __getitem__(self, name: str) -> float:
        return from_nats(self._leakage[name], self._unit)

    def __iter__(self) -> Iterator[str]:
        return iter(self._leakage)

    def __len__(self) -> int:
        return len(self._leakage)

    def __repr__(self) -> str:
        return repr(dict(self))


def least_level_message(message: str, least: float, unit: str) -> str:
    """An infeasibility message whose least achievable level is given in ``unit``.

    Parameters
    ----------
    message : str
        The message as raised (its level in nats, ``"… (least achievable epsilon: x)"``).
    least : float
        The least achievable level in ``unit``.
    unit : {"nats", "bits"}

    Returns
    -------
    str
        The reason (its numbers stay in nats, and say so), then ``"(least achievable
        epsilon in <unit>: <least>)"``.
    """
    reason = message.split(" (least achievable")[0]
    if unit != "nats":
        reason += " nats"
    return f"{reason} (least achievable epsilon in {unit}: {least:.12g})"


def result_in_unit(result, unit: str, requested: float | None = None):
    """A :class:`~privopt.DesignResult` with its levels in ``unit``.

    Parameters
    ----------
    result : DesignResult
        In nats.
    unit : {"nats", "bits"}
    requested : float, optional
        The level as the user gave it (kept exactly instead of converted back).

    Returns
    -------
    DesignResult
        ``result`` itself for nats; otherwise a copy whose ``epsilon``,
        ``requested["epsilon"]``, ``leakage`` and (for a level) ``least_achievable`` are in
        ``unit``, with ``unit`` set.
    """
    if unit == "nats":
        return result
    asked = dict(result.requested)
    if "epsilon" in asked:
        asked["epsilon"] = requested if requested is not None else from_nats(asked["epsilon"], unit)
    least, message = result.least_achievable, result.message
    if result.least_achievable_quantity == "epsilon" and least is not None:
        least = from_nats(least, unit)
        message = least_level_message(message, least, unit)
    warm = result.warm_state
    copy = dataclasses.replace(
        result,
        epsilon=from_nats(result.epsilon, unit),
        requested=asked,
        leakage=_LeakageIn(result.leakage, unit) if result.leakage else result.leakage,
        least_achievable=least,
        message=message,
        unit=unit,
    )
    copy.warm_state = warm
    return copy


def records_in_unit(records: list[dict], mode: str, unit: str, values: list | None = None):
    """Curve records with their levels in ``unit`` (in place; also returned).

    Parameters
    ----------
    records : list of dict
        In nats.
    mode : {"epsilon", "max_distortion"}
    unit : {"nats", "bits"}
    values : list, optional
        The points as the user gave them (``requested_epsilon`` is set from them).

    Returns
    -------
    list of dict
    """
    if unit == "nats":
        return records
    for index, record in enumerate(records):
        record["epsilon"] = from_nats(record.get("epsilon"), unit)
        if mode == "epsilon":
            if values is not None:
                record["requested_epsilon"] = values[index]
            if record.get("least_achievable") is not None:
                record["least_achievable"] = from_nats(record["least_achievable"], unit)
        record["unit"] = unit
    return records


#: The entries of ``privopt audit``'s further sections that are levels (nats), by section;
#: the others are probabilities (δ), a total variation or a χ² value, which have no unit.
AUDIT_LEVELS = {
    "information": ("expected_pml", "min_entropy", "robust_pml_hull"),
    "tail": ("pml_tail", "eml", "approximate_max_information", "probabilistic_dp"),
    "least_delta": ("epsilon",),
}


def json_in_unit(out: dict, unit: str) -> dict:
    """The JSON object of ``privopt solve`` or ``audit`` with its levels in ``unit``.

    Parameters
    ----------
    out : dict
        In nats.
    unit : {"nats", "bits"}

    Returns
    -------
    dict
        A copy with ``epsilon``, ``requested.epsilon``, ``leakage``, ``pml_per_output``,
        the audit levels of :data:`AUDIT_LEVELS` and (for a level) ``least_achievable``
        converted, and ``"unit"`` set; ``out`` itself for
        nats. Infinite levels stay infinite.
    """
    if unit == "nats":
        return out

    def conv(value):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return from_nats(value, unit)  # inf stays inf (JSON output writes it as null)
        return value

    copy = dict(out)
    copy["unit"] = unit
    if "epsilon" in copy:
        copy["epsilon"] = conv(copy["epsilon"])
    if isinstance(copy.get("requested"), dict) and "epsilon" in copy["requested"]:
        copy["requested"] = {**copy["requested"], "epsilon": conv(copy["requested"]["epsilon"])}
    if isinstance(copy.get("leakage"), dict):
        copy["leakage"] = {k: conv(v) for k, v in copy["leakage"].items()}
    if isinstance(copy.get("pml_per_output"), list):
        copy["pml_per_output"] = [conv(v) for v in copy["pml_per_output"]]
    if copy.get("least_achievable_quantity") == "epsilon":
        copy["least_achievable"] = conv(copy.get("least_achievable"))
    for section, keys in AUDIT_LEVELS.items():
        if isinstance(copy.get(section), dict):
            copy[section] = {k: conv(v) if k in keys else v for k, v in copy[section].items()}
    return copy
