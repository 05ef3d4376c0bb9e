"""The optimal location mechanism beside the standard baseline, at the same guarantee.

:func:`compare_with_laplace` reports, for one map and one level ε of metric privacy:

* the **optimal design** (:func:`privopt.design` with ``metric_dp``, certified);
* the **planar Laplace mechanism** of [Andres-Geo], discretised to the map's outputs and
  truncated to the map (:func:`privopt.model.planar_laplace.planar_laplace`), at the largest
  level ``ε'`` per unit of its plane for which it is ε·d-private on the secrets;
* the planar Laplace mechanism followed by the **optimal remap** of
  [Chatzikokolakis-ElSalamouny-Palamidessi] (:func:`privopt.measures.bayes_remap`): each
  output sent to the output of least expected loss under the posterior. A remap is
  post-processing, so the guarantee stands; it uses the prior.

Each with its quality loss ``E[d]`` (the problem's distortion), the expected error of the
Bayesian adversary of [Shokri-Theodorakopoulos-Troncoso-Hubaux-LeBoudec] (who knows the prior
and the mechanism and guesses the secret of least posterior expected distance:
:func:`privopt.measures.expected_inference_error`; larger is more private) and the level
re-measured on the metric (:func:`privopt.measures.metric_dp_level`). The remap and the
adversary both use the same prior as the design: figures for that prior.

**Calibration.** The Laplace mechanism is ``ε'·d_plane``-private for the Euclidean distance
of its plane; it is ε·d-private for the problem's metric ``d`` when ``ε'·d_plane ≤ ε·d`` on
every pair of secrets, so ``ε' = ε · min d / d_plane`` (over pairs at positive plane
distance): ``ε' = ε`` for the Euclidean distance and for the Manhattan one (the minimum is
on axis-aligned pairs), slightly different for the great-circle distance.

**The same guarantee with a spanner.** A design asked for level ε with ``spanner = δ`` holds
ε only on the spanner's edges; on every pair of places its guarantee is ``(ε·δ)·d``
([Bordenabe-Chatzikokolakis-Palamidessi], Sec. 5). The baseline is then calibrated to that
guaranteed level ε·δ, not to ε: both rows are held to the same ε·d-privacy on the whole
metric (:attr:`LaplaceComparison.guaranteed_level`). Calibrating the baseline to ε would hold
it to a stricter guarantee than the design and overstate the design's advantage.
"""

from __future__ import annotations

__all__ = [
    "MechanismSummary",
    "LaplaceComparison",
    "compare_with_laplace",
    "comparison_table",
    "laplace_level",
]

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privopt import measures
from privopt.errors import InputError
from privopt.model import Mechanism, Metric
from privopt.model.location import pairwise_distances
from privopt.model.planar_laplace import planar_laplace

#: Candidates per block when the adversary's guesses are scored (bounds the memory).
_CANDIDATE_BLOCK = 2048
#: Largest support whose constraint pairs are found to re-measure a level (``O(k³)`` work
#: for a dense metric: about a second at 1,000 places).
MEASURED_SUPPORT = 1000


@dataclass
class MechanismSummary:
    """One mechanism of a :class:`LaplaceComparison`.

    Attributes
    ----------
    name : str
        ``"optimal"``, ``"planar Laplace"`` or ``"planar Laplace + optimal remap"``.
    quality_loss : float or None
        ``E[d]`` with the problem's distortion.
    adversary_error : float or None
        The Bayesian adversary's expected error (its loss, by default the metric distance
        between the user's place and the guess); ``None`` without a dense mechanism.
    metric_level : float or None
        The least ε with the mechanism ε·d-private, re-measured on every pair of places of
        the problem's metric (for the optimal design, its verified level when the pairs are
        too costly to find: see :data:`MEASURED_SUPPORT`); ``None`` when not measured.
    mechanism : Mechanism or None
        ``secrets × outputs``.
    """

    name: str
    quality_loss: float | None
    adversary_error: float | None
    metric_level: float | None
    mechanism: Mechanism | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        """The figures as plain values (without the mechanism).

        Returns
        -------
        dict
            ``mechanism`` (the name), ``quality_loss``, ``adversary_error`` and
            ``metric_level``.
        """
        return {
            "mechanism": self.name,
            "quality_loss": self.quality_loss,
            "adversary_error": self.adversary_error,
            "metric_level": self.metric_level,
        }


@dataclass
class LaplaceComparison:
    """The optimal design beside the planar Laplace baseline (see the module docstring).

    Attributes
    ----------
    epsilon : float
        The level asked of the optimal design (per unit of the problem's metric; with a
        spanner, the level on the spanner's edges).
    laplace_epsilon : float
        ``ε'``: the Laplace mechanism's own level per unit of its plane, calibrated to
        ``guaranteed_level``.
    optimal : MechanismSummary or None
        The optimal design (``None`` when none was given or found).
    laplace : MechanismSummary
    laplace_remapped : MechanismSummary
    lower_bound : float or None
        The optimal design's certified lower bound on ``E[d]``, when it has one.
    status : str or None
        The optimal design's status.
    guaranteed_level : float or None
        The level of ε·d-privacy on every pair of places that every row is held to:
        ``epsilon`` without a spanner, ``epsilon · spanner_stretch`` with one (default
        ``None``: ``epsilon``).
    spanner_stretch : float or None
        The stretch ``δ > 1`` of the spanner the design was written on, ``None`` without one.
    """

    epsilon: float
    laplace_epsilon: float
    optimal: MechanismSummary | None
    laplace: MechanismSummary
    laplace_remapped: MechanismSummary
    lower_bound: float | None = None
    status: str | None = None
    guaranteed_level: float | None = None
    spanner_stretch: float | None = None

    def __post_init__(self) -> None:
        if self.guaranteed_level is None:
            self.guaranteed_level = self.epsilon

    @property
    def rows(self) -> list[MechanismSummary]:
        """The mechanisms compared, optimal first."""
        found = [self.optimal] if self.optimal is not None else []
        return found + [self.laplace, self.laplace_remapped]

    def to_dict(self) -> dict:
        """The comparison as plain values (the JSON of ``privopt solve``).

        Returns
        -------
        dict
            ``epsilon``, ``guaranteed_level``, ``spanner_stretch`` (``None`` without a
            spanner), ``laplace_epsilon``, ``status``, ``lower_bound`` and ``mechanisms``, one
            :meth:`MechanismSummary.to_dict` per mechanism, optimal first.
        """
        return {
            "epsilon": self.epsilon,
            "guaranteed_level": self.guaranteed_level,
            "spanner_stretch": self.spanner_stretch,
            "laplace_epsilon": self.laplace_epsilon,
            "status": self.status,
            "lower_bound": self.lower_bound,
            "mechanisms": [row.to_dict() for row in self.rows],
        }

    def table(self) -> str:
        """The comparison as an aligned text table (:func:`comparison_table`).

        Returns
        -------
        str
        """
        return comparison_table(self.to_dict())


def comparison_table(data: dict) -> str:
    """A :meth:`LaplaceComparison.to_dict` as an aligned text table (``privopt solve``).

    Parameters
    ----------
    data : dict
        The comparison's plain values (its level, the guaranteed level, the spanner's stretch,
        the Laplace level and one row per mechanism; a dict without ``guaranteed_level`` is
        read as one without a spanner).

    Returns
    -------
    str
        A heading line that names the level every row is held to on every pair of places
        (and, with a spanner, how it follows from the design's level on the spanner's
        edges), one line per mechanism, the optimal loss as a share of the others' at that
        level and a key to the columns.
    """

    def shown(value) -> str:
        return "—" if value is None else f"{value:.6f}"

    rows = data["mechanisms"]
    width = max(len(r["mechanism"]) for r in rows) + 2
    guaranteed = data.get("guaranteed_level")
    guaranteed = data["epsilon"] if guaranteed is None else guaranteed
    stretch = data.get("spanner_stretch")
    lines = [
        "the planar Laplace baseline at the same guarantee: ε·d-private on every pair at "
        f"ε = {guaranteed:.6g}"
    ]
    if stretch is not None:
        lines.append(
            f"  the optimal design at ε = {data['epsilon']:.6g} on the edges of a "
            f"{stretch:g}-spanner: ({data['epsilon']:.6g}·{stretch:g})·d-private"
        )
    lines += [
        f"  (ε in nats per unit of distance; the Laplace noise at ε' = "
        f"{data['laplace_epsilon']:.6g} per unit of its plane)",
        "  "
        + "mechanism".ljust(width)
        + "E[d] (loss)".rjust(14)
        + "adversary's error".rjust(20)
        + "level (nats)".rjust(14),
    ]
    for row in rows:
        lines.append(
            "  "
            + row["mechanism"].ljust(width)
            + shown(row["quality_loss"]).rjust(14)
            + shown(row["adversary_error"]).rjust(20)
            + shown(row["metric_level"]).rjust(14)
        )
    best = rows[0] if rows[0]["mechanism"] == "optimal" else None
    if best is not None and best["quality_loss"] is not None:
        ratios = [
            f"{100 * best['quality_loss'] / row['quality_loss']:.1f} % of {row['mechanism']}'s"
            for row in rows[1:]
            if row["quality_loss"]
        ]
        if ratios:
            lines.append(
                f"  at ε = {guaranteed:.6g} on every pair, the optimal E[d] is " + ", ".join(ratios)
            )
    lines += [
        "  E[d]: the quality loss. adversary's error: the expected distance from the place to",
        "  the guess of a Bayesian adversary who knows the prior and the mechanism (larger is",
        "  more private). level: the least ε of metric privacy, re-measured on every pair.",
    ]
    return "\n".join(lines)


def laplace_level(location, metric: Metric, epsilon: float) -> float:
    """``ε' = ε · min d / d_plane``: the largest level of the planar Laplace mechanism, per
    unit of the map's plane, that is ε·d-private for ``metric`` on the secrets.

    Parameters
    ----------
    location : LocationGrid or LocationPoints
    metric : Metric
        On the secrets of ``location``.
    epsilon : float

    Returns
    -------
    float

    Raises
    ------
    InputError
        When the metric puts two places of the plane at distance 0 (no level works).
    """
    plane = location.planar_points
    if metric.size != plane.shape[0]:
        raise InputError(
            f"the metric is on {metric.size} secrets but the map has {plane.shape[0]}", "metric"
        )
    ratio = np.inf
    step = max(1, 2**22 // max(plane.shape[0], 1))
    for start in range(0, plane.shape[0], step):
        d_plane = pairwise_distances(plane[start : start + step], plane, "euclidean")
        d = metric.matrix[start : start + step]
        apart = d_plane > 0
        if apart.any():
            with np.errstate(invalid="ignore"):
                ratio = min(ratio, float(np.min(d[apart] / d_plane[apart])))
    if not np.isfinite(ratio):  # one place, or every metric distance infinite
        ratio = 1.0
    if abs(ratio - 1.0) < 1e-12:  # the plane's own distance, up to rounding
        ratio = 1.0
    if ratio <= 0:
        raise InputError(
            "the metric puts two distinct places at distance 0: no planar Laplace mechanism is "
            "private for it",
            "metric",
        )
    return float(epsilon) * ratio


def _adversary_error(prior, mechanism, loss: np.ndarray) -> float:
    """:func:`~privopt.measures.expected_inference_error` in blocks of candidates."""
    best = None
    for start in range(0, loss.shape[1], _CANDIDATE_BLOCK):
        costs = measures.posterior_expected_loss(
            prior, mechanism, loss[:, start : start + _CANDIDATE_BLOCK]
        ).min(axis=1)
        best = costs if best is None else np.minimum(best, costs)
    return float(best.sum())


def _level(prior, mechanism, metric: Metric) -> float | None:
    """The level re-measured on every pair of the support, when its constraint pairs are
    cheap: known already (cached on the metric by the design), the edges of a graph on the
    whole map, pairs read off a grid's lattice, or a support of at most
    :data:`MEASURED_SUPPORT` places (finding the pairs of a dense metric is ``O(k³)``); else
    ``None``."""
    support = np.flatnonzero(prior.probs > 0)
    cache = metric.__dict__.get("_pairs_cache", {})
    cached = (support.astype(np.int64).tobytes(), None) in cache
    # how the metric finds its pairs (a graph's edges; a grid's lattice, where the metric has
    # one): both without the O(k³) search
    graph = getattr(metric, "_edges", None) is not None and support.size == metric.size
    lattice = getattr(metric, "_lattice", None) is not None
    if not (cached or graph or lattice or support.size <= MEASURED_SUPPORT):
        return None
    try:
        return float(measures.metric_dp_level(prior, mechanism, metric))
    except InputError:  # too many secrets for the metric's pairs
        return None


def compare_with_laplace(
    location,
    epsilon: float,
    *,
    result=None,
    metric: Metric | None = None,
    distortion=None,
    norm: str | None = None,
    power: float = 1.0,
    adversary_loss=None,
    **design_options: Any,
) -> LaplaceComparison:
    """The optimal design beside the planar Laplace mechanism, with and without the optimal
    remap, at the same guarantee (module docstring).

    Parameters
    ----------
    location : LocationGrid or LocationPoints
        The map: secrets, prior and outputs.
    epsilon : float
        The level of metric privacy asked of the design (per unit of the metric's distance;
        with a spanner, the level on its edges: the baseline is then calibrated to
        ``epsilon · δ``, the design's guarantee on every pair).
    result : DesignResult, optional
        The optimal design already solved (e.g. by :func:`privopt.design`); default: solved
        here with ``metric_dp`` at ``epsilon``. A design written on a spanner says so in its
        ``extra`` (``spanner_stretch``), which sets the guaranteed level.
    metric : Metric, optional
        The privacy metric on the secrets; default ``location.metric(norm)``. Pass the one
        the design used: its constraint pairs are cached on it, and the levels are then
        re-measured at no cost.
    distortion : Distortion, optional
        The quality loss, ``secrets × outputs``; default ``location.distortion(norm,
        power)``.
    norm : {"euclidean", "manhattan", "haversine"}, optional
        For the defaults of ``metric`` and ``distortion``.
    power : float
        For the default distortion (1: expected distance).
    adversary_loss : array_like, optional
        ``loss[s, ŝ]`` of the adversary's guesses; default the metric's distances between
        the secrets.
    **design_options
        Passed to :func:`privopt.design` when ``result`` is not given (``solver``,
        ``time_limit``, ``spanner``, …).

    Returns
    -------
    LaplaceComparison
    """
    from privopt.solve.api import design

    prior = location.prior()
    metric = metric if metric is not None else location.metric(norm)
    distortion = distortion if distortion is not None else location.distortion(norm, power)
    matrix = np.asarray(getattr(distortion, "matrix", distortion), dtype=float)
    if matrix.shape != (location.size, location.n_outputs):
        raise InputError(
            f"the distortion is {matrix.shape}; the map has {location.size} secrets and "
            f"{location.n_outputs} outputs",
            "distortion",
        )
    loss = metric.matrix if adversary_loss is None else np.asarray(adversary_loss, dtype=float)
    if result is None:
        result = design(
            prior, distortion, "metric_dp", epsilon=epsilon, metric=metric, **design_options
        )
    stretch = _spanner_stretch(result, design_options.get("spanner"))
    guaranteed = float(epsilon) * stretch if stretch is not None else float(epsilon)
    eps_plane = laplace_level(location, metric, guaranteed)
    laplace = planar_laplace(location, eps_plane)
    remap = measures.bayes_remap(prior, laplace, matrix)
    moved = np.zeros_like(laplace.matrix)  # W followed by the remap: columns gathered
    np.add.at(moved.T, remap, laplace.matrix.T)
    remapped = Mechanism(moved, location.labels, location.output_labels)

    def summary(name: str, mechanism: Mechanism) -> MechanismSummary:
        return MechanismSummary(
            name,
            float(measures.expected_distortion(prior, mechanism, matrix)),
            _adversary_error(prior, mechanism, loss),
            _level(prior, mechanism, metric),
            mechanism,
        )

    optimal = None
    if result is not None and result.distortion is not None:
        found = result.mechanism
        level = None if found is None else _level(prior, found, metric)
        if level is None and result.epsilon is not None:  # the driver's verified level
            level = float(result.extra.get("metric_level", result.epsilon))
        optimal = MechanismSummary(
            "optimal",
            float(result.distortion),
            None if found is None else _adversary_error(prior, found, loss),
            level,
            found,
        )
    certificate = getattr(result, "certificate", None)
    return LaplaceComparison(
        float(epsilon),
        eps_plane,
        optimal,
        summary("planar Laplace", laplace),
        summary("planar Laplace + optimal remap", remapped),
        lower_bound=None if certificate is None else certificate.lower_bound,
        status=None if result is None else str(result.status),
        guaranteed_level=guaranteed,
        spanner_stretch=stretch,
    )


def _spanner_stretch(result, asked: Any = None) -> float | None:
    """The stretch ``δ > 1`` of the spanner the design was written on (its ``extra`` says
    so; else the ``spanner`` option asked), ``None`` without one."""
    extra = getattr(result, "extra", None) or {}
    value = extra.get("spanner_stretch", asked)
    if value is None:
        return None
    value = float(value)
    return value if value > 1.0 else None
