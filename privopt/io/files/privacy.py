"""``[privacy]`` (the notion, ``epsilon`` or ``max_distortion``, ``delta``, the neighbours
and the notion's own options) and ``[solver]``; the whole request validated as the Python API
validates it (same messages)."""

from __future__ import annotations

from privopt.errors import close_matches
from privopt.notions import get_notion, notion_names, option_owners
from privopt.validation import (
    check_mode,
    check_time_limit,
    check_tolerance,
    neighbor_pairs,
    resolve_neighbors,
)

from ._reader import _kind, _Reader, notion_option_keys
from .spec import ProblemSpec


class _PrivacySection(_Reader):
    """``[privacy]`` (the notion, its level or budget, neighbours, options) and ``[solver]``,
    and the whole request validated as the Python API validates it."""

    def privacy(self, t: dict, spec: ProblemSpec) -> None:
        """``[privacy]`` into ``spec``: the notion, the level or budget, δ, the neighbours,
        ``observe_secret`` and the notion's options."""
        name = t.get("notion")
        if name is None:
            if self.purpose == "solve":
                raise self.err(
                    "privacy.notion", f"missing; give one of: {', '.join(notion_names())}"
                )
        else:
            if not isinstance(name, str):
                raise self.err("privacy.notion", f"expected a string, got {_kind(name)}")
            spec.notion = get_notion(name).name
        eps = self.number(t, "epsilon", "privacy", allow_inf=True)
        budget = self.number(t, "max_distortion", "privacy")
        if eps is not None or budget is not None or self.purpose == "solve":
            _mode, spec.epsilon, spec.max_distortion = check_mode(eps, budget)
        delta = self.number(t, "delta", "privacy")
        if delta is not None and delta > 1:
            raise self.err("privacy.delta", f"must lie in [0, 1], got {delta}")
        spec.delta = delta
        neighbors = t.get("neighbors")
        if neighbors is not None:
            spec.neighbors = self.neighbors(neighbors, spec.prior)
        observe = t.get("observe_secret")
        if observe is not None:
            if not isinstance(observe, bool):
                raise self.err(
                    "privacy.observe_secret", f"expected true or false, got {_kind(observe)}"
                )
            spec.observe_secret = observe
        self.notion_options(t, spec)

    def notion_options(self, t: dict, spec: ProblemSpec) -> None:
        """The notion's own options of ``[privacy]`` (e.g. ``priors``, ``metric``), validated
        by the notion (in an audit file without a notion, by the notion that declares each)."""
        raw = {k: v for k, v in t.items() if k in notion_option_keys()}
        if "metric" in raw:
            raw["metric"] = self.metric_value(raw["metric"], "privacy.metric", spec.prior)
        elif self.location is not None and spec.notion == "metric_dp":
            raw["metric"] = self.located(self.location.metric)  # the map's own distance
        if spec.notion is not None:
            spec.options = get_notion(spec.notion).validate_options(spec.prior, raw)
            return
        by_owner: dict[str, dict] = {}
        for key, value in raw.items():
            by_owner.setdefault(option_owners(key)[0], {})[key] = value
        for owner, given in by_owner.items():
            spec.options.update(get_notion(owner).validate_options(spec.prior, given))

    def neighbors(self, value, prior):
        """``[privacy] neighbors``: a name, an edge list, ``{edges}``, ``{adjacency}`` or
        ``{file}`` (a CSV edge list); symbols or indices of the secret alphabet."""

        key = "privacy.neighbors"
        if isinstance(value, str):
            resolve_neighbors(prior, value)  # a known relation for this prior
            return value
        if isinstance(value, list):
            value = {"edges": value}
        if not isinstance(value, dict):
            raise self.err(
                key,
                'expected "hamming", "all", an edge list [[a, b], …], { adjacency = [[…]] } '
                f'or {{ file = "edges.csv" }}, got {_kind(value)}',
            )
        if len(value) != 1 or next(iter(value)) not in ("edges", "adjacency", "file"):
            raise self.err(key, "give exactly one of edges, adjacency, file")
        if "file" in value:  # a CSV edge list: its rows are the pairs
            return neighbor_pairs(prior, self.csv_rows(value["file"], f"{key}.file"), f"{key}.file")
        return neighbor_pairs(prior, value, key)  # the one reading of pairs (the API's too)

    def solver(self, t: dict, spec: ProblemSpec) -> None:
        name = self.string(t, "name", "solver")
        if name is not None:
            from privopt.methods import lookup, method_names

            if lookup(name) is None:
                raise self.err(
                    "solver.name",
                    f"unknown or uninstalled solver {name!r}; available: "
                    f"{', '.join(method_names())}",
                    suggestions=close_matches(name, method_names()),
                )
        spec.solver = name
        tol = self.number(t, "tolerance", "solver")
        spec.tolerance = None if tol is None else check_tolerance(tol, "solver.tolerance")
        limit = t.get("time_limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))):
            raise self.err("solver.time_limit", f"expected a number >= 0, got {_kind(limit)}")
        spec.time_limit = check_time_limit(limit, "solver.time_limit")  # >= 0 (inf: no limit)

    def request(self, spec: ProblemSpec) -> None:
        """Validate the whole design request as the Python API would (same messages)."""
        from privopt.request import prepare_request

        if spec.notion is None or spec.distortion is None or spec.mode is None:
            return
        kwargs = spec.design_kwargs()
        kwargs.pop("tol", None)
        if self.purpose == "solve":
            # as written, so that a relation on a notion that takes none is refused as in Python
            kwargs["neighbors"] = spec.neighbors
        else:
            kwargs.pop("delta", None)  # an audit's δ: the tail audits, no design
            # an audit's relation also serves the DP lines of the leakage report
        prepare_request(
            spec.prior,
            spec.distortion,
            spec.notion,
            epsilon=spec.epsilon,
            max_distortion=spec.max_distortion,
            **kwargs,
        )
