"""What the commands print: numbers for people, JSON with matrix rows on one line, the report
sections several commands share (the file's header, a mechanism's matrix, the leakage table,
the ``[reference]`` checks), and CSV cells. Text from files is untrusted: every line is
printed with its control characters escaped."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt._io import escape_text, json_number

if TYPE_CHECKING:  # pragma: no cover
    from privopt.io.files import ProblemSpec


#: Largest mechanism printed in full in the human-readable output.
MAX_PRINT_ROWS = 16


MAX_PRINT_COLS = 10


def _json_safe(value):
    """Recursively turn numpy scalars into Python numbers and inf / nan into ``None``."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return _json_safe(value.tolist())
    return json_number(value)


_NUMERIC_ARRAY = re.compile(r"\[\s*((?:-?[0-9.eE+-]+|null)(?:,\s*(?:-?[0-9.eE+-]+|null))*)\s*\]")


def _dumps(obj) -> str:
    """Indented JSON with arrays of numbers kept on one line (matrix rows stay readable)."""
    text = json.dumps(_json_safe(obj), indent=2, allow_nan=False)

    def one_line(match: re.Match) -> str:
        return "[" + re.sub(r"\s+", "", match.group(1)).replace(",", ", ") + "]"

    return _NUMERIC_ARRAY.sub(one_line, text)


def _print_json(obj) -> None:
    sys.stdout.write(_dumps(obj) + "\n")


def _fmt(value, digits: int = 9) -> str:
    """A number for people: ``inf`` for an infinite level, ``—`` only for a missing value."""
    if value is None:
        return "—"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return f"{value:.{digits}g}" if math.isfinite(value) else str(value)
    return str(value)


def _fixed(value, decimals: int = 10) -> str:
    """Fixed decimals; ``inf`` / ``nan`` as such, ``—`` for a missing value."""
    if value is None:
        return "—"
    value = float(value)
    return f"{value:.{decimals}f}" if math.isfinite(value) else str(value)


def _lines(lines: Iterable[str]) -> str:
    """Join report lines, each with control characters escaped (text from files is untrusted:
    a title must not clear the screen or forge a line of the report)."""
    return "\n".join(escape_text(line) for line in lines)


def _note(message: str) -> None:
    """One line on stderr, control characters escaped."""
    print(escape_text(message), file=sys.stderr)


def _header(spec: ProblemSpec) -> list[str]:
    lines = []
    if spec.title:
        lines.append(spec.title)
    if spec.source:
        lines.append(f"  source: {spec.source}")
    lines.append(f"  file:   {spec.path}")
    return lines


def _matrix_lines(matrix: np.ndarray, inputs, outputs, corner: str = "y \\ u") -> list[str]:
    inputs = [escape_text(x) for x in inputs]  # escaped before the column widths are taken
    outputs = [escape_text(u) for u in outputs]
    n_rows, n_cols = matrix.shape
    rows = list(range(min(n_rows, MAX_PRINT_ROWS)))
    cols = list(range(min(n_cols, MAX_PRINT_COLS)))
    label_w = max([len(corner)] + [len(str(inputs[i])) for i in rows])
    width = max([9] + [len(str(outputs[j])) + 1 for j in cols])
    head = corner.ljust(label_w) + "".join(str(outputs[j]).rjust(width) for j in cols)
    if n_cols > len(cols):
        head += f"  … ({n_cols - len(cols)} more columns)"
    lines = ["  " + head]
    for i in rows:
        cells = "".join(f"{matrix[i, j]:.6f}".rjust(width) for j in cols)
        lines.append("  " + str(inputs[i]).ljust(label_w) + cells)
    if n_rows > len(rows):
        lines.append(f"  … ({n_rows - len(rows)} more rows; --json or --out give the full matrix)")
    return lines


def _leakage_lines(
    leakage: dict, asked: str | None, prior, neighbors, unit: str = "nats"
) -> list[str]:
    rel = neighbors or ("hamming" if getattr(prior, "is_database", False) else "all")
    if not isinstance(rel, str):
        rel = f"the file's {rel.n_pairs // 2} neighbour pairs"
    else:
        rel = "Hamming neighbours" if rel == "hamming" else "all pairs"
    lines = [f"leakage of this mechanism ({unit}; dp and identifiability on {rel})"]
    width = max(len(k) for k in leakage) if leakage else 10
    for name, value in leakage.items():
        mark = "  <- the asked notion" if name == asked else ""
        lines.append(f"  {name.ljust(width)}  {_fixed(value):>16}{mark}")
    return lines


def _reference_lines(spec: ProblemSpec, checks: list[dict]) -> list[str]:
    if not checks:
        return []
    ref = spec.reference
    tol = ref.get("tolerance", 1e-6)
    lines = [f"reference ({ref['what']})" if ref.get("what") else "reference"]
    for c in checks:
        verdict = "OK" if c["ok"] else "MISMATCH"
        exp, got = c["expected"], c["got"]
        if isinstance(exp, list):
            lines.append(f"  {c['key']}: expected {exp}, got {got}  {verdict}")
            continue
        diff = ""
        if isinstance(exp, (int, float)) and isinstance(got, (int, float)):
            if math.isfinite(exp) and math.isfinite(got):
                diff = f", |diff| {abs(got - exp):.2g} (tolerance {tol:g})"
        lines.append(
            f"  {c['key']}: expected {_fmt(exp, 12)}, got {_fmt(got, 12)}{diff}  {verdict}"
        )
    return lines


def _structure_lines(desc: dict) -> list[str]:
    """A structured mechanism's rule and its generating data (row kernel or first row)."""
    lines = [f"  rule: {desc.get('rule', desc['kind'])}"]
    if "kernel" in desc:
        kernel = np.array(desc["kernel"])
        labels = [str(i) for i in range(kernel.shape[0])]
        lines += _matrix_lines(kernel, labels, labels, corner="x_i \\ y_i")
    elif "f" in desc:
        f = np.array(desc["f"])
        lines.append(
            "  f = ["
            + ", ".join(f"{v:.6g}" for v in f[:MAX_PRINT_COLS])
            + (", …" if f.size > MAX_PRINT_COLS else "")
            + "]"
        )
    return lines


def _csv_value(value) -> Any:
    """A CSV cell: empty for a missing value, ``inf`` for an infinite one."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return float(value)  # str(inf) == "inf", read back by float() and pandas
    if isinstance(value, np.integer):
        return int(value)
    return value


def _wrote(outputs: Iterable[tuple[str, str | None]], gap: str = "\n") -> None:
    """Say on stdout which files a command wrote: ``wrote the WHAT to PATH`` for each
    ``(WHAT, PATH)`` with a path, each after ``gap``."""
    for what, path in outputs:
        if path:
            print(f"{gap}wrote the {what} to {escape_text(path)}")
