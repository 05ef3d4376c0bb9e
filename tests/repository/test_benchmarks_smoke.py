"""The benchmark harness at its smoke size: it runs, writes its outputs, and every method
agrees with the baseline / closed form (the full run is ``python -m benchmarks --size full``)."""

from __future__ import annotations

import csv
import math

from benchmarks.harness import run


def test_benchmark_smoke(tmp_path):
    rows, paths = run(
        "smoke",
        families=("hamming-db", "single", "scale", "symmetry", "pairs", "curves"),
        out_dir=tmp_path,
        log=lambda _: None,
    )
    assert {"csv", "markdown"} <= set(paths)
    assert paths["csv"].exists() and paths["markdown"].read_text().count("|") > 10
    with paths["csv"].open() as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)
    methods = {r["method"] for r in rows}
    assert "baseline" in methods and len(methods) >= 3
    for r in rows:
        if r["status"] == "skipped":
            continue
        assert str(r["status"]).startswith("optimal"), r
        if math.isfinite(r["error"]):
            assert r["error"] < 1e-6, r
    pairs = [r for r in rows if r["family"] == "pairs" and r["method"] == "privopt-default"]
    assert len(pairs) == 3 and all(r["status"] == "optimal" for r in pairs)
    symmetry = [r for r in rows if r["family"] == "symmetry" and r["method"] == "privopt-symmetry"]
    assert symmetry and all(r["status"] == "optimal" for r in symmetry)
    with paths["curves"].open() as fh:
        curves = list(csv.DictReader(fh))
    assert {c["method"] for c in curves} == {"sparse-highs-simplex", "blahut-arimoto"}
    for c in curves:
        assert c["points_optimal"] == c["points"] == "5"
        assert float(c["curve_s"]) > 0 and float(c["ratio_vs_same_method"]) > 0


def test_map_benchmark_records_a_case_and_a_refusal():
    """``benchmarks.maps`` measures a case (``run_case``, what each of its processes runs), and
    a request above the memory bound is a row naming the refused field, not a traceback."""
    from benchmarks.maps import run_case

    solved = run_case("exact-8", baseline=False, time_limit=None)
    assert solved["status"] == "optimal" and solved["method"] == "block-ipm"
    assert solved["relative_gap"] <= 1e-6 and solved["peak_gb"] > 0
    refused = run_case("manhattan-20", baseline=False, time_limit=None, max_memory="1M")
    assert refused["status"] == "refused" and refused["field"] == "max_memory"
    assert refused["max_memory"] == "1M"  # a refused row records the limits too
