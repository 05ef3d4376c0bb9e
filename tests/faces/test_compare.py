"""Comparing methods on one's own problem (``po.compare``, ``privopt compare``): every
applicable method runs, each under its time limit, and one that fails or raises does not stop
the others; the table, its CSV and JSON forms, the figure; the measuring code shared with the
benchmark harness."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import privopt as po
from privopt import comparison
from privopt.comparison import COMPARE_COLUMNS, Measurement, measure
from privopt.solve.selection import applicable_methods

ROOT = Path(__file__).resolve().parents[2]
PMF = [0.5, 0.3, 0.2]
FAST = ["sparse-highs", "CLARABEL", "blahut-arimoto"]


@pytest.fixture(scope="module")
def table():
    return po.compare(PMF, "hamming", "mutual_information", max_distortion=0.3, time_limit=60)


def test_every_applicable_method_runs_and_agrees(table):
    request = po.prepare_request(PMF, "hamming", "mutual_information", max_distortion=0.3)
    assert [r["method"] for r in table.rows] == applicable_methods(request)
    certified = [r for r in table.rows if r["certified"]]
    assert certified and table.best == min(r["objective"] for r in certified)
    assert table.best_method in {r["method"] for r in certified}
    for row in certified:  # certified answers agree with the best to their tolerances
        assert row["agrees"] is True
        assert row["difference"] == pytest.approx(row["objective"] - table.best)
        assert row["lower_bound"] <= row["objective"] + 1e-12
    for row in table.rows:
        assert set(COMPARE_COLUMNS) - {"difference", "agrees"} <= set(row)
        assert row["seconds"] >= 0 and row["status"]
    # the least level within the budget is what is compared (budget mode)
    assert table.mode == "max_distortion" and table.objective_name == "epsilon"
    assert table.results[table.best_method].epsilon == pytest.approx(table.best)


def test_named_methods_only_and_unknown_names(monkeypatch):
    table = po.compare(PMF, "hamming", "pml", epsilon=0.5, methods=["CLARABEL", "sparse-highs"])
    assert [r["method"] for r in table.rows] == ["CLARABEL", "sparse-highs"]
    with pytest.raises(po.InputError) as info:
        po.compare(PMF, "hamming", "pml", epsilon=0.5, methods=["CLARABLE"])
    assert info.value.field == "methods" and info.value.suggestions[0] == "CLARABEL"
    with pytest.raises(po.InputError) as info:
        po.compare(PMF, "hamming", "pml", epsilon=0.5, methods=["symmetric"])  # not a database
    assert info.value.field == "methods"
    with pytest.raises(po.InputError) as info:
        po.compare(PMF, "hamming", "pml", epsilon=0.5, solver="CLARABEL")
    assert info.value.field == "solver"


def test_a_method_that_raises_does_not_stop_the_others(monkeypatch):
    """A crash (not a privopt error) is recorded as such and the next method still runs."""
    from privopt.solve import api

    real = api.design

    def flaky(*args, solver=None, **kwargs):
        if solver == "CLARABEL":
            raise ZeroDivisionError("boom")
        return real(*args, solver=solver, **kwargs)

    monkeypatch.setattr("privopt.solve.design", flaky)
    table = po.compare(PMF, "hamming", "pml", epsilon=0.5, methods=["CLARABEL", "sparse-highs"])
    crashed, fine = table.rows
    assert crashed["status"] == "crashed" and crashed["verified"] is False
    assert crashed["message"].startswith("ZeroDivisionError") and crashed["agrees"] is None
    assert fine["status"] == "optimal" and fine["agrees"] is True
    assert table.best_method == "sparse-highs"


def test_each_method_gets_the_time_limit_and_memory_bound(monkeypatch):
    seen = []
    from privopt.solve import api

    real = api.design

    def spy(*args, **kwargs):
        seen.append((kwargs["solver"], kwargs["time_limit"], kwargs["max_memory"]))
        return real(*args, **kwargs)

    monkeypatch.setattr("privopt.solve.design", spy)
    po.compare(PMF, "hamming", "pml", epsilon=0.5, methods=FAST[:2], time_limit=7, max_memory="2G")
    assert seen == [("sparse-highs", 7.0, "2G"), ("CLARABEL", 7.0, "2G")]


def test_infeasible_request_is_a_status_not_an_error():
    prior = po.DatabasePrior(m=2, n=2, row_probs=[0.6, 0.4])
    table = po.compare(prior, "hamming", "identifiability", epsilon=0.1, methods=["sparse-highs"])
    (row,) = table.rows
    assert row["status"] == "infeasible" and table.best is None and row["agrees"] is None


def test_table_forms(table, tmp_path):
    pd = pytest.importorskip("pandas")
    frame = table.to_frame()
    assert list(frame.columns) == list(COMPARE_COLUMNS) and len(frame) == len(table.rows)
    assert isinstance(frame, pd.DataFrame)
    path = table.to_csv(tmp_path / "t.csv")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["method"] for r in rows] == [r["method"] for r in table.rows]
    assert float(rows[0]["seconds"]) == pytest.approx(table.rows[0]["seconds"])
    data = table.to_dict()
    assert json.loads(json.dumps(data))["best"] == pytest.approx(table.best)
    assert len(table.table().splitlines()) == 1 + len(table.rows)
    assert table._repr_html_().startswith("<table")


def test_figure_read_back(table, tmp_path):
    fig = table.plot(path=tmp_path / "c.png")
    time_ax, memory_ax = fig.axes[:2]
    names = [t.get_text() for t in time_ax.get_yticklabels()]
    assert names == [r["method"] for r in table.rows]
    widths = [bar.get_width() for bar in time_ax.patches]
    assert widths == pytest.approx([r["seconds"] for r in table.rows])
    # the second panel draws each run's added memory, as the table holds it (none: an empty bar)
    added = [r["added_mb"] if r["added_mb"] is not None else 0.0 for r in table.rows]
    memory_widths = [bar.get_width() for bar in memory_ax.patches[: len(table.rows)]]
    assert memory_widths == pytest.approx(np.nan_to_num(np.array(added, dtype=float)))
    assert "mutual_information" in fig.get_suptitle() and "uniform" not in fig.get_suptitle()
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_measure_records_time_memory_and_errors():
    value, measured = measure(lambda: np.ones(2_000_000).sum())
    assert value == 2_000_000 and measured.error is None and measured.seconds >= 0
    if math.isfinite(measured.peak_mb):
        assert 0 <= measured.added_mb <= measured.peak_mb
    value, measured = measure(lambda: 1 / 0)
    assert value is None and isinstance(measured.error, ZeroDivisionError)
    assert isinstance(measured, Measurement)


def test_measure_sees_a_large_allocation_in_a_fresh_process():
    """In a fresh interpreter (no freed memory for the allocator to reuse) a 190 MiB array is
    seen in the peak; in a long-lived process ``added_mb`` is a lower bound."""
    code = (
        "import numpy as np; from privopt.comparison import measure; "
        "_, m = measure(lambda: np.ones(25_000_000).sum()); print(m.added_mb, m.peak_mb)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    added, peak = (float(v) for v in done.stdout.split())
    if math.isfinite(peak):  # Linux
        assert added >= 150 and peak >= added


def test_the_benchmark_harness_uses_the_same_measuring_code():
    from benchmarks import harness

    assert harness.measure is comparison.measure
    value, info = harness._measure(lambda: (1.5, {"status": "optimal"}))
    assert value == 1.5 and "peak_mb" in info
    value, info = harness._measure(lambda: 1 / 0)
    assert math.isnan(value) and info["status"].startswith("error: ZeroDivisionError")


def test_command_line(tmp_path, capsys):
    from privopt.cli import main

    path = ROOT / "problems" / "pml_uniform_ternary.toml"
    out_csv, out_png = tmp_path / "c.csv", tmp_path / "c.png"
    argv = ["compare", str(path), "--methods", "sparse-highs,CLARABEL", "--time-limit", "30"]
    code = main([*argv, "--csv", str(out_csv), "--plot", str(out_png)])
    assert code == 0
    with open(out_csv, newline="") as fh:
        assert [r["method"] for r in csv.DictReader(fh)] == ["sparse-highs", "CLARABEL"]
    assert out_png.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [m["method"] for m in data["methods"]] == ["sparse-highs", "CLARABEL"]
    assert data["time_limit"] == 30 and all(m["agrees"] for m in data["methods"])
    code = main(["compare", str(path), "--methods", "CLARABLE"])
    assert code == 2
    assert "'CLARABEL'" in capsys.readouterr().err
