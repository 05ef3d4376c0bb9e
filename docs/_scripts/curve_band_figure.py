"""Draws docs/img/curve_band.png, the figure of the certified-curves page (docs/curves.md).

Pointwise maximal leakage and maximal leakage on 20 symbols (a fixed Dirichlet prior,
distortion ``|x − u|``), each certified to within ``BAND`` of its range on ε ∈ [0.05, 3]:
the points privopt chose and the band around each curve. Run from the repository's root:

    python docs/_scripts/curve_band_figure.py [OUT.png]
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BAND = 0.04


def draw(out: Path, k: int = 20, band: float = BAND) -> Path:
    """Sweep both notions with their bands and draw them; write ``out`` (atomically) and
    return it."""
    import privopt as po
    from privopt.plotting import plot_curves, save_figure

    rng = np.random.default_rng(2)
    prior = rng.dirichlet(np.full(k, 2.0))
    distortion = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(float)
    curves = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for notion in ("pml", "maximal_leakage"):
            curves.append(
                po.sweep(prior, distortion, notion, epsilon_range=(0.05, 3.0), band=band)
            )
    title = (
        f"Certified curves, k = {k} symbols, |x − u| distortion: every ε in [0.05, 3] "
        f"bounded to {100 * band:g} % of each curve's range"
    )
    fig = plot_curves(curves, prior=prior, distortion=distortion, title=title)
    save_figure(fig, out)
    return Path(out)


if __name__ == "__main__":  # pragma: no cover - run by hand
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img" / "curve_band.png"
    print(draw(target))
