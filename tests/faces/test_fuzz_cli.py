"""Fuzzing the command line with random and mutated problem files (issue "Reliability", b).

Every input must end with exit code 0 (solved), 1 (infeasible) or 2 (bad input) — never a
traceback, never an exception escaping ``main``. CI runs a few hundred inputs; ``pytest -m
slow`` runs more than 1,000.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privopt.cli import main

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
BASES = sorted(p for p in (ROOT / "problems").glob("*.toml"))
FAST_BASES = [p for p in BASES if "counting_query" not in p.name]  # keep CI quick

WEIRD_VALUES = [
    -1.0,
    0.0,
    1e-12,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    2,
    "0.5",
    "nan",
    True,
    [],
    [[]],
    [0.5, 0.5],
    [[0.5, 0.5], [0.5, 0.5]],
    [1.0, -0.2, 0.2],
    {"x": 1},
    "hamming",
    "all",
    "dp",
    "no_such_notion",
    [0.1] * 9,
    100.0,
    1e-300,
]


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def _dump(data: dict, prefix: str = "") -> str:
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    for key, value in tables:
        name = f"{prefix}{key}"
        lines.append(f"\n[{name}]")
        lines.append(_dump(value, name + "."))
    return "\n".join(lines)


def _leaves(data: dict, path=()):
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*path, key))
        else:
            yield (*path, key)


def _mutate(data: dict, rnd: random.Random) -> dict:
    leaves = list(_leaves(data))
    for _ in range(rnd.randint(1, 3)):
        if not leaves:
            break
        path = rnd.choice(leaves)
        node = data
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):  # an earlier mutation replaced a table on this path
            leaves.remove(path)
            continue
        action = rnd.random()
        if action < 0.25:
            node.pop(path[-1], None)
            leaves.remove(path)
        elif action < 0.75:
            node[path[-1]] = rnd.choice(WEIRD_VALUES)
        elif action < 0.9 and isinstance(node.get(path[-1]), list) and node[path[-1]]:
            lst = list(node[path[-1]])
            lst.pop(rnd.randrange(len(lst)))
            node[path[-1]] = lst
        else:
            node[rnd.choice(["bogus", "epsilon", "max_distortion", "neighbors"])] = rnd.choice(
                WEIRD_VALUES
            )
    return data


def _check(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2, 4), (code, err[-2000:])
    assert "Traceback" not in err and "Traceback" not in out, err[-2000:]
    if code == 2:
        assert err.strip(), "a bad input must say what is wrong on stderr"


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(FAST_BASES), st.integers(0, 2**32 - 1), st.booleans())
def test_mutated_problem_files(tmp_path_factory, base, seed, as_json):
    data = tomllib.loads(base.read_text())
    data = _mutate(data, random.Random(seed))
    path = tmp_path_factory.mktemp("fuzz") / "mutated.toml"
    path.write_text(_dump(data))
    argv = ["solve", str(path)] + (["--json"] if as_json else [])
    _check(*_run_cli(argv))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=300))
def test_random_text_files(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "random.toml"
    path.write_text(text)
    code, out, err = _run_cli(["solve", str(path), "--json"])
    _check(code, out, err)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(FAST_BASES), st.integers(0, 10_000))
def test_truncated_problem_files(tmp_path_factory, base, cut):
    text = base.read_text()
    path = tmp_path_factory.mktemp("fuzz") / "truncated.toml"
    path.write_text(text[: cut % (len(text) + 1)])
    _check(*_run_cli(["solve", str(path)]))


def test_missing_file_and_bad_options(tmp_path):
    for argv in (
        ["solve", str(tmp_path / "nope.toml")],
        ["curve", str(BASES[0]), "--epsilon", "1:0:x"],
        ["curve", str(BASES[0])],
        ["solve", str(BASES[0]), "--solver", "NO_SUCH_SOLVER"],
        ["audit", str(BASES[0])],
        ["no-such-command"],
    ):
        code, out, err = _run_cli(argv)
        assert code == 2, (argv, code, err)
        assert "Traceback" not in err
        assert re.search(r"\S", err)


@pytest.mark.slow
@settings(max_examples=1100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(BASES), st.integers(0, 2**32 - 1), st.booleans())
def test_mutated_problem_files_many(tmp_path_factory, base, seed, as_json):
    data = _mutate(tomllib.loads(base.read_text()), random.Random(seed))
    path = tmp_path_factory.mktemp("fuzz") / "mutated.toml"
    path.write_text(_dump(data))
    _check(*_run_cli(["solve", str(path)] + (["--json"] if as_json else [])))
