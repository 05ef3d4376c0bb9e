"""A Griffe extension: the API pages show a docstring as Python shows it (``help()``).

privopt writes some numpy sections of a docstring once and completes the others when a
module is imported (``privopt._docstrings``): an override takes the ``Parameters`` and
``Returns`` of the method it overrides, and a function can take sections of a sibling's.
Griffe reads the source, where those sections are absent; this extension imports each
documented function and class of privopt and, where :func:`inspect.getdoc` of the live
object differs from the source docstring, renders the live one.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe

#: The package whose docstrings are completed at import time.
PACKAGE = "privopt"


def _live(obj: griffe.Object) -> Any:
    """The imported object at ``obj``'s path, or ``None`` where it cannot be reached."""
    module = importlib.import_module(obj.module.path)
    target: Any = module
    for name in obj.path[len(obj.module.path) + 1 :].split("."):
        target = inspect.getattr_static(target, name, None)
        if target is None:
            return None
    return getattr(target, "__func__", target)  # staticmethod, classmethod


def _documented(node: griffe.Object):
    """Every function and class inside ``node`` (modules, classes), aliases left out."""
    for member in node.members.values():
        if member.is_alias:
            continue
        if member.is_function or member.is_class:
            yield member
        if member.is_module or member.is_class:
            yield from _documented(member)


class RuntimeDocstrings(griffe.Extension):
    """Replace the source docstrings that privopt completes at import time by the live ones."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Called once the package is loaded.

        Parameters
        ----------
        pkg : griffe.Module
            The loaded package; only privopt is changed.
        **kwargs
            Griffe's other arguments (unused).

        Returns
        -------
        None
        """
        if pkg.name != PACKAGE:
            return
        for obj in _documented(pkg):
            if obj.docstring is None:
                continue
            live = inspect.getdoc(_live(obj)) if _live(obj) is not None else None
            if live and live != inspect.cleandoc(obj.docstring.value):
                obj.docstring = griffe.Docstring(
                    live, lineno=obj.docstring.lineno, endlineno=None, parent=obj
                )
