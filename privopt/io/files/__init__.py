"""Problem files: TOML in, a validated :class:`ProblemSpec` out (docs/problem-files.md).

A problem file says what the designer knows (``[prior]``, ``[distortion]``), what they ask
for (``[privacy]``: a notion and either ``epsilon`` or ``max_distortion``) and optionally how
to solve it (``[solver]``), what the answer must be (``[reference]``) and, for
``privopt audit``, a mechanism to measure (``[mechanism]``). Files are parsed with
:mod:`tomllib` only: no code is executed and nothing is unpickled.

Every problem with a file is an :class:`~privopt.errors.InputError` whose message starts
with the file name and the key at fault, e.g.
``problems/x.toml: prior.probs: sums to 0.9, off by -0.1: …``. The parser checks the shape
and types of what it reads; the values are checked by the same validation as the Python API
(:mod:`privopt.validation`, :func:`privopt.request.prepare_request`), so a mistake gets the
same message in a file and in Python.

One module per section: :mod:`~privopt.io.files.prior`, :mod:`~privopt.io.files.distortion`,
:mod:`~privopt.io.files.privacy` (with ``[solver]``), :mod:`~privopt.io.files.mechanism` (with
``[composition]`` and mechanism files), :mod:`~privopt.io.files.reference`; the checks they share
in ``_reader``, :class:`ProblemSpec` in :mod:`~privopt.io.files.spec`, and the loader (the TOML
document, the files it names, the sections in turn) in :mod:`~privopt.io.files.loader`. The public
names are importable from here.

Optional keys beyond the basic format (all documented in docs/problem-files.md):

``[prior.database] symbols``
    names of the ``m`` row values (database labels join them).
``[privacy] <option> = …``
    a notion's own options, declared by the notion (e.g. ``priors = [[…], …]``, the finite
    prior class of ``robust_pml``); ``privopt notions`` lists them.
``[privacy] delta = …``
    the δ of the tail and event audits of ``privopt audit`` ((ε,δ)-PML, (ε,δ)-EML,
    δ-approximate max-information, probabilistic DP); with ``epsilon`` the audit also reports
    the least δ at that ε. A design refuses δ > 0: those guarantees are not convex.
``[privacy] observe_secret = true``
    joint priors only: the mechanism sees ``(Y, S)`` (Calmon–Fawaz Remarks 3–4).
``[[distortion.extra]]``
    further budgets ``E[d_k] ≤ budget`` (Calmon–Fawaz Remark 1); each has ``budget`` and a
    distortion given like the main one (``kind``, ``values``, ``matrix``).
``[solver] time_limit``
    seconds for the whole solve, ``≥ 0`` (status ``time_limit`` when reached; ``inf`` or a
    huge number: no limit).
``[mechanism] output_labels``
    names of the mechanism's outputs (audit files).
``[reference] status, least_achievable, leakage, pml_per_output``
    expected outcome of an infeasible request, expected leakage values of the answer (a table
    ``notion = value``), expected PML per output (audit files).
"""

from ._reader import OUTPUT_KEYS, VALID_KEYS, csv_number, notion_option_keys
from .distortion import DISTORTION_KINDS
from .loader import (
    FILE_KEYS,
    ReferencedFile,
    load_problem,
    parse_problem,
    read_referenced_files,
    read_toml,
    referenced_files,
)
from .mechanism import load_mechanism
from .prior import PRIOR_FILE_HEADERS
from .reference import DEFAULT_REFERENCE_TOLERANCE, check_reference
from .spec import ProblemSpec

__all__ = [
    "ProblemSpec",
    "load_problem",
    "parse_problem",
    "check_reference",
    "load_mechanism",
    "read_referenced_files",
    "referenced_files",
    "ReferencedFile",
    "FILE_KEYS",
    "VALID_KEYS",
    "PRIOR_FILE_HEADERS",
    "read_toml",
    "csv_number",
    "notion_option_keys",
    "OUTPUT_KEYS",
    "DISTORTION_KINDS",
    "DEFAULT_REFERENCE_TOLERANCE",
]
