"""The documentation: the site builds in strict mode (every warning an error: broken links,
missing pages, docstrings that do not parse) with an API entry for every public class and
rendered maths, and every ```python block of README.md and docs/ runs; a block followed by a
```text block must print exactly that text. The README is a front door: short, its links
resolve, its install and test commands are the ones CI runs, and no page includes it."""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: A fenced block: its info string and its body.
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
#: Markdown files whose code blocks run.
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
    # what they call is run on a LocalCluster by tests/solve/test_batch.py
    namespace: dict = {"__name__": "docs_example"}
    for number, (code, expected) in enumerate(code_blocks(path), 1):
        if "from distributed import" in code:
            pytest.importorskip("distributed")
        out = io.StringIO()
        # a page's example may show privopt's notes (e.g. a spanner's guarantee): recorded
        # here, as a reader sees them, not leaked into the suite's summary
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as notes:
            warnings.simplefilter("always")
            exec(compile(code, f"{path.name}[block {number}]", "exec"), namespace)  # noqa: S102
        assert all(issubclass(n.category, UserWarning) for n in notes), [
            str(n.message) for n in notes
        ]
        if expected is not None:
            assert out.getvalue() == expected, (
                f"block {number} of {path.name} printed:\n{out.getvalue()}"
            )
    import matplotlib.pyplot as plt

    plt.close("all")


def test_readme_python_block_has_its_output():
    blocks = code_blocks(ROOT / "README.md")
    assert blocks[0][1] is not None and "requested_epsilon" in blocks[0][1]
    # "Python in ten lines": the README's example stays short
    code_lines = [line for line in blocks[0][0].splitlines() if line.strip()]
    assert len(code_lines) <= 10, len(code_lines)


#: The README's length limit: the reference lives in docs/.
README_MAX_LINES = 250
#: A Markdown link or image to a local target: ``[text](target)``.
LOCAL_LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+)\)")


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    targets = LOCAL_LINK.findall(text)
    assert any(target.startswith("docs/") for target in targets)
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, missing
    # every top-level page of the site is linked from the README
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md") if p.name != "index.md"}
    linked = {t.split("#")[0] for t in targets}
    assert pages <= linked, sorted(pages - linked)
    assert (ROOT / "CITATION.cff").exists() and "CITATION.cff" in text


def _run_commands(text: str) -> list[str]:
    """The shell commands of a script or of ```bash blocks: lines that are not comments."""
    return [
        line.split("  #")[0].strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_ci_runs_the_readme_install_and_test_commands():
    """``.ci/run`` installs and tests exactly as the README's "Test" section says."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Test\n", 1)[1].split("\n## ", 1)[0]
    bash = [body for info, body in FENCE.findall(section) if info.strip() == "bash"]
    assert len(bash) == 1
    readme_commands = _run_commands(bash[0])
    ci_commands = _run_commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert readme_commands == [c for c in ci_commands if c in readme_commands]
    assert readme_commands[-1] == ci_commands[-1]  # the test run is CI's last command
    for command in readme_commands:
        assert command in ci_commands, command


def test_no_page_includes_the_readme():
    """The reference lives in the pages: no snippet include of README sections is left."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    including = [str(p.relative_to(ROOT)) for p in pages if "--8<--" in p.read_text("utf-8")]
    assert not including
    assert "--8<--" not in (ROOT / "README.md").read_text(encoding="utf-8")


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
    # every notion has its page; the command-line reference is a page of its own
    from privopt.notions import notion_names

    for name in notion_names():
        assert (site / "notions" / name / "index.html").exists(), name
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "privopt batch" in cli and "privopt compare" in cli and "--8&lt;--" not in cli
    # every public class of ``import privopt as po`` has its entry in the API reference
    import privopt

    html = "".join(p.read_text(encoding="utf-8") for p in (site / "api").rglob("index.html"))
    classes = [getattr(privopt, name) for name in privopt.__all__]
    classes = [c for c in classes if isinstance(c, type)]
    assert {"LocationGrid", "Metric", "DesignResult"} <= {c.__name__ for c in classes}
    for cls in classes:
        assert f'id="{cls.__module__}.{cls.__qualname__}"' in html, cls.__qualname__
    # long signatures are wrapped by the formatter, one parameter a line
    assert re.search(r"design\(\s*\n\s*prior,\s*\n", _text(page)), "design() not formatted"
    # maths: LaTeX kept for MathJax, whose settings and script the pages load
    notions = (site / "notions" / "index.html").read_text(encoding="utf-8")
    assert notions.count('class="arithmatex"') >= 8
    assert "javascripts/mathjax.js" in notions and "mathjax@3" in notions
    assert (site / "javascripts" / "mathjax.js").exists()


def _text(html: str) -> str:
    """The text of an HTML page: tags removed, entities decoded."""
    import html as html_module

    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def test_the_api_index_lists_every_public_name():
    """docs/api/index.md names every entry of ``privopt.__all__`` (each linked to its entry;
    the strict build resolves the links)."""
    import privopt

    index = (ROOT / "docs" / "api" / "index.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\[`po\.(\w+)`\]\[", index))
    assert listed == set(privopt.__all__), sorted(listed ^ set(privopt.__all__))


def test_api_pages_show_the_docstring_sections_completed_at_import(monkeypatch):
    """An override's docstring leaves out the Parameters its base documents; Python completes
    it at import (privopt._docstrings) and the docs extension renders the completed one."""
    griffe = pytest.importorskip("griffe")
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "_hooks"))
    from runtime_docstrings import RuntimeDocstrings

    path = "notions.maximal_alpha_leakage.MaximalAlphaLeakage.measure"
    source = griffe.load("privopt", search_paths=[str(ROOT)])[path].docstring.value
    assert "Parameters" not in source  # else this test checks nothing
    extensions = griffe.load_extensions(RuntimeDocstrings())
    package = griffe.load("privopt", extensions=extensions, search_paths=[str(ROOT)])
    from privopt.notions.maximal_alpha_leakage import MaximalAlphaLeakage

    rendered = package[path].docstring.value
    assert "Parameters" in rendered and "**options" in rendered
    assert rendered == inspect.getdoc(MaximalAlphaLeakage.measure)
