"""Problem files for metric privacy, neighbour graphs, query distortions, CSV priors and map
grids: each form gives the same request as the Python API, and bad input exits 2 naming the
key."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

import privopt as po
from privopt.cli import main
from privopt.io.files import load_problem
from privopt.model.location import LocationGrid


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


PRIOR4 = '[prior]\nprobs = [0.4, 0.1, 0.2, 0.3]\nlabels = ["a", "b", "c", "d"]\n'


@pytest.mark.parametrize(
    ("metric_toml", "metric_py"),
    [
        (
            "metric = [[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]",
            np.abs(np.subtract.outer(range(4), range(4))).astype(float),
        ),
        (
            'metric = { points = [[0, 0], [3, 0], [0, 4], [3, 4]], norm = "euclidean" }',
            {"points": [[0, 0], [3, 0], [0, 4], [3, 4]], "norm": "euclidean"},
        ),
        (
            'metric = { edges = [["a", "b"], ["b", "c", 2.5], ["c", "d"]] }',
            {"edges": [[0, 1], [1, 2, 2.5], [2, 3]]},
        ),
        ('metric = "discrete"', "discrete"),
    ],
)
def test_metric_forms_match_the_python_api(tmp_path, metric_toml, metric_py):
    text = (
        PRIOR4 + '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "d_privacy"\n'
        f"epsilon = 0.6\n{metric_toml}\n"
    )
    spec = load_problem(write(tmp_path, "m.toml", text))
    got = spec.solve()
    want = po.design([0.4, 0.1, 0.2, 0.3], "hamming", "metric_dp", epsilon=0.6, metric=metric_py)
    assert got.status == "optimal"
    assert got.distortion == pytest.approx(want.distortion, abs=1e-9)


def test_metric_from_csv_and_budget_mode(tmp_path, capsys):
    d = np.array([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]], float)
    (tmp_path / "d.csv").write_text("\n".join(",".join(f"{v:g}" for v in r) for r in d) + "\n")
    text = (
        PRIOR4 + '[distortion]\nkind = "metric"\n[privacy]\nnotion = "metric_dp"\n'
        'max_distortion = 0.5\nmetric = { file = "d.csv" }\n'
    )
    code, out, err = cli(capsys, "solve", write(tmp_path, "m.toml", text), "--json")
    assert code == 0, err
    data = json.loads(out)
    want = po.design([0.4, 0.1, 0.2, 0.3], d, "metric_dp", max_distortion=0.5, metric=d)
    assert data["epsilon"] == pytest.approx(want.epsilon, abs=1e-6)
    assert data["notes"]["constraint_pairs"] == 3


def test_grid_prior_metric_distortion_and_spanner(tmp_path, capsys):
    (tmp_path / "counts.csv").write_text("1,2,0\n4,1,1\n2,2,3\n")
    text = (
        '[prior.grid]\nrows = 3\ncols = 3\ncell_size = 2.0\ncounts_file = "counts.csv"\n'
        '[distortion]\nkind = "metric"\npower = 2\n'
        '[privacy]\nnotion = "metric_dp"\nepsilon = 0.4\nmetric = { norm = "manhattan" }\n'
        "spanner = 1.5\n"
    )
    code, out, err = cli(capsys, "solve", write(tmp_path, "g.toml", text), "--json")
    assert code == 0, err
    data = json.loads(out)
    grid = LocationGrid(3, 3, 2.0, [[1, 2, 0], [4, 1, 1], [2, 2, 3]])
    assert data["inputs"] == grid.labels
    with pytest.warns(UserWarning):  # the spanner's note on the full metric's level
        want = po.design(
            grid.prior(),
            grid.metric("manhattan").matrix ** 2,  # kind = "metric" reuses the [privacy] metric
            "metric_dp",
            epsilon=0.4,
            metric=grid.metric("manhattan"),
            spanner=1.5,
        )
    assert data["distortion"] == pytest.approx(want.distortion, abs=1e-8)
    assert data["notes"]["spanner_stretch"] == 1.5
    assert data["notes"]["metric_level"] <= data["notes"]["guaranteed_metric_level"] + 1e-9


def test_prior_file_labels_and_counts(tmp_path):
    (tmp_path / "p.csv").write_text("# cell,visits\nx,3\ny,1\nz,4\n")
    text = (
        '[prior]\nfile = "p.csv"\ncounts = true\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "pml"\nepsilon = 0.5\n'
    )
    spec = load_problem(write(tmp_path, "p.toml", text))
    assert spec.prior.labels == ("x", "y", "z")
    assert np.allclose(spec.prior.probs, [3 / 8, 1 / 8, 4 / 8])
    (tmp_path / "q.csv").write_text("0.2\n0.8\n")
    spec = load_problem(
        write(tmp_path, "q.toml", text.replace("p.csv", "q.csv").replace("counts = true\n", ""))
    )
    assert np.allclose(spec.prior.probs, [0.2, 0.8])


@pytest.mark.parametrize(
    ("prior", "message"),
    [
        ('file = "q.csv"', "sums to"),  # probabilities that do not sum to 1 (no counts = true)
        ('file = "missing.csv"', "prior.file"),
        ('file = "bad.csv"', "not a number"),
        ('file = "q.csv"\ncounts = 3', "true or false"),
        ("probs = [0.5, 0.5]\ncounts = true", "only used with file"),
    ],
)
def test_prior_file_errors(tmp_path, capsys, prior, message):
    (tmp_path / "q.csv").write_text("a,3\nb,1\n")
    (tmp_path / "bad.csv").write_text("a,x\nb,1\n")
    text = (
        f'[prior]\n{prior}\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "pml"\nepsilon = 1\n'
    )
    code, _, err = cli(capsys, "solve", write(tmp_path, "e.toml", text))
    assert code == 2
    assert message in err


def cycle_relation(labels):
    k = len(labels)
    return po.NeighborRelation.from_pairs(k, [(i, (i + 1) % k) for i in range(k)])


@pytest.mark.parametrize(
    "neighbors",
    [
        'neighbors = [["a", "b"], ["b", "c"], ["c", "d"], ["d", "a"]]',
        "neighbors = [[0, 1], [1, 2], [2, 3], [3, 0]]",
        "neighbors = { adjacency = [[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]] }",
        'neighbors = { file = "e.csv" }',
    ],
)
def test_neighbor_forms_match_the_python_relation(tmp_path, neighbors):
    (tmp_path / "e.csv").write_text("a,b\nb,c\n\nc,d\nd,a\n")
    text = (
        PRIOR4 + '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "dp"\nepsilon = 0.7\n'
        f"{neighbors}\n"
    )
    spec = load_problem(write(tmp_path, "n.toml", text))
    rel = cycle_relation("abcd")
    assert sorted(zip(spec.neighbors.left, spec.neighbors.right, strict=True)) == sorted(
        zip(rel.left, rel.right, strict=True)
    )
    want = po.design([0.4, 0.1, 0.2, 0.3], "hamming", "dp", epsilon=0.7, neighbors=rel)
    assert spec.solve().distortion == pytest.approx(want.distortion, abs=1e-9)


@pytest.mark.parametrize(
    ("neighbors", "message"),
    [
        ('neighbors = [["a", "zz"]]', "unknown secret 'zz'"),
        ("neighbors = [[0, 9]]", "unknown secret 9"),
        ('neighbors = [["a", "a"]]', "to itself"),
        ("neighbors = [[0, 1, 2]]", "write each pair as [a, b]"),
        ("neighbors = { adjacency = [[0, 1], [1, 0]] }", "shape"),
        (
            "neighbors = { adjacency = [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]] }",
            "symmetric 0/1",
        ),
        ('neighbors = { file = "nope.csv" }', "privacy.neighbors.file"),
        ('neighbors = { edges = [], file = "x" }', "exactly one"),
        ("neighbors = 3", "edge list"),
        ('neighbors = "hamming"', "database prior"),
    ],
)
def test_neighbor_errors_exit_2_naming_the_key(tmp_path, capsys, neighbors, message):
    text = (
        PRIOR4 + '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "dp"\nepsilon = 0.7\n'
        f"{neighbors}\n"
    )
    code, _, err = cli(capsys, "solve", write(tmp_path, "n.toml", text))
    assert code == 2
    assert message in err and "privacy.neighbors" in err


def test_joint_prior_neighbors_on_the_secret(tmp_path):
    text = (
        "[prior]\njoint = [[0.2, 0.1, 0.0], [0.05, 0.3, 0.05], [0.0, 0.1, 0.2]]\n"
        'secret_labels = ["s0", "s1", "s2"]\n'
        '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "dp"\nepsilon = 0.5\n'
        'neighbors = [["s0", "s1"], ["s1", "s2"]]\n'
    )
    spec = load_problem(write(tmp_path, "j.toml", text))
    rel = po.NeighborRelation.from_pairs(3, [(0, 1), (1, 2)])
    want = po.design(spec.prior, "hamming", "dp", epsilon=0.5, neighbors=rel)
    assert spec.solve().distortion == pytest.approx(want.distortion, abs=1e-9)


def explicit_query(m, n, q, loss):
    """The query distortion built entry by entry."""
    dbs = list(itertools.product(range(m), repeat=n))
    answers = [q(x) for x in dbs]
    outs = sorted(set(answers)) if not isinstance(answers[0], tuple) else None
    if outs is None:  # histograms: every composition of n into m parts
        outs = sorted(
            {tuple(c) for c in itertools.product(range(n + 1), repeat=m) if sum(c) == n},
        )
    mat = np.zeros((len(dbs), len(outs)))
    for i, a in enumerate(answers):
        for j, u in enumerate(outs):
            a_, u_ = np.atleast_1d(a), np.atleast_1d(u)
            diff = np.abs(np.asarray(a_, float) - np.asarray(u_, float))
            mat[i, j] = {"absolute": diff.sum(), "squared": (diff**2).sum()}.get(
                loss, float(diff.sum() > 0)
            )
    return mat


def _hist(m):
    return lambda x: tuple(x.count(v) for v in range(m))


@pytest.mark.parametrize(
    ("keys", "m", "n", "q", "loss"),
    [
        ('query = "count"', 2, 3, sum, "absolute"),
        (
            'query = "count"\nmatch = ["r", "b"]',
            3,
            2,
            lambda x: sum(v in (0, 2) for v in x),
            "squared",
        ),
        (
            'query = "sum"\nvalues = [0, 1, 5]',
            3,
            2,
            lambda x: sum([0, 1, 5][v] for v in x),
            "absolute",
        ),
        ('query = "histogram"\nloss = "hamming"', 3, 2, _hist(3), "hamming"),
        ('query = "histogram"', 2, 3, _hist(2), "absolute"),
    ],
)
def test_query_distortion_matches_an_explicit_matrix(tmp_path, keys, m, n, q, loss):
    symbols = ["r", "g", "b"][:m]
    loss_line = f'\nloss = "{loss}"' if loss == "squared" else ""
    text = (
        f"[prior.database]\nm = {m}\nn = {n}\nrow_probs = {[1 / m] * m}\n"
        f'symbols = {json.dumps(symbols)}\n[distortion]\nkind = "query"\n{keys}{loss_line}\n'
        '[privacy]\nnotion = "dp"\nepsilon = 1.0\n'
    )
    spec = load_problem(write(tmp_path, "q.toml", text))
    assert np.allclose(spec.distortion.matrix, explicit_query(m, n, q, loss))


DB = '[prior.database]\nm = 2\nn = 2\nrow_probs = [0.5, 0.5]\n[distortion]\nkind = "query"\n'
FLAT = "[prior]\nprobs = [0.5, 0.5]\n[distortion]\n"


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        (FLAT + 'kind = "query"\nquery = "count"\n', "distortion.kind", "database prior"),
        (DB + 'query = "mean"\n', "distortion.query", "unknown query"),
        (DB, "distortion.query", "missing"),
        (DB + 'query = "count"\nmatch = ["z"]\n', "distortion.match", "not a row value"),
        (DB + 'query = "count"\nloss = "cubic"\n', "distortion.loss", "unknown loss"),
        (FLAT + 'kind = "metric"\n', "distortion.metric", "needs a metric"),
        (FLAT + 'kind = "hamming"\nquery = "count"\n', "distortion.query", "only used with"),
    ],
)
def test_distortion_errors_exit_2(tmp_path, capsys, text, key, message):
    text += '[privacy]\nnotion = "dp"\nepsilon = 1.0\n'
    code, _, err = cli(capsys, "solve", write(tmp_path, "d.toml", text))
    assert code == 2
    assert key in err and message in err


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("[[0, 1, 1, 1], [2, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]", "not symmetric"),
        ("[[0, 1, 9, 1], [1, 0, 1, 1], [9, 1, 0, 1], [1, 1, 1, 0]]", "triangle inequality"),
        ("[[0, 1], [1, 0]]", "on 2 secrets"),
        ('{ edges = [["a", "q"]] }', "unknown secret 'q'"),
        ('{ norm = "euclidean" }', "needs [prior.grid]"),
    ],
)
def test_metric_errors_exit_2(tmp_path, capsys, metric, message):
    text = (
        PRIOR4 + '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "metric_dp"\n'
        f"epsilon = 1.0\nmetric = {metric}\n"
    )
    code, _, err = cli(capsys, "solve", write(tmp_path, "m.toml", text))
    assert code == 2
    assert message in err and "privacy.metric" in err


# --- a graph metric's edges from a CSV file (metric = { edges_file = … }) ----------------------
ROOT = Path(__file__).resolve().parents[2]
PATH4 = '[distortion]\nkind = "metric"\n[privacy]\nnotion = "metric_dp"\nepsilon = 0.6\n'
EDGES_INLINE = (
    'metric = { edges = [["a", "b", 1.5], ["b", "c", 0.5], ["c", "d", 2], ["d", "a", 4]] }'
)


@pytest.mark.parametrize(
    ("csv_text", "inline"),
    [
        ("from,to,length\na,b,1.5\nb,c,0.5\n\nc,d,2\nd,a,4\n", EDGES_INLINE),
        ("# indices, no header\n0,1,1.5\n1,2,0.5\n2,3,2\n3,0,4\n", EDGES_INLINE),
        ('"a","b",1.5\nb,c,.5\nc,d,2e0\nd,a,4.0\nb,a,1.5\n', EDGES_INLINE),  # a-b given twice
        ("a,b\nb,c\nc,d\n", 'metric = { edges = [["a", "b"], ["b", "c"], ["c", "d"]] }'),
    ],
    ids=["header-labels", "indices", "quoted-duplicate", "unweighted"],
)
def test_edges_file_is_the_inline_graph(tmp_path, csv_text, inline):
    write(tmp_path, "roads.csv", csv_text)
    by_file = load_problem(
        write(tmp_path, "f.toml", PRIOR4 + PATH4 + 'metric = { edges_file = "roads.csv" }\n')
    )
    by_hand = load_problem(write(tmp_path, "i.toml", PRIOR4 + PATH4 + inline + "\n"))
    assert by_file.options["metric"].kind == "graph"
    assert np.array_equal(by_file.options["metric"].matrix, by_hand.options["metric"].matrix)
    assert np.array_equal(by_file.distortion.matrix, by_hand.distortion.matrix)
    got, want = by_file.solve(), by_hand.solve()
    assert got.status == want.status == "optimal"
    assert got.distortion == pytest.approx(want.distortion, abs=1e-12)
    assert np.allclose(got.mechanism.matrix, want.mechanism.matrix, atol=1e-12, rtol=0)
    assert got.extra["constraint_pairs"] == want.extra["constraint_pairs"]


def test_edges_file_as_the_distortion_metric_on_the_inputs(tmp_path):
    """``[distortion] metric = { edges_file }`` names the inputs Y (not the secret S)."""
    write(tmp_path, "y.csv", "y0,y1,2\ny1,y2,1\n")
    joint = (
        "[prior]\njoint = [[0.3, 0.1, 0.1], [0.1, 0.1, 0.3]]\n"
        'secret_labels = ["s0", "s1"]\nlabels = ["y0", "y1", "y2"]\n'
        '[distortion]\nkind = "metric"\npower = 2\nmetric = {metric}\n'
        '[privacy]\nnotion = "pml"\nepsilon = 0.4\n'
    )
    by_file = load_problem(
        write(tmp_path, "f.toml", joint.replace("{metric}", '{ edges_file = "y.csv" }'))
    )
    inline = '{ edges = [["y0", "y1", 2], ["y1", "y2", 1]] }'
    by_hand = load_problem(write(tmp_path, "i.toml", joint.replace("{metric}", inline)))
    assert np.array_equal(by_file.distortion.matrix, by_hand.distortion.matrix)
    assert by_file.distortion.matrix[0, 2] == 9.0  # (2 + 1)², along the path


@pytest.mark.parametrize(
    ("csv_text", "field", "code"),
    [
        ("a,b,1\nb,c,\nc,d,1\n", "[line 2].weight", "missing_value"),
        ("a,b,1\nb,c\nc,d,1\n", "[line 2].weight", "missing_value"),  # a short row
        ("a,b,1\n,c,1\n", "[line 2].from", "missing_value"),
        ("a\n", "[line 1].to", "missing_value"),
        ("from,to,weight\n", "", "missing_value"),  # a header, no edges
        ("# nothing\n\n", "", "missing_value"),
        ("a,b,1\nb,c,north\nc,d,1\n", "[line 2].weight", "not_a_number"),
        ("a,b,1\nb,c,0_5\nc,d,1\n", "[line 2].weight", "not_a_number"),
        ("a,b,1\n\nb,c,-2\nc,d,1\n", "[line 3].weight", "bad_edge_weight"),  # blank line 2
        ("a,b,1\nb,c,nan\nc,d,1\n", "[line 2].weight", "bad_edge_weight"),
        ("a,b,1\nb,c,inf\nc,d,1\n", "[line 2].weight", "bad_edge_weight"),
        ("a,b,1\nb,c,0\nc,d,1\n", "[line 2].weight", "bad_edge_weight"),
        ("a,b,1\nc,c,1\nc,d,1\n", "[line 2]", "self_loop"),
        ("a,b,1\nb,q,1\nc,d,1\n", "[line 2].to", "unknown_symbol"),
        ("a,b,1\n7,c,1\nc,d,1\n", "[line 2].from", "index_out_of_range"),
        ("a,b,1\nb,c,1,9\nc,d,1\n", "[line 2]", "extra_value"),
        ("a,b\nb,c,3\nc,d\n", "[line 2]", "extra_value"),  # the first line has no weight
        ("a,b,1\nc,d,1\n", "", "disconnected_graph"),
        ("a,b,1.5\nb,c,.5\nc,d,2\nd,a,4\nb,a,7\n", "[line 5]", "duplicate_edge"),
    ],
)
def test_bad_edges_file_is_a_named_input_error_and_exits_2(tmp_path, capsys, csv_text, field, code):
    write(tmp_path, "roads.csv", csv_text)
    path = write(tmp_path, "r.toml", PRIOR4 + PATH4 + 'metric = { edges_file = "roads.csv" }\n')
    with pytest.raises(po.InputError) as info:
        load_problem(path)
    want = f"privacy.metric.edges_file{field}"
    assert (info.value.field, info.value.code) == (want, code)
    status, out, err = cli(capsys, "solve", path, "--json")
    assert status == 2
    payload = json.loads(out)
    assert (payload["error"], payload["field"], payload["code"]) == ("input", want, code)
    assert "roads.csv" in err


@pytest.mark.parametrize(
    ("metric", "field"),
    [
        ('{ edges_file = "roads.csv", edges = [["a", "b"]] }', "privacy.metric"),
        ('{ edges_file = "roads.csv", norm = "euclidean" }', "privacy.metric"),
        ("{ edges_file = 3 }", "privacy.metric.edges_file"),
        ('{ edges_file = "missing.csv" }', "privacy.metric.edges_file"),
        ('{ edges_file = "roads.csv", allow_disconnected = "yes" }', None),
    ],
)
def test_bad_edges_file_keys_exit_2(tmp_path, capsys, metric, field):
    write(tmp_path, "roads.csv", "a,b\nb,c\nc,d\n")
    path = write(tmp_path, "r.toml", PRIOR4 + PATH4 + f"metric = {metric}\n")
    with pytest.raises(po.InputError) as info:
        load_problem(path)
    assert info.value.field == (field or "privacy.metric.allow_disconnected")
    status, _, _ = cli(capsys, "solve", path)
    assert status == 2


def test_edges_file_disconnected_on_request(tmp_path):
    write(tmp_path, "roads.csv", "a,b,1\nc,d,2\n")
    metric = 'metric = { edges_file = "roads.csv", allow_disconnected = true }\n'
    text = PRIOR4 + '[distortion]\nkind = "hamming"\n[privacy]\nnotion = "metric_dp"\n'
    spec = load_problem(write(tmp_path, "r.toml", text + "epsilon = 0.6\n" + metric))
    d = spec.options["metric"].matrix
    assert (d[0, 1], d[2, 3]) == (1.0, 2.0) and np.isinf(d[0, 2])


def test_a_batch_reads_the_edges_file_with_the_problem(tmp_path):
    """The edges file travels with the problem (a batch's worker reads no path)."""
    from privopt.io.files import parse_problem, read_referenced_files, read_toml

    write(tmp_path, "roads.csv", "a,b,1.5\nb,c,0.5\nc,d,2\n")
    path = write(tmp_path, "r.toml", PRIOR4 + PATH4 + 'metric = { edges_file = "roads.csv" }\n')
    data = read_toml(path)
    files = read_referenced_files(data, str(path))
    assert set(files) == {"roads.csv"}
    (tmp_path / "roads.csv").unlink()
    spec = parse_problem(data, str(path), files=files)
    assert spec.options["metric"].matrix[0, 3] == 4.0


@pytest.mark.slow
def test_road_network_reference_is_the_all_pairs_lp():
    """The reference of problems/road_network.toml, recomputed without privopt: the CSV files
    read by the csv module, shortest paths by Floyd–Warshall, the LP over every pair."""
    import csv

    from tests.crosscheck.location_lp import all_pairs_metric_lp

    data = ROOT / "problems" / "data"
    with open(data / "road_graph_visits.csv", encoding="utf-8") as f:
        visits = list(csv.reader(f))[1:]
    names = [row[0] for row in visits]
    weights = np.array([float(row[1]) for row in visits])
    d = np.full((len(names), len(names)), np.inf)
    np.fill_diagonal(d, 0.0)
    with open(data / "road_graph_edges.csv", encoding="utf-8") as f:
        roads = [r for r in csv.reader(f) if r and not r[0].startswith("#")][1:]
    for a, b, length in roads:
        i, j = names.index(a), names.index(b)
        d[i, j] = d[j, i] = min(d[i, j], float(length))
    for m in range(len(names)):
        d = np.minimum(d, d[:, m : m + 1] + d[m : m + 1, :])
    assert np.isfinite(d).all()  # connected
    spec = load_problem(ROOT / "problems" / "road_network.toml")
    least, _ = all_pairs_metric_lp(weights / weights.sum(), d, d, spec.epsilon)
    assert least == pytest.approx(spec.reference["distortion"], abs=1e-7)
    assert np.allclose(spec.options["metric"].matrix, d, rtol=0, atol=1e-12)
