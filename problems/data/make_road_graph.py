"""Writes road_graph_edges.csv and road_graph_visits.csv: a made-up road network of 42
intersections and the visits counted at each. Deterministic (seed 1500); no real data.

The intersections lie on a 6 × 7 lattice of 1 km blocks, each moved by up to 200 m. The roads
are the lattice's streets, less about one in ten (never disconnecting the network), plus one
diagonal avenue in about a third of the blocks (at most one per block, so no two roads cross:
the graph is planar). A road's length is the straight distance between its ends times a
winding factor in [1, 1.3), in km to the metre. Visits are drawn around two busy districts.

    python problems/data/make_road_graph.py
"""

from pathlib import Path

import numpy as np

ROWS, COLS = 6, 7
rng = np.random.default_rng(1500)
label = [f"x{r}{c}" for r in range(ROWS) for c in range(COLS)]
place = np.array([[c, r] for r in range(ROWS) for c in range(COLS)], float)
place += rng.uniform(-0.2, 0.2, place.shape)


def node(r: int, c: int) -> int:
    return r * COLS + c


def connected(pairs: list[tuple[int, int]]) -> bool:
    seen, stack = {0}, [0]
    while stack:
        a = stack.pop()
        for u, v in pairs:
            for x, y in ((u, v), (v, u)):
                if x == a and y not in seen:
                    seen.add(y)
                    stack.append(y)
    return len(seen) == ROWS * COLS


streets = [(node(r, c), node(r, c + 1)) for r in range(ROWS) for c in range(COLS - 1)]
streets += [(node(r, c), node(r + 1, c)) for r in range(ROWS - 1) for c in range(COLS)]
for i in rng.permutation(len(streets))[: len(streets) // 10]:
    kept = [e for e in streets if e != streets[i]]
    if connected(kept):
        streets = kept
avenues = []
for r in range(ROWS - 1):
    for c in range(COLS - 1):
        if rng.uniform() < 1 / 3:
            if rng.uniform() < 0.5:
                avenues.append((node(r, c), node(r + 1, c + 1)))
            else:
                avenues.append((node(r, c + 1), node(r + 1, c)))
lines = [
    "# a made-up road network (problems/data/make_road_graph.py): one road per line",
    "from,to,length",
]
for a, b in streets + avenues:
    length = np.linalg.norm(place[a] - place[b]) * rng.uniform(1.0, 1.3)
    lines.append(f"{label[a]},{label[b]},{length:.3f}")
here = Path(__file__).parent
(here / "road_graph_edges.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")

busy = np.array([[1.5, 1.0], [5.0, 4.0]])
near = np.exp(-((place[:, None, :] - busy[None]) ** 2).sum(axis=2) / 2.0).sum(axis=1)
visits = 1 + rng.poisson(20 * near)
rows = ["label,count"] + [f"{name},{v}" for name, v in zip(label, visits, strict=True)]
(here / "road_graph_visits.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
print(f"wrote {len(streets) + len(avenues)} roads between {ROWS * COLS} intersections")
