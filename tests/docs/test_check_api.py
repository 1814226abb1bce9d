"""``.ci/check_api.py`` fails on a breaking change to a documented name unless
CHANGELOG.md lists it, run on a small package in a git repository of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "check_api.py"
RELEASED = '''
def greet(name, punctuation="!"):
    """Greet someone."""
    return f"Hello {name}{punctuation}"


def helper(text):
    """Not in the API reference."""
    return text
'''


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


@pytest.fixture
def repo(tmp_path) -> Path:
    """A package `toy` released as v0.1.0, whose API reference documents `greet` only."""
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "__init__.py").write_text("")
    (tmp_path / "toy" / "words.py").write_text(RELEASED)
    pages = tmp_path / "docs" / "reference" / "api"
    pages.mkdir(parents=True)
    (pages / "words.md").write_text("# Words\n\n::: toy.words.greet\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "0.1.0")
    git(tmp_path, "tag", "v0.1.0")
    return tmp_path


def check(repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--repo", str(repo), "--package", "toy"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def change(repo: Path, old: str, new: str) -> None:
    words = repo / "toy" / "words.py"
    words.write_text(words.read_text().replace(old, new))


def test_an_unchanged_api_passes(repo):
    result = check(repo)
    assert result.returncode == 0, result.stderr
    assert "compatible with v0.1.0" in result.stdout


def test_a_removed_parameter_of_a_documented_function_fails(repo):
    change(repo, 'def greet(name, punctuation="!")', "def greet(name)")
    result = check(repo)
    assert result.returncode == 1
    assert "toy.words.greet" in result.stderr and "punctuation" in result.stderr


def test_a_renamed_documented_function_fails_and_an_undocumented_one_does_not(repo):
    change(repo, "def helper(", "def helper_renamed(")
    assert check(repo).returncode == 0
    change(repo, "def greet(", "def say_hello(")
    result = check(repo)
    assert result.returncode == 1 and "toy.words.greet" in result.stderr


def test_a_change_listed_under_unreleased_in_the_changelog_passes(repo):
    change(repo, "def greet(", "def say_hello(")
    (repo / "CHANGELOG.md").write_text(
        "# Changelog\n\n## Unreleased\n\n- `toy.words.greet` is now `say_hello`.\n\n"
        "## 0.1.0 (commit 0000000)\n\n- First release.\n"
    )
    assert check(repo).returncode == 0
    # Listed under a release, not Unreleased, it does not count.
    (repo / "CHANGELOG.md").write_text(
        "# Changelog\n\n## 0.1.0 (commit 0000000)\n\n- `toy.words.greet` is now `say_hello`.\n"
    )
    assert check(repo).returncode == 1


def test_without_tags_the_changelog_names_the_release_commit(repo):
    released = git(repo, "rev-parse", "--short", "v0.1.0").strip()
    git(repo, "tag", "-d", "v0.1.0")
    assert check(repo).returncode == 2  # no tag, no release heading: a one-line error
    (repo / "CHANGELOG.md").write_text(f"# Changelog\n\n## 0.1.0 (commit {released}, 2026-12-07)\n")
    assert check(repo).returncode == 0
    change(repo, "def greet(", "def say_hello(")
    assert check(repo).returncode == 1
