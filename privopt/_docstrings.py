"""The docstrings of overriding methods: what an override leaves out is its base's.

A notion's ``measure`` or a method's ``solve`` takes the arguments and returns the value its
base class documents. Its own docstring says what it does (with the paper it follows); the
numpy sections it does not write (``Parameters``, ``Returns``) are copied from the method it
overrides when the class is created (:func:`complete_overrides`, called by the base classes'
``__init_subclass__``), so that ``help()`` and :func:`inspect.getdoc` show a whole numpy
docstring without the same paragraphs written again in every subclass.
"""

from __future__ import annotations

__all__ = ["INHERITED_SECTIONS", "complete_overrides", "completed_docstring", "numpy_sections"]

import inspect

#: The sections an override takes from its base when it does not write them (``Raises`` is
#: never taken: a base that raises ``NotImplementedError`` says so for itself only).
INHERITED_SECTIONS = ("Parameters", "Returns")


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


def completed_docstring(own: str | None, base: str | None) -> str | None:
    """An override's docstring with the :data:`INHERITED_SECTIONS` it leaves out taken from
    the docstring of the method it overrides.

    Parameters
    ----------
    own : str or None
        The override's docstring (``None`` for none: then the base's is taken whole).
    base : str or None
        The overridden method's docstring.

    Returns
    -------
    str or None
        The override's text, then ``Parameters`` and ``Returns`` (its own, or else the
        base's), then its other sections; ``own`` unchanged when it leaves out nothing
        the base has.
    """
    if base is None:
        return own
    if own is None:
        return inspect.cleandoc(base)
    head, sections = numpy_sections(own)
    _, inherited = numpy_sections(base)
    if all(title in sections or title not in inherited for title in INHERITED_SECTIONS):
        return own
    parts = [head]
    for title in INHERITED_SECTIONS:
        section = sections.pop(title, None) or inherited.get(title)
        if section is not None:
            parts.append(section)
    parts.extend(sections.values())
    return "\n\n".join(parts)


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
