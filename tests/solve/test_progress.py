"""Progress bars by default: only in an interactive session, only for work longer than the
delay, never in tests' captured output; ``progress=True`` / ``False`` / a callable of one's own.

Time is a fake clock (each reading advances it), never the wall clock.
"""

from __future__ import annotations

import io
import sys

import pytest

import privopt as po
from privopt.solve import progress as bars

PMF = [0.5, 0.3, 0.2]


class FakeBar:
    """Records what a tqdm bar would have been asked to do."""

    made: list[FakeBar] = []

    def __init__(self, **kwargs):
        self.kwargs, self.updates, self.postfix, self.closed = kwargs, 0, [], False
        FakeBar.made.append(self)

    def update(self, n):
        self.updates += n

    def set_postfix_str(self, text):
        self.postfix.append(text)

    def close(self):
        self.closed = True


@pytest.fixture
def fake(monkeypatch):
    """A clock that advances 1 s at each reading, and bars that record instead of drawing."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(bars, "_now", lambda: float(next(ticks)))
    monkeypatch.setattr(bars, "_tqdm_class", lambda: FakeBar)
    FakeBar.made = []
    return FakeBar


def test_default_is_off_in_tests_and_pipes(monkeypatch):
    assert bars.wants_progress(None) is False  # PYTEST_CURRENT_TEST is set
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe, not a terminal
    assert bars.wants_progress(None) is False


def test_default_is_on_in_a_terminal_and_the_environment_overrides(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setattr(sys, "stderr", Terminal())
    monkeypatch.delenv(bars.PROGRESS_ENV, raising=False)
    assert bars.wants_progress(None) is True
    monkeypatch.setenv(bars.PROGRESS_ENV, "off")
    assert bars.wants_progress(None) is False
    monkeypatch.setenv(bars.PROGRESS_ENV, "1")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert bars.wants_progress(None) is True
    assert bars.wants_progress(False) is False and bars.wants_progress(True) is True


def test_a_bad_progress_value_is_an_input_error():
    with pytest.raises(po.InputError) as info:
        po.design(PMF, "hamming", "pml", epsilon=1.0, progress="yes")
    assert info.value.field == "progress"


def test_no_bar_before_the_delay():
    clock = iter([0.0, 0.5, 1.0, 1.9])
    made = []
    bar = bars.ProgressBar("x", 3, delay=2.0, clock=lambda: next(clock), factory=made.append)
    bar.advance()
    bar.note("working")
    bar.advance()
    bar.close()
    assert made == []


def test_the_bar_appears_after_the_delay_with_the_count_so_far():
    clock = iter([0.0, 0.5, 2.5, 3.0])
    bar = bars.ProgressBar("x", 5, delay=2.0, clock=lambda: next(clock), factory=FakeBar)
    FakeBar.made = []
    bar.advance()  # 0.5 s: nothing yet
    bar.advance()  # 2.5 s: the bar, already at 2 of 5
    bar.advance()
    (made,) = FakeBar.made
    assert made.kwargs["total"] == 5 and made.kwargs["initial"] == 2 and made.updates == 1
    bar.close()
    assert made.closed


def test_sweep_with_progress_counts_its_points(fake):
    curve = po.sweep(PMF, "hamming", "pml", epsilons=[0.5, 1.0, 1.5, 2.0], progress=True)
    assert len(curve) == 4
    (made,) = fake.made
    assert made.kwargs["total"] == 4 and made.kwargs["initial"] + made.updates == 4
    assert made.closed and "pml" in made.kwargs["desc"]


def test_sweep_progress_false_and_default_draw_nothing(fake):
    po.sweep(PMF, "hamming", "pml", epsilons=[0.5, 1.0], progress=False)
    po.sweep(PMF, "hamming", "pml", epsilons=[0.5, 1.0])
    assert fake.made == []


def test_sweep_takes_a_wrapper_of_its_own(fake):
    seen = []

    def wrapper(points):
        for p in points:
            seen.append(p)
            yield p

    po.sweep(PMF, "hamming", "pml", epsilons=[0.5, 1.0], progress=wrapper)
    assert seen == [0.5, 1.0] and fake.made == []


def test_design_status_line_passes_events_on(fake):
    events = []
    res = po.design(PMF, "hamming", "pml", epsilon=1.0, progress=True, on_progress=events.append)
    assert res.status == "optimal" and events
    (made,) = fake.made
    assert made.postfix and made.closed and "total" not in made.kwargs
    # by default a caller that follows the events itself gets no bar of privopt's
    fake.made.clear()
    po.design(PMF, "hamming", "pml", epsilon=1.0, on_progress=events.append)
    assert fake.made == []


def test_solve_many_with_progress(fake):
    asks = [{"prior": PMF, "distortion": "hamming", "notion": "pml", "epsilon": e} for e in (1, 2)]
    po.solve_many(asks, progress=True)
    (made,) = fake.made
    assert made.kwargs["total"] == 2


def test_a_real_tqdm_bar_writes_to_stderr(monkeypatch, capsys):
    ticks = iter(range(10**6))
    monkeypatch.setattr(bars, "_now", lambda: float(next(ticks)))
    po.sweep(PMF, "hamming", "pml", epsilons=[0.5, 1.0, 1.5], progress=True)
    assert "privopt: pml" in capsys.readouterr().err
    po.sweep(PMF, "hamming", "pml", epsilons=[0.5, 1.0, 1.5])
    assert capsys.readouterr().err == ""
