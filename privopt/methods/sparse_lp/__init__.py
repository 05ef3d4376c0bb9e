"""The linear notions as a sparse LP solved by HiGHS (see :mod:`.method`)."""

from privopt.methods.sparse_lp.encodings import ENCODINGS
from privopt.methods.sparse_lp.method import SparseLP, solve_point
from privopt.methods.sparse_lp.translation import TranslationInvariantMechanism

__all__ = ["ENCODINGS", "SparseLP", "TranslationInvariantMechanism", "solve_point"]
