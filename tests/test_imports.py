"""Start-up stays light: ``import privopt`` and ``privopt --help`` do not import cvxpy, the
solvers or the notions (they are imported on first use). Checked structurally, in a fresh
interpreter, instead of by timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("cvxpy", "clarabel", "highspy", "scipy.optimize", "matplotlib", "privopt.notions")


def _loaded_after(code: str) -> dict:
    probe = (
        "import json, sys\n"
        + code
        + f"\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        "import privopt",
        "from privopt.cli import build_parser\nbuild_parser().format_help()",
        "from privopt.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass",
    ],
)
def test_start_up_does_not_import_the_solvers(code):
    loaded = _loaded_after(code)
    assert not any(loaded.values()), loaded


def test_first_use_imports_them():
    loaded = _loaded_after(
        "import privopt\nprivopt.design([0.5, 0.5], 'hamming', 'pml', epsilon=0.3)"
    )
    assert loaded["cvxpy"] and loaded["privopt.notions"]
