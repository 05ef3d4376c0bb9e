"""The first-call harness (``python -m benchmarks.first_call``) at a smoke size: it runs every
family in fresh processes and writes its tables (the measurements are in
benchmarks/README.md, "First call")."""

from __future__ import annotations

import json

from benchmarks.first_call import DESIGNS, main


def test_first_call_smoke(tmp_path):
    out = tmp_path / "first-call.md"
    smoke = ["--runs", "1", "--files", "pml_uniform_ternary.toml", "--scale-n", "3"]
    assert main([*smoke, "--no-compile", "--out", str(out)]) == 0
    raw = json.loads(out.with_suffix(".json").read_text())
    (cli,) = raw["cli"]
    assert cli["file"] == "pml_uniform_ternary.toml" and cli["exit"] == 0
    assert [d["design"] for d in raw["design"]] == list(DESIGNS)
    for design in raw["design"]:
        assert design["status"] == "optimal"
        # no design of the family needs cvxpy: it is not loaded by the first call
        assert "cvxpy" not in design["loaded"]
    assert len(raw["scale"]) == 2
    for row in raw["scale"]:
        assert row["value_gap"] < 1e-6  # privopt and the plain cvxpy baseline agree
        assert all(t > 0 for t in row["privopt_1"] + row["baseline_1"])
    assert out.read_text().count("|") > 20
