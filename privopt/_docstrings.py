"""The docstrings of overriding methods: what an override leaves out is its base's.

A notion's ``measure`` or a method's ``solve`` takes the arguments and returns the value its
base class documents. Its own docstring says what it does (with the paper it follows); the
numpy sections it does not write (``Parameters``, ``Returns``) are copied from the method it
overrides when the class is created (:func:`complete_overrides`, called by the base classes'
``__init_subclass__``), so that ``help()`` and :func:`inspect.getdoc` show a whole numpy
docstring without the same paragraphs written again in every subclass. Sibling functions
that take the same arguments share their ``Parameters`` and ``Raises`` the same way
(:func:`sections_of`).
"""

from __future__ import annotations

__all__ = [
    "INHERITED_SECTIONS",
    "complete_overrides",
    "completed_docstring",
    "numpy_sections",
    "sections_of",
]

import inspect
from collections.abc import Callable
from typing import TypeVar

#: The sections an override takes from its base when it does not write them (``Raises`` is
#: never taken: a base that raises ``NotImplementedError`` says so for itself only).
INHERITED_SECTIONS = ("Parameters", "Returns")
#: The order of the numpy sections a docstring is completed with.
_ORDER = {
    title: i
    for i, title in enumerate(("Parameters", "Returns", "Yields", "Other Parameters", "Raises"))
}


def numpy_sections(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into its text before the first numpy section and its sections.

    Parameters
    ----------
    doc : str
        A docstring (indented as in the source or already cleaned).

    Returns
    -------
    tuple of (str, dict)
        The cleaned text before the first section (summary and description), and
        ``{section title: the section's lines, title and underline included}`` in the
        order they stand.
    """
    lines = inspect.cleandoc(doc).splitlines()
    starts = [
        i
        for i in range(len(lines) - 1)
        if lines[i].strip() and set(lines[i + 1].strip()) == {"-"} and not lines[i][0].isspace()
    ]
    head = "\n".join(lines[: starts[0]] if starts else lines).rstrip()
    sections = {}
    for start, end in zip(starts, [*starts[1:], len(lines)][: len(starts)], strict=True):
        sections[lines[start].strip()] = "\n".join(lines[start:end]).rstrip()
    return head, sections


def completed_docstring(
    own: str | None, base: str | None, titles: tuple[str, ...] = INHERITED_SECTIONS
) -> str | None:
    """An override's docstring with the sections ``titles`` (by default the
    :data:`INHERITED_SECTIONS`) it leaves out taken from the docstring of the method it
    overrides.

    Parameters
    ----------
    own : str or None
        The override's docstring (``None`` for none: then the base's is taken whole).
    base : str or None
        The overridden method's docstring.
    titles : tuple of str
        The sections taken from ``base``, in the order they are written.

    Returns
    -------
    str or None
        The override's text and its sections with those of ``titles`` it leaves out taken
        from ``base`` (``Parameters``, ``Returns``, ``Yields``, ``Other Parameters``,
        ``Raises`` first, in that order); ``own`` unchanged when it leaves out nothing the base has.
    """
    if base is None:
        return own
    if own is None:
        return inspect.cleandoc(base)
    head, sections = numpy_sections(own)
    _, inherited = numpy_sections(base)
    if all(title in sections or title not in inherited for title in titles):
        return own
    for title in titles:
        if title not in sections and title in inherited:
            sections[title] = inherited[title]
    # numpy's order for the sections it names (the others after them, as they stand)
    ordered = sorted(sections, key=lambda title: _ORDER.get(title, len(_ORDER)))
    return "\n\n".join([head, *(sections[title] for title in ordered)])


_Function = TypeVar("_Function", bound=Callable)


def sections_of(
    source: Callable, titles: tuple[str, ...] = ("Parameters", "Raises")
) -> Callable[[_Function], _Function]:
    """A decorator for a function that takes the same arguments as ``source`` (a sibling, not
    an override): the sections ``titles`` its docstring leaves out are ``source``'s.

    Parameters
    ----------
    source : callable
        The function whose docstring writes the shared sections.
    titles : tuple of str
        The sections shared (default ``Parameters`` and ``Raises``).

    Returns
    -------
    callable
        A decorator setting the decorated function's ``__doc__`` and returning the function.
    """

    def decorate(function: _Function) -> _Function:
        function.__doc__ = completed_docstring(function.__doc__, source.__doc__, titles)
        return function

    return decorate


def complete_overrides(cls: type) -> None:
    """Complete the docstrings of the public methods ``cls`` overrides (see the module
    docstring); called from a base class's ``__init_subclass__``.

    Parameters
    ----------
    cls : type
        A newly created class; only the functions it defines itself are changed.

    Returns
    -------
    None
        The functions' ``__doc__`` is set in place.
    """
    for name, member in vars(cls).items():
        function = getattr(member, "__func__", member)  # staticmethod, classmethod
        if name.startswith("_") or not inspect.isfunction(function):
            continue
        overridden = next((vars(k)[name] for k in cls.__mro__[1:] if name in vars(k)), None)
        if overridden is not None:
            base_doc = getattr(overridden, "__func__", overridden).__doc__
            function.__doc__ = completed_docstring(function.__doc__, base_doc)
