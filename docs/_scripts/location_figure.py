"""Draws docs/img/location.png, the figure of the location-privacy page (docs/location.md).

The map of problems/location_checkins.toml (600 synthetic check-ins binned into cells of
750 m, output cells of 1.5 km): the prior, the release law of the most visited cell under the
optimal mechanism and under the planar Laplace mechanism followed by the optimal remap, and
the quality loss of the three mechanisms against ε. Run from the repository's root:

    python docs/_scripts/location_figure.py [OUT.png]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
LEVELS = (0.4, 0.7, 1.2, 1.6, 2.0, 2.8)


def draw(out: Path, levels=LEVELS) -> Path:
    """Solve, compare and draw (the curve at ``levels``, which include the file's ε); write
    ``out`` (atomically) and return it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from privopt.io.files import load_problem
    from privopt.plotting import plot_location, save_figure
    from privopt.solve.location import compare_with_laplace

    spec = load_problem(ROOT / "problems" / "location_checkins.toml")
    grid = spec.location
    cell = grid.labels[int(np.argmax(grid.prior().probs))]
    rows = {name: [] for name in ("optimal", "planar Laplace", "planar Laplace + optimal remap")}
    shown = None
    for eps in levels:
        found = compare_with_laplace(grid, eps, distortion=spec.distortion)
        for row in found.rows:
            rows[row.name].append(row.quality_loss)
        if eps == spec.epsilon:
            shown = found
    fig = Figure(figsize=(11.0, 6.6), dpi=150, layout="constrained")
    FigureCanvasAgg(fig)
    top = fig.subfigures(2, 1, height_ratios=[1.0, 0.95])
    maps = top[0].subplots(1, 3)
    plot_location(grid, shown.optimal.mechanism, cell=cell, panels=["prior"], ax=maps[0])
    plot_location(grid, shown.optimal.mechanism, cell=cell, panels=["release"], ax=maps[1])
    plot_location(grid, shown.laplace_remapped.mechanism, cell=cell, panels=["release"], ax=maps[2])
    maps[1].set_title(f"optimal: $p(u \\mid x = {cell})$", fontsize=9)
    maps[2].set_title(f"Laplace + remap: $p(u \\mid x = {cell})$", fontsize=9)
    top[0].suptitle(
        f"8 × 9 cells of 750 m, 4 × 5 output cells of 1.5 km, ε = {spec.epsilon:g} per km: "
        f"E[d] = {shown.optimal.quality_loss:.3f} km (optimal), "
        f"{shown.laplace_remapped.quality_loss:.3f} (Laplace + remap), "
        f"{shown.laplace.quality_loss:.3f} (Laplace)",
        fontsize=9.5,
    )
    ax = top[1].subplots(1, 1)
    for (name, values), style in zip(rows.items(), ("o-", "s--", "^-."), strict=True):
        ax.plot(levels, values, style, label=name, linewidth=1.3)
    ax.set_xlabel("ε (per km)", fontsize=9)
    ax.set_ylabel("quality loss E[d] (km)", fontsize=9)
    ax.set_title("the same guarantee at each ε: ε·d-private on the cell centres", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return Path(save_figure(fig, out))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img" / "location.png"
    print(f"wrote {draw(target)}")
