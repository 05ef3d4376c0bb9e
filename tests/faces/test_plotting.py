"""Figures for notebooks and papers.

``plot_curves`` returns a Figure and can draw on a given Axes; ``save_figure`` writes atomically;
budget sweeps are drawn at the achieved distortion with slack budgets marked; the legend stays
outside the axes; line widths are uniform; the title describes the sweep.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import privopt as po  # noqa: E402
from privopt import InputError, plotting  # noqa: E402
from privopt.cli import main  # noqa: E402
from privopt.io.files import load_problem  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EIGHT = [
    "mutual_information",
    "max_information_leakage",
    "pml",
    "maximal_leakage",
    "information_privacy",
    "identifiability",
    "dp",
    "ldp",
]


@pytest.fixture(scope="module")
def demo_curves():
    prior = po.DatabasePrior(m=2, n=2, probs=[0.42, 0.18, 0.28, 0.12])
    dist = po.Distortion.database_hamming(2, 2)
    eps = list(np.linspace(0, 3, 13))
    curves = [po.sweep(prior, dist, n, epsilons=eps) for n in ("identifiability", "dp")]
    return prior, dist, curves


@pytest.fixture(scope="module")
def budget_curve():
    """The issue's example: wang_pdmip.toml, --max-distortion 0.05:1:8."""
    spec = load_problem(ROOT / "problems" / "wang_pdmip.toml")
    budgets = list(np.linspace(0.05, 1, 8))
    curve = po.sweep(spec.prior, spec.distortion, spec.notion, max_distortions=budgets)
    return spec, curve


@pytest.fixture(scope="module")
def eight_curves():
    spec = load_problem(ROOT / "problems" / "maximal_leakage.toml")
    eps = list(np.linspace(0, 2, 6))
    curves = [po.sweep(spec.prior, spec.distortion, n, epsilons=eps) for n in EIGHT]
    return spec, curves


def _curve_lines(ax: Axes) -> dict:
    return {
        line.get_gid().split(":", 1)[1]: line
        for line in ax.get_lines()
        if (line.get_gid() or "").startswith("curve:")
    }


def test_import_privopt_loads_no_matplotlib():
    code = (
        "import sys, privopt; privopt.design; privopt.Mechanism; "
        "import privopt.cli; assert 'matplotlib' not in sys.modules, 'matplotlib loaded'"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_plot_curves_returns_a_figure_and_writes_nothing(demo_curves, tmp_path, monkeypatch):
    prior, dist, curves = demo_curves
    monkeypatch.chdir(tmp_path)
    fig = plotting.plot_curves(curves, prior=prior, distortion=dist)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert list(tmp_path.iterdir()) == []
    assert set(_curve_lines(fig.axes[0])) == {"identifiability", "dp"}


def test_draws_on_a_given_axes_without_a_new_figure(demo_curves, budget_curve):
    prior, dist, curves = demo_curves
    spec, budget = budget_curve
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    assert plotting.plot_curves(curves, ax=left, prior=prior, distortion=dist, title="") is fig
    assert (
        plotting.plot_curve(budget, ax=right, prior=spec.prior, distortion=spec.distortion) is fig
    )
    assert len(fig.axes) == 2 and not fig.legends
    assert set(_curve_lines(left)) == {"identifiability", "dp"}
    assert set(_curve_lines(right)) == {"mutual_information"}
    assert left.get_title() == "" and "budget" in right.get_title()
    fig.canvas.draw()
    for ax in (left, right):  # the legend goes under the axes, clear of them
        assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())


def test_budget_plot_uses_the_achieved_distortion(budget_curve):
    spec, curve = budget_curve
    achieved = [r["distortion"] for r in curve.records]
    assert max(achieved) == pytest.approx(0.7, abs=1e-6)  # budgets 0.73, 0.86, 1.0: E[d] = 0.7
    fig = plotting.plot_curve(curve, prior=spec.prior, distortion=spec.distortion)
    ax = fig.axes[0]
    line = _curve_lines(ax)["mutual_information"]
    y = np.asarray(line.get_ydata())
    x = np.asarray(line.get_xdata())
    assert sorted(y) == pytest.approx(sorted(achieved), abs=1e-12)
    assert y.max() == pytest.approx(0.7, abs=1e-6)  # was drawn at (0, 1.0): D*(0) looked like 1
    assert x[np.argmax(y)] == pytest.approx(0.0, abs=1e-6)
    # the slack budgets (above the 0.7 they need) are drawn hollow and named
    (hollow,) = [ln for ln in ax.get_lines() if ln.get_gid() == "slack:mutual_information"]
    assert len(hollow.get_xdata()) == 3
    assert np.asarray(hollow.get_ydata()) == pytest.approx([0.7] * 3, abs=1e-6)
    assert matplotlib.colors.same_color(hollow.get_markerfacecolor(), "white")
    assert matplotlib.colors.same_color(line.get_markerfacecolor(), line.get_color())
    legend_text = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("not binding" in t for t in legend_text)
    notes = [t.get_text() for t in ax.texts]
    assert any("0.729" in t and "0.864" in t and "1" in t for t in notes)
    assert "least privacy level" in ax.get_xlabel() and "achieved" in ax.get_ylabel()


def test_eight_notions_legend_outside_thin_lines_sweep_title(eight_curves, tmp_path):
    spec, curves = eight_curves
    fig = plotting.plot_curves(curves, prior=spec.prior, distortion=spec.distortion)
    ax = fig.axes[0]
    lines = _curve_lines(ax)
    assert set(lines) == set(EIGHT)
    assert {line.get_linewidth() for line in lines.values()} == {plotting._LINE_WIDTH}
    styles = {(line.get_color(), line.get_marker()) for line in lines.values()}
    assert len(styles) == 8
    title = ax.get_title()
    assert spec.title not in title and "8 notions" in title and "(0.5, 0.3, 0.2)" in title
    fig.canvas.draw()
    (legend,) = fig.legends
    box, axes_box = legend.get_window_extent(), ax.get_window_extent()
    assert not box.overlaps(axes_box)  # was drawn over the curves and overflowed the axes
    assert box.y1 <= axes_box.y0
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y0 >= fig.bbox.y0
    texts = [t.get_text() for t in legend.get_texts()]
    assert len(texts) == len(legend.legend_handles)
    assert any(r"$\varepsilon_X$" in t for t in texts)
    assert any(r"\tilde{\varepsilon}_X" in t for t in texts)
    plotting.save_figure(fig, tmp_path / "eight.png")
    assert (tmp_path / "eight.png").stat().st_size > 20_000


def _legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.legends[0].get_texts()]


def test_epsilon_tilde_is_marked_whenever_the_legend_names_it(demo_curves, eight_curves):
    prior, dist, curves = demo_curves  # ε̃_X = ε_X = ln 7/3: one line marks both
    texts = _legend_texts(plotting.plot_curves(curves, prior=prior, distortion=dist))
    assert any(r"from $\tilde{\varepsilon}_X$" in t for t in texts)
    assert any(t.startswith(r"$\varepsilon_X = \tilde{\varepsilon}_X$ = 0.8473") for t in texts)
    spec, eight = eight_curves  # ε_X = ln 2.5 < ε̃_X = ln 3: two lines
    fig = plotting.plot_curves(eight, prior=spec.prior, distortion=spec.distortion)
    texts = _legend_texts(fig)
    assert any(r"from $\tilde{\varepsilon}_X$" in t for t in texts)
    assert any(t.startswith(r"$\tilde{\varepsilon}_X$ = 1.099") for t in texts)
    assert any(t.startswith(r"$\varepsilon_X$ = 0.9163") for t in texts)
    marks = {ln.get_gid(): ln.get_xdata()[0] for ln in fig.axes[0].get_lines()}
    assert marks["epsilon_x"] == pytest.approx(np.log(2.5))
    assert marks["epsilon_tilde_x"] == pytest.approx(np.log(3))


def test_legend_placements_and_closed_forms_off(demo_curves):
    prior, dist, curves = demo_curves
    fig = plotting.plot_curves(curves, prior=prior, distortion=dist, closed_form=False, legend=None)
    assert not fig.legends and fig.axes[0].get_legend() is None
    assert len(fig.axes[0].get_lines()) == 2
    fig = plotting.plot_curves(curves, prior=prior, distortion=dist, legend="right")
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1
    with pytest.raises(InputError, match=r"legend: unknown placement 'top': use 'below'"):
        plotting.plot_curves(curves, legend="top")
    with pytest.raises(InputError, match="'below', 'right', 'inside' or None"):
        curves[0].plot(legend="top")


def test_plot_curves_says_what_it_expects(demo_curves):
    """Not curves: an InputError naming ``curves`` (was an AttributeError); one Curve alone is
    drawn as a list of one."""
    prior, dist, curves = demo_curves
    with pytest.raises(InputError, match=r"curves: item 0 is int 1, not a Curve"):
        plotting.plot_curves([1, 2])
    for bad in (5, "dp", None):
        with pytest.raises(InputError, match="expected a list of curves"):
            plotting.plot_curves(bad)
    fig = plotting.plot_curves(curves[1], closed_form=False, legend=None)
    assert len(fig.axes[0].get_lines()) == 1


def test_a_highlight_without_a_level_is_not_drawn(demo_curves):
    """A design stopped by its time limit has no level: the star is skipped (was a TypeError
    in float(None), which crashed ``privopt demo --time-limit``)."""
    prior, dist, curves = demo_curves
    kwargs = dict(prior=prior, distortion=dist, closed_form=False, legend=None)
    for empty in ((None, None, "stopped"), (None, 0.5, "x"), (float("nan"), 0.5, "x")):
        fig = plotting.plot_curves(curves, highlight=empty, **kwargs)
        assert [ln.get_marker() for ln in fig.axes[0].get_lines()].count("*") == 0
    fig = plotting.plot_curves(curves, highlight=(1.0, 0.5, "this design"), **kwargs)
    stars = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "*"]
    assert len(stars) == 1 and list(stars[0].get_xdata()) == [1.0]
    with pytest.raises(InputError, match="highlight: expected"):
        plotting.plot_curves(curves, highlight=(1.0, 0.5), **kwargs)


def test_save_figure_is_atomic_and_checks_the_format(demo_curves, tmp_path, monkeypatch):
    prior, dist, curves = demo_curves
    fig = plotting.plot_curves(curves, prior=prior, distortion=dist)
    target = tmp_path / "fig.pdf"
    assert plotting.save_figure(fig, target) == str(target)
    assert target.read_bytes().startswith(b"%PDF")
    good = target.read_bytes()

    def broken(self, fh, **kwargs):
        fh.write(b"%PDF-1.4 half a fig")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(InputError, match="no space left"):
        plotting.save_figure(fig, target, option="--plot")
    assert target.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.pdf"]
    for name in ("fig", "fig.jpg"):
        with pytest.raises(InputError, match=r"\.png, \.pdf or \.svg"):
            plotting.save_figure(fig, tmp_path / name)


def test_save_figure_into_a_missing_folder_names_the_path(demo_curves, tmp_path):
    """privopt's own error naming the path asked for and its missing folder (was a bare
    FileNotFoundError naming a hidden temporary file)."""
    prior, dist, curves = demo_curves
    fig = plotting.plot_curves(curves, closed_form=False, legend=None)
    target = tmp_path / "nonexist" / "x.png"
    with pytest.raises(InputError) as info:
        plotting.save_figure(fig, target)
    message = str(info.value)
    assert message.startswith("path: ") and info.value.field == "path"
    assert repr(str(target)) in message and "does not exist" in message
    assert ".tmp" not in message
    with pytest.raises(InputError, match=r"^--plot: .*does not exist"):
        plotting.save_figure(fig, target, option="--plot")
    assert not (tmp_path / "nonexist").exists()


def test_sweep_title_describes_the_sweep(demo_curves, budget_curve):
    prior, dist, curves = demo_curves
    title = plotting.sweep_title(curves, prior, dist)
    assert title.splitlines() == [
        "Least distortion at each privacy level: identifiability, dp",
        "2-row databases over 2 symbols, prior (0.6, 0.4) ⊗ (0.7, 0.3), Hamming distortion",
    ]
    spec, curve = budget_curve
    assert plotting.sweep_title([curve]).startswith("Least privacy level within each distortion")


def test_cli_figures_show_the_sweep_and_the_achieved_points(tmp_path, capsys, monkeypatch):
    saved = []
    real = plotting.save_figure

    def spy(fig, path, **kwargs):
        saved.append(fig)
        return real(fig, path, **kwargs)

    monkeypatch.setattr(plotting, "save_figure", spy)
    png = tmp_path / "b.png"
    path = ROOT / "problems" / "wang_pdmip.toml"
    code = main(["curve", str(path), "--max-distortion", "0.05:1:8", "--plot", str(png), "--json"])
    assert code == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["distortion"] for r in records][-3:] == pytest.approx([0.7] * 3, abs=1e-6)
    assert png.read_bytes()[:4] == b"\x89PNG"
    (fig,) = saved
    ax = fig.axes[0]
    title = ax.get_title()
    assert load_problem(path).title not in title  # was the file's single-request title
    assert title.startswith("Least privacy level within each distortion budget")
    assert max(_curve_lines(ax)["mutual_information"].get_ydata()) == pytest.approx(0.7, abs=1e-6)


def _lines_by_gid(fig) -> dict:
    return {line.get_gid(): line for ax in fig.axes for line in ax.get_lines() if line.get_gid()}


def test_the_figure_marks_each_points_own_closed_form_checks(demo_curves):
    """The overlays at the points come from the checks the solver ran (one source of truth):
    every passed distortion check of every point is drawn at its closed-form value."""
    prior, dist, curves = demo_curves
    fig = plotting.plot_curves(curves, prior=prior, distortion=dist)
    lines = _lines_by_gid(fig)
    drawn = set()
    for key in ("equal", "at_most", "at_least"):
        if f"checks:{key}" in lines:
            xs, ys = lines[f"checks:{key}"].get_data()
            drawn |= {
                (round(float(x), 9), round(float(y), 9), key) for x, y in zip(xs, ys, strict=True)
            }
    expected = set()
    for curve in curves:
        for record, result in zip(curve.records, curve.results, strict=True):
            for check in result.closed_form if result is not None else []:
                if check.relation in ("equal", "at_most", "at_least") and check.got is not None:
                    if abs(check.got - record["distortion"]) <= 1e-9 * (1 + record["distortion"]):
                        assert record[f"closed_form.{check.name}"] == check.expected
                        point = (record["requested_epsilon"], check.expected, check.relation)
                        expected.add(
                            tuple(round(float(v), 9) if i < 2 else v for i, v in enumerate(point))
                        )
    assert expected and drawn == expected
    assert "checks:failed" not in lines
    # the h(ε) upper bound of PD-DP is among them (Wang et al. Thm 1)
    assert any(key == "at_most" for *_, key in drawn)


def test_a_failed_check_is_drawn_in_red(demo_curves):
    import dataclasses

    prior, dist, curves = demo_curves
    curve = curves[1]
    result = next(r for r in curve.results if r is not None and r.closed_form)
    check = next(c for c in result.closed_form if c.relation == "at_most")
    wrong = dataclasses.replace(check, expected=check.got - 0.25, passed=False)
    j = curve.results.index(result)
    tampered = dataclasses.replace(result, closed_form=[wrong])
    results = list(curve.results)
    results[j] = tampered
    fake = dataclasses.replace(curve, results=results)
    fig = plotting.plot_curves([fake], prior=prior, distortion=dist)
    xs, ys = _lines_by_gid(fig)["checks:failed"].get_data()
    assert list(zip(xs, ys, strict=True)) == [
        (curve.records[j]["requested_epsilon"], wrong.expected)
    ]
