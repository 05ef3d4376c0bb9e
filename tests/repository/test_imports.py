"""Start-up stays light, and so does the first answer: ``import privopt`` and ``privopt --help``
import no solver and no notion; registering, listing and choosing methods import none of
the methods' heavy dependencies; a design answered by a method that does not use cvxpy
leaves cvxpy (and, where nothing uses it, scipy.optimize) unloaded. Checked structurally,
in a fresh interpreter, instead of by timing (the times are in benchmarks/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: The solver packages and modelling layers no method imports before it runs.
SOLVERS = ("cvxpy", "clarabel", "highspy", "scs", "ecos", "osqp", "scipy.optimize")
HEAVY = (*SOLVERS, "matplotlib", "privopt.notions")


def _loaded_after(code: str, modules: tuple[str, ...] = HEAVY) -> dict:
    """Run ``code`` in a fresh interpreter; which of ``modules`` it left in ``sys.modules``
    (and the ``result`` variable, if the code set one)."""
    probe = (
        "import json, sys\nresult = None\n"
        + code
        + f"\nprint(json.dumps({{'loaded': {{m: m in sys.modules for m in {modules!r}}}, "
        "'result': result}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True
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
    loaded = _loaded_after(code)["loaded"]
    assert not any(loaded.values()), loaded


def test_listing_and_choosing_methods_import_no_solver():
    """``privopt solvers`` asks every method about every notion and kind of prior, and
    choosing methods ranks every method for requests of every kind: no method's heavy
    dependency is imported (the notions are, for their applicability rules)."""
    code = """
import contextlib, io
import numpy as np
import privopt as po
from privopt.cli import main
from privopt.request import prepare_request
from privopt.solve.selection import applicable_methods, choose_methods
with contextlib.redirect_stdout(io.StringIO()):
    main(["solvers", "--json"])
k = 80
d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
p = np.linspace(1.0, 2.0, k) / np.linspace(1.0, 2.0, k).sum()
requests = [
    prepare_request([0.2, 0.3, 0.5], "hamming", "pml", epsilon=0.5),
    prepare_request(p, d, "pml", epsilon=0.5),
    prepare_request(p, d, "ldp", epsilon=0.5),
    prepare_request(p, d, "mutual_information", max_distortion=1.0),
    prepare_request([0.2, 0.3, 0.5], "hamming", "max_information_leakage", epsilon=0.5),
    prepare_request(po.JointPrior([[0.3, 0.1], [0.2, 0.4]]), "hamming", "pml", epsilon=0.5),
    prepare_request(
        po.DatabasePrior(m=2, n=6, row_probs=[0.6, 0.4]),
        po.Distortion.database_hamming(2, 6), "dp", epsilon=1.0,
    ),
    prepare_request(
        po.DatabasePrior(m=2, n=5, probs=np.random.default_rng(0).dirichlet(np.ones(32))),
        po.Distortion.database_hamming(2, 5), "identifiability", max_distortion=0.5,
    ),
]
result = []
for request in requests:
    result.append([m.name for m in choose_methods(request)])
    result.append([m.name for m in choose_methods(request, sweep=True)])
    applicable_methods(request)
"""
    out = _loaded_after(code, SOLVERS)
    assert not any(out["loaded"].values()), out["loaded"]
    assert all(out["result"]), "every request has a chain of methods"


#: Designs answered by a method that does not use cvxpy: (code, the method that must answer,
#: modules it must leave unloaded).
NON_CVXPY = {
    "pml, 3 symbols, default": (
        "result = po.design([1/3, 1/3, 1/3], 'hamming', 'pml', epsilon=0.7).solver.name",
        None,
        ("cvxpy", "scipy.optimize"),
    ),
    "dp, 2^3 database, default": (
        "result = po.design(po.DatabasePrior(m=2, n=3, row_probs=[0.6, 0.4]), "
        "po.Distortion.database_hamming(2, 3), 'dp', epsilon=1.0).solver.name",
        None,
        ("cvxpy", "scipy.optimize"),
    ),
    "identifiability, 2^3 database, default": (
        "result = po.design(po.DatabasePrior(m=2, n=3, row_probs=[0.6, 0.4]), "
        "po.Distortion.database_hamming(2, 3), 'identifiability', epsilon=1.0).solver.name",
        None,
        ("cvxpy", "scipy.optimize"),
    ),
    "pml, 4 symbols, block-ipm": (
        "result = po.design([0.4, 0.3, 0.2, 0.1], 'hamming', 'pml', epsilon=0.5, "
        "solver='block-ipm').solver.name",
        "block-ipm",
        ("cvxpy", "scipy.optimize"),
    ),
    "ldp, 4 symbols, sparse-highs-simplex": (
        "result = po.design([0.4, 0.3, 0.2, 0.1], 'hamming', 'ldp', epsilon=0.5, "
        "solver='sparse-highs-simplex').solver.name",
        "sparse-highs-simplex",
        ("cvxpy", "scipy.optimize"),
    ),
    "mutual information, 4 symbols, blahut-arimoto": (
        "result = po.design([0.4, 0.3, 0.2, 0.1], 'hamming', 'mutual_information', "
        "max_distortion=0.3, solver='blahut-arimoto').solver.name",
        "blahut-arimoto",
        ("cvxpy",),
    ),
    "dp, 2^6 i.i.d. database, symmetric": (
        "result = po.design(po.DatabasePrior(m=2, n=6, row_probs=[0.6, 0.4]), "
        "po.Distortion.database_hamming(2, 6), 'dp', epsilon=1.0, "
        "solver='symmetric').solver.name",
        "symmetric",
        ("cvxpy",),
    ),
}


@pytest.mark.parametrize("case", list(NON_CVXPY))
def test_a_design_without_cvxpy_leaves_it_unloaded(case):
    code, method, absent = NON_CVXPY[case]
    out = _loaded_after("import privopt as po\n" + code, SOLVERS)
    if method is not None:
        assert out["result"] == method
    else:  # the automatic choice: whichever it is, it is not a cvxpy method
        from privopt.methods import METHODS

        assert METHODS[out["result"]].family == "privopt", out["result"]
    assert not any(out["loaded"][m] for m in absent), out["loaded"]


def test_a_cvxpy_method_imports_cvxpy_when_it_runs():
    out = _loaded_after(
        "import privopt as po\n"
        "result = po.design([0.5, 0.5], 'hamming', 'pml', epsilon=0.3, solver='CLARABEL')"
        ".solver.name"
    )
    assert out["result"] == "CLARABEL"
    assert out["loaded"]["cvxpy"] and out["loaded"]["privopt.notions"]


def test_the_registered_cvxpy_solvers_are_cvxpy_s_own():
    """The cvxpy methods are registered without cvxpy, from each solver's package
    (:data:`~privopt.methods.cvxpy_program.method.CVXPY_SOLVERS`): the same solvers as
    ``cvxpy.installed_solvers()`` (its nonlinear and GPU solvers aside), in cvxpy's order,
    each given exponential-cone (power-cone) programs exactly when cvxpy's conic interface
    takes ``ExpCone`` (``PowCone3D``) and the solver is not mixed-integer."""
    cp = pytest.importorskip("cvxpy")
    from cvxpy.constraints import ExpCone, PowCone3D
    from cvxpy.reductions.solvers import defines

    from privopt.methods import METHODS
    from privopt.methods.cvxpy_program.method import CVXPY_SOLVERS, installed_cvxpy_solvers

    conic, qp = defines.SOLVER_MAP_CONIC, defines.SOLVER_MAP_QP
    left_out = {"CUCLARABEL", "CUOPT", "PDCS", "MPAX"}
    theirs = [s for s in cp.installed_solvers() if (s in conic or s in qp) and s not in left_out]
    assert installed_cvxpy_solvers() == theirs
    assert [n for n, m in METHODS.items() if m.family == "cvxpy"] == theirs
    for name in theirs:
        solver = conic.get(name)
        exp_cone = (
            solver is not None
            and ExpCone in solver.SUPPORTED_CONSTRAINTS
            and not solver.MIP_CAPABLE
        )
        power_cone = (
            solver is not None
            and PowCone3D in solver.SUPPORTED_CONSTRAINTS
            and not solver.MIP_CAPABLE
        )
        assert ("exponential_cone" in CVXPY_SOLVERS[name][1]) == exp_cone, name
        assert ("power_cone" in CVXPY_SOLVERS[name][1]) == power_cone, name
        assert METHODS[name].cones == CVXPY_SOLVERS[name][1], name
        assert "linear" in METHODS[name].cones, name


def test_deferred_exports_of_the_method_packages():
    """The method packages re-export their solving modules' names on first use, and still
    import their submodules by name."""
    import privopt.methods.blahut_arimoto as ba
    import privopt.methods.cvxpy_program as cvx
    import privopt.methods.symmetric as sym
    from privopt.methods.blahut_arimoto import newton  # a submodule, not an export
    from privopt.methods.blahut_arimoto.rate_distortion import rate_distortion
    from privopt.methods.cvxpy_program.program import PrivacyProblem
    from privopt.methods.symmetric.mechanism import SymmetricMechanism

    assert ba.rate_distortion is rate_distortion
    assert cvx.PrivacyProblem is PrivacyProblem
    assert sym.SymmetricMechanism is SymmetricMechanism
    assert newton.__name__ == "privopt.methods.blahut_arimoto.newton"
    for package in (ba, cvx, sym):
        with pytest.raises(AttributeError):
            package.no_such_name  # noqa: B018
        assert all(hasattr(package, name) for name in package.__all__)


def test_installed_finds_packages_without_importing_them():
    from privopt.methods.base import installed

    out = _loaded_after(
        "from privopt.methods.base import installed\nresult = installed('highspy')",
        ("highspy",),
    )
    assert out["result"] is True and not out["loaded"]["highspy"]
    assert installed("numpy") and not installed("privopt_no_such_package")
    assert not installed("")  # not a module name: no error, not installed


def test_deferred_exports_refuse_a_name_a_submodule_would_shadow():
    from privopt.methods.base import deferred_exports

    with pytest.raises(ValueError):
        deferred_exports("privopt.methods.blahut_arimoto", {"rate_distortion": "rate_distortion"})
