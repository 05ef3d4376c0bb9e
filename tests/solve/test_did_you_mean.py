"""A new user's mistakes: each is an InputError that names the field at fault and, for a
misspelt name, the valid names closest to it (``InputError.suggestions``, "did you mean").

The assertions are on the structured parts (exception type, ``field``, ``suggestions``), never
on the wording of the messages.
"""

from __future__ import annotations

import inspect
import pickle
import subprocess
import sys

import pytest

import privopt as po
from privopt.errors import InputError, close_matches, did_you_mean
from privopt.request import DESIGN_KEYWORDS

PMF = [0.5, 0.3, 0.2]
DB = po.DatabasePrior(m=2, n=2, row_probs=[0.6, 0.4])


def _raised(call) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


#: (what the user typed, the call, the field named, the first suggestion)
MISTAKES = [
    (
        "a misspelt keyword of design",
        lambda: po.design(PMF, "hamming", "pml", epsilion=1.0),
        "epsilion",
        "epsilon",
    ),
    (
        "British spelling of neighbors on dp",
        lambda: po.design(DB, "hamming", "dp", epsilon=1.0, neighbours="all"),
        "neighbours",
        "neighbors",
    ),
    (
        "a misspelt notion",
        lambda: po.design(PMF, "hamming", "plm", epsilon=1.0),
        "privacy.notion",
        "pml",
    ),
    (
        "a notion spelt with capitals and a hyphen",
        lambda: po.design(PMF, "hamming", "Maximal-Leakge", epsilon=1.0),
        "privacy.notion",
        "maximal_leakage",
    ),
    (
        "a misspelt distortion",
        lambda: po.design(PMF, "haming", "pml", epsilon=1.0),
        "distortion",
        "hamming",
    ),
    (
        "a misspelt solver",
        lambda: po.design(PMF, "hamming", "pml", epsilon=1.0, solver="CLARABLE"),
        "solver.name",
        "CLARABEL",
    ),
    (
        "a misspelt neighbour relation",
        lambda: po.design(DB, "hamming", "dp", epsilon=1.0, neighbors="hamings"),
        "privacy.neighbors",
        "hamming",
    ),
    (
        "a misspelt unit",
        lambda: po.design(PMF, "hamming", "pml", epsilon=1.0, unit="bit"),
        "unit",
        "bits",
    ),
    (
        "epsilon= given to sweep",
        lambda: po.sweep(PMF, "hamming", "pml", epsilon=[0.5, 1.0]),
        "epsilon",
        "epsilons",
    ),
    (
        "a misspelt option of robust_pml",
        lambda: po.design(PMF, "hamming", "robust_pml", epsilon=1.0, prios=[PMF]),
        "prios",
        "priors",
    ),
    (
        "a misspelt time limit",
        lambda: po.design(PMF, "hamming", "pml", epsilon=1.0, time_limt=5),
        "time_limt",
        "time_limit",
    ),
]


@pytest.mark.parametrize("what,call,field,first", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_each_mistake_names_its_field_and_the_fix(what, call, field, first):
    err = _raised(call)
    assert err.field == field
    assert err.suggestions and err.suggestions[0] == first
    assert first in str(err)  # the name the user should type is in the message


def test_a_stray_keyword_is_named_before_the_missing_level():
    """``epsilion=1`` used to be reported as "neither epsilon nor max_distortion"."""
    err = _raised(lambda: po.design(PMF, "hamming", "pml", epsilion=1.0))
    assert err.field == "epsilion"


def test_an_option_of_another_notion_keeps_its_file_field():
    err = _raised(lambda: po.design(PMF, "hamming", "pml", epsilon=1.0, priors=[PMF]))
    assert err.field == "privacy.priors"


def test_no_suggestion_for_a_name_far_from_every_valid_one():
    err = _raised(lambda: po.design(PMF, "hamming", "zzzzzz", epsilon=1.0))
    assert err.field == "privacy.notion" and err.suggestions == ()


def test_design_keywords_cover_the_signatures():
    """The names a stray keyword is compared with are every keyword of design and sweep."""
    for function in (po.design, po.sweep):
        params = inspect.signature(function).parameters.values()
        named = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
        assert named <= set(DESIGN_KEYWORDS), sorted(named - set(DESIGN_KEYWORDS))


def test_close_matches_and_did_you_mean():
    assert close_matches("plm", ["pml", "ldp", "dp"]) == ("pml",)
    assert close_matches("Max-Information-Leakge", ["max_information_leakage"]) == (
        "max_information_leakage",
    )
    assert close_matches(3, ["pml"]) == () and close_matches("", ["pml"]) == ()
    assert close_matches("pml", ["pml"]) == ()  # the name itself is no suggestion
    assert did_you_mean(()) == ""
    assert "'a'" in did_you_mean(["a", "b"]) and "'b'" in did_you_mean(["a", "b"])


def test_suggestions_survive_pickling():
    err = _raised(lambda: po.design(PMF, "hamming", "plm", epsilon=1.0))
    back = pickle.loads(pickle.dumps(err))
    assert (back.field, back.suggestions, str(back)) == (err.field, err.suggestions, str(err))


def test_problem_file_keys(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(
        "[prior]\nprobs = [0.5, 0.5]\n[distortion]\nkind = 'hamming'\n"
        "[privacy]\nnotion = 'pml'\nepsilion = 1.0\n"
    )
    err = _raised(lambda: po.files.load_problem(path))
    assert err.field == "privacy.epsilion" and err.suggestions[0] == "epsilon"
    path.write_text(
        "[prior]\nprobs = [0.5, 0.5]\n[distortion]\nkind = 'haming'\n"
        "[privacy]\nnotion = 'pml'\nepsilon = 1.0\n"
    )
    err = _raised(lambda: po.files.load_problem(path))
    assert err.field == "distortion.kind" and err.suggestions[0] == "hamming"
    path.write_text(
        "[prior]\nprobs = [0.5, 0.5]\n[distortion]\nkind = 'hamming'\n"
        "[privacy]\nnotion = 'pml'\nepsilon = 1.0\n[solver]\nname = 'HiGHS-typo'\n"
    )
    err = _raised(lambda: po.files.load_problem(path))
    assert err.field == "solver.name"


@pytest.mark.parametrize(
    "argv,suggested",
    [
        (["slove", "problems/pml_uniform_ternary.toml"], "solve"),
        (["solve", "problems/pml_uniform_ternary.toml", "--jsn"], "--json"),
    ],
)
def test_command_line_suggests_commands_and_options(argv, suggested):
    done = subprocess.run(
        [sys.executable, "-m", "privopt", *argv],
        capture_output=True,
        text=True,
        cwd=str(po.files.__file__).rsplit("/privopt/", 1)[0],
    )
    assert done.returncode == 2
    assert f"'{suggested}'" in done.stderr and "Traceback" not in done.stderr


def test_a_prior_file_with_a_header_line(tmp_path):
    """docs/problem-files.md describes the lines as "label,weight": a header saying so is
    accepted (it was refused as "'weight' is not a number")."""
    (tmp_path / "visits.csv").write_text("label,weight\nhome,3\nwork,1\n")
    path = tmp_path / "p.toml"
    path.write_text(
        '[prior]\nfile = "visits.csv"\ncounts = true\n[distortion]\nkind = "hamming"\n'
        '[privacy]\nnotion = "pml"\nepsilon = 1.0\n'
    )
    spec = po.files.load_problem(path)
    assert list(spec.prior.labels) == ["home", "work"]
    assert list(spec.prior.probs) == pytest.approx([0.75, 0.25])
    (tmp_path / "visits.csv").write_text("weight\n3\n1\n")
    assert list(po.files.load_problem(path).prior.probs) == pytest.approx([0.75, 0.25])
    (tmp_path / "visits.csv").write_text("place,Probability\nhome,0.75\nwork,0.25\n")
    spec = po.files.load_problem(path)
    assert list(spec.prior.labels) == ["home", "work"]
    for text in ("home,3\nwork,lots\n", "home,x\nwork,1\n"):  # not headers: errors
        (tmp_path / "visits.csv").write_text(text)
        err = _raised(lambda: po.files.load_problem(path))
        assert err.field == "prior.file"
