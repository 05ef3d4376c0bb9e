"""``[mechanism]`` and ``[composition]`` of an audit file, and mechanism files written by
``privopt solve --out`` (:func:`load_mechanism`)."""

from __future__ import annotations

import csv
import io
import os
import zipfile

import numpy as np

from privopt._io import decode_text, max_file_bytes, read_input_file
from privopt.errors import InputError
from privopt.model import Distortion, Mechanism

from ._reader import _error, _Reader, _rewrap, csv_number
from .spec import ProblemSpec


class _MechanismSection(_Reader):
    """``[mechanism]`` and ``[composition]`` of an audit file."""

    def audited(self, data: dict, spec: ProblemSpec) -> None:
        """``[mechanism]`` or ``[composition]`` (the composed release) into ``spec``; an audit
        file needs one of them."""
        mech_t = self.table(data, "mechanism", "")
        comp_t = self.table(data, "composition", "")
        if mech_t is not None and comp_t is not None:
            raise self.err(
                "composition", "give [mechanism] or [composition] (the composed release), not both"
            )
        if mech_t is not None:
            spec.mechanism = self.mechanism(mech_t, spec.prior, spec.distortion)
        elif comp_t is not None:
            spec.composition = self.composition(comp_t, spec.prior)
            spec.mechanism = spec.composition["mechanism"]
            if (
                spec.distortion is not None
                and spec.distortion.n_outputs != spec.mechanism.n_outputs
            ):
                raise self.err(
                    "composition",
                    f"the composed release has {spec.mechanism.n_outputs} outputs but the "
                    f"distortion has {spec.distortion.n_outputs}",
                )
        elif self.purpose == "audit":
            raise self.err(
                "mechanism",
                "missing section [mechanism] with matrix = [[…]] (rows = inputs), or [composition]",
            )

    def mechanism(self, t: dict, prior, distortion: Distortion | None) -> Mechanism:
        if "matrix" not in t:
            raise self.err(
                "mechanism.matrix", "missing: give matrix = [[…]] (rows = inputs, entries p(u|y))"
            )
        rows = self.matrix(t, "matrix", "mechanism")
        if len(rows) != prior.n_inputs:
            raise self.err(
                "mechanism.matrix",
                f"has {len(rows)} rows but the prior has {prior.n_inputs} inputs: one row per "
                "input symbol",
            )
        n_out = len(rows[0])
        if distortion is not None and distortion.n_outputs != n_out:
            raise self.err(
                "mechanism.matrix",
                f"has {n_out} columns but the distortion has {distortion.n_outputs} outputs",
            )
        labels = self.labels(t, "output_labels", "mechanism", n_out)
        if labels is None and distortion is not None and distortion.output_labels is not None:
            labels = distortion.output_labels
        if labels is None and n_out == prior.n_inputs:
            labels = prior.input_labels
        return Mechanism(rows, prior.input_labels, labels)

    def composition(self, t: dict, prior) -> dict:
        """``[composition]``: ``first`` (rows = inputs) and exactly one of ``adaptive`` (one
        matrix p(z|x, y) per output y of ``first``), ``then`` (post-processing p(z|y)) and
        ``parallel`` (an independent p(z|x))."""
        if "first" not in t:
            raise self.err("composition.first", "missing: the first stage p(y|x) = [[…]]")
        first_rows = self.matrix(t, "first", "composition")
        if len(first_rows) != prior.n_inputs:
            raise self.err(
                "composition.first",
                f"has {len(first_rows)} rows but the prior has {prior.n_inputs} inputs",
            )
        first = Mechanism(first_rows, prior.input_labels)
        kinds = [k for k in ("adaptive", "then", "parallel") if k in t]
        if len(kinds) != 1:
            raise self.err(
                "composition",
                "give exactly one second stage: adaptive = [[[…]], …] (p(z|x, y), one matrix "
                "per output y), then = [[…]] (p(z|y)) or parallel = [[…]] (p(z|x))",
            )
        kind = kinds[0]
        key = f"composition.{kind}"
        if kind == "adaptive":
            raw = t["adaptive"]
            if not isinstance(raw, list) or len(raw) != first.n_outputs:
                raise self.err(
                    key,
                    f"expected {first.n_outputs} matrices p(z|x, y), one per output y of first",
                )
            second = []
            for y, rows in enumerate(raw):
                rows = self.matrix_value(rows, f"{key}[{y}]")
                if len(rows) != prior.n_inputs:
                    raise self.err(
                        f"{key}[{y}]", f"has {len(rows)} rows; one per input ({prior.n_inputs})"
                    )
                second.append(Mechanism(rows))
            try:
                composed = first.compose_adaptive(second)
            except InputError as exc:
                raise self.err(key, str(exc).split(": ", 1)[-1]) from None
        else:
            rows = self.matrix(t, kind, "composition")
            second = Mechanism(rows)
            try:
                composed = first.then(second) if kind == "then" else first.parallel(second)
            except InputError as exc:
                raise self.err(key, str(exc).split(": ", 1)[-1]) from None
        return {"kind": kind, "first": first, "second": second, "mechanism": composed}


def _structured_from_json(text: str):
    """The structured mechanism of a ``solve --out`` JSON object without a dense matrix, or
    ``None``."""
    import json

    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("mechanism") is not None:
        return None
    if not isinstance(data.get("structured_mechanism"), dict):
        return None
    from privopt.methods.structured import from_description

    return from_description(data["structured_mechanism"])


def load_mechanism(path: str | os.PathLike):
    """Read a mechanism written by ``privopt solve --out`` (``.json``, ``.csv`` or ``.npz``).

    A ``.json`` object whose mechanism is held in structured form (no dense matrix; the
    ``structured_mechanism`` key) gives the structured mechanism
    (:mod:`privopt.methods.structured`).

    The file is read like a problem file (a regular file of at most
    ``PRIVOPT_MAX_FILE_BYTES`` bytes); ``.npz`` archives are read without pickle and refused
    when their arrays would unpack to more than that size.

    Parameters
    ----------
    path : str or path-like
        The mechanism file; the format follows the extension.

    Returns
    -------
    Mechanism or structured mechanism
        With the input and output labels of the file.

    Raises
    ------
    InputError
        ``"<path>: …"`` naming what is wrong.
    """
    name = os.fspath(path)
    ext = os.path.splitext(name)[1].lower()
    if ext not in (".json", ".csv", ".npz"):
        raise _error(name, None, f"unknown extension {ext!r}: use .json, .csv or .npz")
    limit = max_file_bytes()
    raw = read_input_file(name, limit)
    try:
        if ext == ".json":
            text = decode_text(raw, name)
            structured = _structured_from_json(text)
            return structured if structured is not None else Mechanism.from_json(text)
        if ext == ".csv":
            return _mechanism_from_csv(decode_text(raw, name), name)
        return _mechanism_from_npz(raw, name, limit)
    except InputError as exc:
        raise _rewrap(name, exc) from None
    except RecursionError:
        raise _error(name, None, "cannot read the mechanism: nested too deeply") from None
    except (OSError, ValueError, KeyError, csv.Error, zipfile.BadZipFile) as exc:
        raise _error(name, None, f"cannot read the mechanism: {exc}") from None


def _mechanism_from_csv(text: str, name: str) -> Mechanism:
    """A mechanism from the CSV of ``solve --out``: a header ``input,<outputs…>``, then one
    row per input (its label, then p(u|y))."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if len(rows) < 2:
        raise _error(name, None, "expected a header row and one row per input")
    outputs = rows[0][1:]
    inputs = [r[0] for r in rows[1:]]
    matrix = [[csv_number(v) for v in r[1:]] for r in rows[1:]]
    return Mechanism(matrix, inputs, outputs)


def _mechanism_from_npz(raw: bytes, name: str, limit: int) -> Mechanism:
    """A mechanism from the ``.npz`` of ``solve --out``, read without pickle; an archive that
    would unpack to more than ``limit`` bytes is refused before it is unpacked."""
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        unpacked = sum(info.file_size for info in archive.infolist())
    if unpacked > limit:
        raise _error(
            name,
            None,
            f"the archive unpacks to {unpacked} bytes, more than the limit of {limit} "
            "(PRIVOPT_MAX_FILE_BYTES)",
        )
    with np.load(io.BytesIO(raw), allow_pickle=False) as data:
        inputs = data["inputs"].tolist() if "inputs" in data else None
        outputs = data["outputs"].tolist() if "outputs" in data else None
        return Mechanism(data["mechanism"], inputs, outputs)
