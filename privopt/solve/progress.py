"""Progress bars by default for long work in a terminal or a notebook (tqdm's conventions).

:func:`privopt.design`, :func:`privopt.sweep` and :func:`privopt.solve_many` take
``progress``: ``None`` (the default) shows a bar on stderr once the work has run for
:data:`DELAY_S` seconds, but only in an interactive session (stderr is a terminal, or the code
runs in a Jupyter kernel); ``True`` shows it whenever the work runs that long; ``False`` never.
Nothing is drawn for work that ends sooner: the bar is created at the first step after the
delay (tqdm's ``delay``). A sweep's bar counts its points; a design's shows the method at work
and its iteration.

Never in batch jobs, pipes or tests: stderr is then not a terminal (a test run is also
recognised by ``PYTEST_CURRENT_TEST``). The environment variable ``PRIVOPT_PROGRESS`` overrides
the default: ``0`` / ``off`` / ``false`` never, ``1`` / ``on`` / ``true`` always.

tqdm is a dependency; in a notebook with ipywidgets the bar is tqdm's notebook widget, else
its text bar.
"""

from __future__ import annotations

__all__ = [
    "DELAY_S",
    "PROGRESS_ENV",
    "ProgressBar",
    "interactive",
    "wants_progress",
    "points_progress",
    "design_progress",
]

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from privopt.errors import InputError

#: Seconds of work before a bar appears (shorter work draws nothing).
DELAY_S = 2.0
#: The environment variable that overrides the default (``0``/``off``, ``1``/``on``).
PROGRESS_ENV = "PRIVOPT_PROGRESS"
#: The clock of the bars (seconds; tests replace it).
_now = time.monotonic
_OFF = ("0", "off", "false", "no", "never")
_ON = ("1", "on", "true", "yes", "always")


def _in_notebook() -> bool:
    """Whether this code runs in a Jupyter kernel (IPython's ZMQ shell)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - an IPython without a shell
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def interactive() -> bool:
    """Whether someone is watching: stderr is a terminal, or this is a Jupyter kernel (and
    this is not a test run).

    Returns
    -------
    bool
    """
    if os.environ.get("PYTEST_CURRENT_TEST"):
        return False
    if _in_notebook():
        return True
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def wants_progress(progress: bool | None, field: str = "progress") -> bool:
    """Whether to show a bar, from the ``progress`` argument, :data:`PROGRESS_ENV` and
    :func:`interactive`.

    Parameters
    ----------
    progress : bool or None
        ``True`` always, ``False`` never, ``None`` the default (the environment variable,
        else whether the session is interactive).
    field : str
        The argument named in an error.

    Returns
    -------
    bool

    Raises
    ------
    InputError
        For any other value.
    """
    if progress is True or progress is False:
        return progress
    if progress is not None:
        raise InputError(
            f"expected True, False or None (a bar when the session is interactive), got "
            f"{type(progress).__name__} {progress!r:.60}",
            field,
        )
    setting = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if setting in _OFF:
        return False
    if setting in _ON:
        return True
    return interactive()


def _tqdm_class():
    """tqdm's notebook widget in a Jupyter kernel with ipywidgets, else its text bar."""
    if _in_notebook():
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm as notebook_tqdm

            return notebook_tqdm
        except ImportError:
            pass
    from tqdm.std import tqdm

    return tqdm


class ProgressBar:
    """A bar created only once the work has run :data:`DELAY_S` seconds.

    Parameters
    ----------
    desc : str
        What is running (the bar's label).
    total : int, optional
        Steps in all (points of a sweep); ``None`` for a status line without a count.
    delay : float
        Seconds before the bar appears.
    clock : callable, optional
        Seconds now (default :func:`time.monotonic`).
    factory : callable, optional
        Makes the bar from tqdm's keywords (default: tqdm, see the module docstring).
    """

    def __init__(
        self,
        desc: str,
        total: int | None = None,
        *,
        delay: float = DELAY_S,
        clock: Callable[[], float] | None = None,
        factory: Callable[..., Any] | None = None,
    ):
        self.desc, self.total, self.delay = desc, total, delay
        self.clock = clock or (lambda: _now())
        self.factory = factory
        self.start = self.clock()
        self.done = 0
        self.text = ""
        self.bar: Any = None

    def _show(self) -> bool:
        """Create the bar once the delay has passed; whether there is one."""
        if self.bar is None and self.clock() - self.start >= self.delay:
            factory = self.factory or _tqdm_class()
            kwargs: dict[str, Any] = {"desc": self.desc, "leave": False, "file": sys.stderr}
            if self.total is None:
                kwargs["bar_format"] = "{desc}: {postfix} [{elapsed}]"
            else:
                kwargs.update(total=self.total, initial=self.done, unit="pt")
            self.bar = factory(**kwargs)
            if self.text:
                self.bar.set_postfix_str(self.text)
        return self.bar is not None

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps done.

        Parameters
        ----------
        steps : int
        """
        self.done += steps
        if self.bar is not None:
            self.bar.update(steps)
        else:
            self._show()

    def note(self, text: str) -> None:
        """Show ``text`` beside the bar (the method at work, its iteration).

        Parameters
        ----------
        text : str
        """
        self.text = text
        if self.bar is not None:
            self.bar.set_postfix_str(text)
        else:
            self._show()

    def close(self) -> None:
        """Remove the bar (nothing to do when none was drawn)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def points_progress(
    progress: Callable[[Iterable], Iterable] | bool | None, desc: str
) -> Callable[[Iterable], Iterable] | None:
    """The ``progress`` argument of a sweep or a batch as a wrapper of its iterable of points.

    Parameters
    ----------
    progress : callable, bool or None
        A wrapper of the caller's own (e.g. ``tqdm.tqdm``), returned as it is; or ``True`` /
        ``False`` / ``None`` as in :func:`wants_progress`.
    desc : str
        The bar's label (e.g. the notion swept).

    Returns
    -------
    callable or None
        ``None`` when no bar is wanted.
    """
    if callable(progress):
        return progress
    if not wants_progress(progress):
        return None

    def wrap(points: Iterable) -> Iterator:
        try:
            total = len(points)  # type: ignore[arg-type]
        except TypeError:
            total = None
        bar = ProgressBar(desc, total)
        if total is None:
            bar.note("points done: 0")
        try:
            for point in points:
                yield point
                bar.advance()
                if total is None:
                    bar.note(f"points done: {bar.done}")
        finally:
            bar.close()

    return wrap


class _DesignStatus:
    """``on_progress`` of a design: the method at work and its iteration, after the delay."""

    def __init__(self, desc: str, chained: Callable | None):
        self.bar = ProgressBar(desc)
        self.chained = chained

    def __call__(self, event) -> None:
        text = f"{event.method} {event.stage}"
        if event.iteration is not None:
            text += f", iteration {event.iteration}"
        self.bar.note(text)
        if self.chained is not None:
            self.chained(event)

    def close(self) -> None:
        self.bar.close()


def design_progress(
    progress: bool | None, on_progress: Callable | None, desc: str
) -> _DesignStatus | None:
    """The status line of a design, or ``None``.

    By default (``progress=None``) a design whose caller follows its events itself
    (``on_progress``) draws no bar of its own; ``progress=True`` draws one anyway and still
    passes every event on.

    Parameters
    ----------
    progress : bool or None
        As in :func:`wants_progress`.
    on_progress : callable or None
        The caller's own event handler (called for every event either way).
    desc : str
        The bar's label.

    Returns
    -------
    callable or None
        An ``on_progress`` handler with a ``close()`` method, or ``None`` (keep
        ``on_progress`` as it is).
    """
    if progress is None and on_progress is not None:
        return None
    if not wants_progress(progress):
        return None
    return _DesignStatus(desc, on_progress)
