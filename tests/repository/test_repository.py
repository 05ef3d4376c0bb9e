"""The repository is self-contained: nothing cites documents outside it, and every paper key
cited in code, problem files, notebooks and docs is listed in ``docs/bibliography.md``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT_SUFFIXES = {".py", ".toml", ".md", ".ipynb", ".txt", ".cfg", ".yml", ".yaml", ".rst"}
#: References to the development notes that live outside the repository.
OUTSIDE = re.compile(r"spec/|math\.md|problem-format\.md|\bspec ?§|\bSpec ?§|\[00[0-4]\]")
#: A bibliography key: capitalised words joined by hyphens in brackets, e.g. [Calmon-Fawaz].
KEY = re.compile(r"\[([A-Z][A-Za-z]+(?:-[A-Z][A-Za-z]+)+)\]")


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an sdist)
        pytest.skip("not a git checkout")
    return [ROOT / f for f in out if Path(f).suffix in TEXT_SUFFIXES and (ROOT / f).is_file()]


def test_nothing_cites_documents_outside_the_repository():
    here = Path(__file__).resolve()
    offenders = []
    for path in _tracked_text_files():
        if path == here:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line.replace("kernelspec", "")):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not offenders, "\n".join(offenders)


def test_every_cited_key_is_in_the_bibliography():
    listed = set(KEY.findall((ROOT / "docs" / "bibliography.md").read_text(encoding="utf-8")))
    assert {"Wang-Ying-Zhang", "Calmon-Fawaz", "Saeidian-PML"} <= listed
    missing = {}
    for path in _tracked_text_files():
        for key in KEY.findall(path.read_text(encoding="utf-8")):
            if key not in listed:
                missing.setdefault(key, str(path.relative_to(ROOT)))
    assert not missing, f"keys cited but not in docs/bibliography.md: {missing}"
