"""The documentation site builds with ``mkdocs build --strict`` (no broken link, anchor or
docstring reference) and works offline: no page loads a font, script, style sheet or
picture from another host."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What makes a browser fetch something: src= and href= of scripts, style sheets, icons
# and fonts, and CSS url(...). Plain links (<a href="https://...">) fetch nothing.
FETCHES = re.compile(
    r"""<(?:script|img|iframe|source)[^>]*\ssrc=["'](?:https?:)?//"""
    r"""|<link[^>]*\shref=["'](?:https?:)?//"""
    r"""|url\(\s*["']?(?:https?:)?//""",
    re.I,
)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site_dir = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-5000:]
    return site_dir


def test_every_page_of_the_nav_is_built(site):
    assert (site / "index.html").is_file()
    for page in ["getting-started", "layers", "guides/translation", "reference/cli"]:
        assert (site / page / "index.html").is_file(), page
    for package in ["layers", "datasets", "models", "training", "loading"]:
        html = (site / "reference" / "api" / package / "index.html").read_text("utf-8")
        assert 'class="doc doc-heading"' in html, f"no API entry rendered for {package}"


def test_the_cli_reference_and_pictures_are_generated_into_the_site(site):
    html = (site / "reference" / "cli" / "index.html").read_text("utf-8")
    assert "kerasformer train" in html and "--train-file" in html
    for picture in ["minilm_flies_head_view", "translation_history", "language_model_history"]:
        assert (site / "pictures" / f"{picture}.png").stat().st_size > 10_000


def test_no_page_fetches_anything_from_another_host(site):
    fetching = [
        f"{path.relative_to(site)}: {match.group(0)[:80]}"
        for path in sorted(site.rglob("*"))
        if path.suffix in {".html", ".css", ".js"}
        for match in FETCHES.finditer(path.read_text("utf-8", errors="replace"))
    ]
    assert not fetching, "\n".join(fetching[:20])
