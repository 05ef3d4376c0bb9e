"""Privacy notions: each in one module, registered by name (see :mod:`privopt.notions.base`).

To add a notion, write one module with a :class:`~privopt.notions.base.Notion` subclass
decorated with :func:`~privopt.notions.base.register`, and import it here.
"""

from privopt.notions import (  # noqa: F401  (imported for registration)
    dp,
    identifiability,
    information_privacy,
    ldp,
    max_information_leakage,
    maximal_alpha_leakage,
    maximal_leakage,
    metric_dp,
    mutual_information,
    pml,
    robust_pml,
)
from privopt.notions.base import (
    NOTIONS,
    DesignContext,
    Notion,
    NotionOption,
    get_notion,
    notion_names,
    option_owners,
    register,
)

#: The notions of the problem-file format, in its order: measured in every result's ``leakage``.
STANDARD_NOTIONS = (
    "mutual_information",
    "max_information_leakage",
    "pml",
    "maximal_leakage",
    "information_privacy",
    "identifiability",
    "dp",
    "ldp",
)

__all__ = [
    "NOTIONS",
    "STANDARD_NOTIONS",
    "DesignContext",
    "Notion",
    "NotionOption",
    "get_notion",
    "option_owners",
    "notion_names",
    "register",
]
