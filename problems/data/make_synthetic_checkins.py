"""Writes synthetic_checkins.tsv: 600 made-up check-ins around three hot spots of a city
centre, one visit per line, laid out like the public check-in logs (tab-separated user, time,
latitude, longitude, venue id; no header). Deterministic (seed 2013); no real data.

    python problems/data/make_synthetic_checkins.py
"""

from pathlib import Path

import numpy as np

rng = np.random.default_rng(2013)
spots = np.array([[48.8566, 2.3522], [48.8738, 2.3300], [48.8462, 2.3720]])  # lat, lon
spread = np.array([[0.0040, 0.0060], [0.0030, 0.0050], [0.0050, 0.0070]])  # degrees
share = np.array([0.5, 0.3, 0.2])
lines = []
for _ in range(600):
    s = rng.choice(3, p=share)
    lat, lon = spots[s] + spread[s] * rng.standard_normal(2)
    user = rng.integers(0, 40)
    day, minute = rng.integers(1, 29), rng.integers(0, 24 * 60)
    when = f"2010-10-{day:02d}T{minute // 60:02d}:{minute % 60:02d}:00Z"
    lines.append(f"{user}\t{when}\t{lat:.6f}\t{lon:.6f}\t{s * 1000 + rng.integers(0, 50)}")
out = Path(__file__).with_name("synthetic_checkins.tsv")
out.write_text("\n".join(lines) + "\n", encoding="utf-8")
print(f"wrote {len(lines)} check-ins to {out}")
