"""The docstrings of overriding methods (privopt._docstrings): an override that leaves out
its ``Parameters`` or ``Returns`` shows the overridden method's, and every public method of
every notion, every method and every sparse-LP encoding shows a whole numpy docstring that
names each of its parameters."""

from __future__ import annotations

import inspect
import re

import pytest

from privopt._docstrings import (
    complete_overrides,
    completed_docstring,
    numpy_sections,
    sections_of,
)
from privopt.methods import METHODS
from privopt.methods.sparse_lp.encodings import ENCODINGS
from privopt.notions import get_notion, notion_names

BASE = """Do something.

    Parameters
    ----------
    x : int
        The input.

    Returns
    -------
    int
        The output.

    Raises
    ------
    NotImplementedError
        Always.
    """


def test_sections_are_split_from_the_text():
    head, sections = numpy_sections(BASE)
    assert head == "Do something."
    assert list(sections) == ["Parameters", "Returns", "Raises"]
    assert sections["Returns"].splitlines() == ["Returns", "-------", "int", "    The output."]
    assert numpy_sections("Only a summary.") == ("Only a summary.", {})


def test_an_override_takes_what_it_leaves_out_but_not_raises():
    own = """Do it this way.

    Returns
    -------
    int
        Always 3.
    """
    head, sections = numpy_sections(completed_docstring(own, BASE))
    assert head == "Do it this way."
    assert list(sections) == ["Parameters", "Returns"]  # Raises is the base's own
    assert "x : int" in sections["Parameters"] and "Always 3." in sections["Returns"]
    assert completed_docstring(None, BASE) == inspect.cleandoc(BASE)
    assert completed_docstring(own, None) is own
    whole = BASE.replace("Do something.", "Mine.")
    assert completed_docstring(whole, BASE) is whole  # nothing left out: unchanged


def test_complete_overrides_changes_only_the_class_own_public_functions():
    class Base:
        def run(self, x):
            return x

        run.__doc__ = BASE

        def _hidden(self):
            """Base."""

    class Child(Base):
        def run(self, x):
            """Child's way."""
            return 2 * x

        def _hidden(self):
            """Child."""

        def extra(self):
            """Not an override."""

    complete_overrides(Child)
    assert numpy_sections(Child.run.__doc__)[0] == "Child's way."
    assert "x : int" in Child.run.__doc__
    assert Child._hidden.__doc__ == "Child." and Child.extra.__doc__ == "Not an override."
    assert Base.run.__doc__ == BASE and Child().run(2) == 4


def test_a_sibling_takes_the_shared_sections_in_numpy_order():
    def source(x):
        pass

    source.__doc__ = BASE

    @sections_of(source)
    def sibling(x):
        """Do it twice.

        Returns
        -------
        int
            Twice the output.
        """

    head, sections = numpy_sections(sibling.__doc__)
    assert head == "Do it twice."
    assert list(sections) == ["Parameters", "Returns", "Raises"]  # Raises after Returns
    assert "x : int" in sections["Parameters"] and "Twice" in sections["Returns"]
    assert "Always." in sections["Raises"]


def _public_functions(cls: type):
    for name in dir(cls):
        function = getattr(cls, name)
        if not name.startswith("_") and inspect.isfunction(function):
            yield name, function


def _check_whole_docstrings(cls: type) -> None:
    for attr, function in _public_functions(cls):
        head, sections = numpy_sections(inspect.getdoc(function) or "")
        signature = inspect.signature(function)
        returns_value = signature.return_annotation not in ("None", None)
        assert head and ("Returns" in sections or not returns_value), f"{cls.__name__}.{attr}"
        params = [p for p in signature.parameters if p != "self"]
        for param in params:
            documented = rf"^(\*\*)?(\w+, )*{param}\b"
            assert re.search(documented, sections.get("Parameters", ""), re.M), (
                f"{cls.__name__}.{attr}: {param}"
            )


@pytest.mark.parametrize("name", notion_names())
def test_every_notion_method_has_a_whole_numpy_docstring(name):
    _check_whole_docstrings(type(get_notion(name)))


@pytest.mark.parametrize("cls", sorted({type(m) for m in METHODS.values()}, key=str), ids=str)
def test_every_method_class_has_whole_numpy_docstrings(cls):
    _check_whole_docstrings(cls)


@pytest.mark.parametrize("cls", sorted({type(e) for e in ENCODINGS.values()}, key=str), ids=str)
def test_every_sparse_lp_encoding_has_whole_numpy_docstrings(cls):
    _check_whole_docstrings(cls)


def test_a_measure_with_a_unit_documents_it_once_before_raises():
    """``with_unit`` writes the keyword's section into the measure's docstring (between
    Returns and Raises, numpy's order); a measure's own source does not repeat it."""
    from privopt import measures

    measured = [
        getattr(measures, name)
        for name in measures.__all__
        if callable(getattr(measures, name)) and hasattr(getattr(measures, name), "__wrapped__")
    ]
    assert len(measured) > 10
    for function in measured:
        doc = inspect.getdoc(function)
        assert doc.count("Other Parameters") == 1, function.__name__
        own = inspect.getdoc(function.__wrapped__)
        assert "Other Parameters" not in own, function.__name__
        titles = list(numpy_sections(doc)[1])
        other = titles.index("Other Parameters")
        assert titles[other - 1] == "Returns", function.__name__
        assert "Raises" not in titles or titles.index("Raises") == other + 1
    assert measures.pml_level([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0]], unit="bits") == 1.0
