"""The documentation: the site builds in strict mode (every warning an error: broken links,
missing pages, docstrings that do not parse), and every ```python block of README.md and
docs/ runs; a block followed by a ```text block must print exactly that text."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: A fenced block: its info string and its body.
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
#: Markdown files whose code blocks run (the docs pages that include README sections by
#: snippet have their blocks in README.md).
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def code_blocks(path: Path) -> list[tuple[str, str | None]]:
    """The ```python blocks of ``path``, each with the ```text block right after it, if any."""
    text = path.read_text(encoding="utf-8")
    fences = list(FENCE.finditer(text))
    blocks = []
    for i, fence in enumerate(fences):
        if fence.group(1).strip() != "python":
            continue
        expected = None
        if i + 1 < len(fences) and fences[i + 1].group(1).strip() == "text":
            between = text[fence.end() : fences[i + 1].start()]
            if len(between.strip().splitlines()) <= 1:  # at most one line of prose between
                expected = fences[i + 1].group(2)
        blocks.append((fence.group(2), expected))
    return blocks


@pytest.mark.parametrize(
    "path", [p for p in SOURCES if code_blocks(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_markdown_python_blocks_run(path, tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    import matplotlib

    matplotlib.use("Agg")
    # run in an empty folder (figures are written there) that sees the problem library
    (tmp_path / "problems").symlink_to(ROOT / "problems", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    # blocks under `if __name__ == "__main__":` (starting a Dask cluster) only import here;
    # what they call is run on a LocalCluster by tests/test_batch.py
    namespace: dict = {"__name__": "docs_example"}
    for number, (code, expected) in enumerate(code_blocks(path), 1):
        if "from distributed import" in code:
            pytest.importorskip("distributed")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{path.name}[block {number}]", "exec"), namespace)  # noqa: S102
        if expected is not None:
            assert out.getvalue() == expected, (
                f"block {number} of {path.name} printed:\n{out.getvalue()}"
            )
    import matplotlib.pyplot as plt

    plt.close("all")


def test_readme_python_block_has_its_output():
    blocks = code_blocks(ROOT / "README.md")
    assert blocks[0][1] is not None and "requested_epsilon" in blocks[0][1]


def test_docs_build_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("mkdocstrings_handlers.python")
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-4000:]
    # the API reference is generated from the docstrings, with their parameters
    page = (site / "api" / "design" / "index.html").read_text(encoding="utf-8")
    assert "max_distortion" in page and "Parameters" in page
    assert ":func:" not in page and ":class:" not in page  # roles shown as code (docs/_hooks)
    assert "solve_many" in (site / "api" / "batch" / "index.html").read_text(encoding="utf-8")
    # every notion has its page, and the README sections were included (no snippet left)
    from privopt.notions import notion_names

    for name in notion_names():
        assert (site / "notions" / name / "index.html").exists(), name
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "privopt batch" in cli and "--8&lt;--" not in cli and "--8<--" not in cli
