"""MkDocs hook: show the Sphinx roles of the docstrings (``:func:`x```, ``:class:`~a.B```)
as code, the way Sphinx would (``~`` keeps the last part of the name)."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):<code>(~?)([^<]*)</code>")


def _code(match: re.Match) -> str:
    name = match.group(2)
    if match.group(1):
        name = name.rsplit(".", 1)[-1]
    return f"<code>{name}</code>"


def on_page_content(html: str, **kwargs) -> str:
    """Rewrite the roles left in a page's HTML.

    Parameters
    ----------
    html : str
        The page's HTML.
    **kwargs
        The page, the config and the files (unused).

    Returns
    -------
    str
    """
    return ROLE.sub(_code, html)
