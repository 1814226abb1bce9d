"""Fail on a breaking change to kerasformer's public API that CHANGELOG.md does not list.

The public API is what the last release's API reference documents: each ``::: path`` line
of its ``docs/reference/api/*.md``. griffe (the library mkdocstrings reads docstrings
with) loads the package at that release and as it is now, and reports what breaks a
caller: a name removed or renamed, a parameter removed, moved or made required, a
default changed. Each such change must be named, by its dotted path in backticks, in the
``## Unreleased`` section of CHANGELOG.md.

The release is the latest ``v*`` tag; where a clone carries no tags, the commit that
CHANGELOG.md's latest release heading names (``## 0.1.0 (commit abc1234, ...)``).

Usage: ``python .ci/check_api.py [--repo DIR] [--package NAME] [--against REF]``.
"""

from __future__ import annotations

import argparse
import logging
import re
import subprocess
import sys
from pathlib import Path

API_PAGES = "docs/reference/api"
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.M)
RELEASE_HEADING = re.compile(r"^## (\d+\.\d+\.\d+) \(commit ([0-9a-f]{7,40})\b", re.M)


class CheckError(Exception):
    """A one-line reason the check could not run."""


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if result.returncode:
        raise CheckError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def latest_release(repo: Path) -> str:
    """The latest ``v*`` tag, or the commit of CHANGELOG.md's latest release heading."""
    tags = git(repo, "tag", "--list", "v*", "--sort=-version:refname").split()
    if tags:
        return tags[0]
    changelog = repo / "CHANGELOG.md"
    found = RELEASE_HEADING.search(changelog.read_text("utf-8")) if changelog.is_file() else None
    if found is None:
        raise CheckError(
            "no v* tag and no '## X.Y.Z (commit SHA, ...)' heading in CHANGELOG.md; "
            "tag the last release (git tag v0.1.0 SHA) or fetch the tags (git fetch --tags)"
        )
    return found.group(2)


def documented_paths(repo: Path, ref: str) -> list[str]:
    """The ``::: path`` lines of the API reference as it was at ``ref``."""
    listing = git(repo, "ls-tree", "--name-only", f"{ref}:{API_PAGES}").split()
    return [
        path
        for name in sorted(listing)
        if name.endswith(".md")
        for path in DIRECTIVE.findall(git(repo, "show", f"{ref}:{API_PAGES}/{name}"))
    ]


def unreleased_changes(repo: Path) -> str:
    """The text of CHANGELOG.md's ``## Unreleased`` section ('' if it has none)."""
    changelog = repo / "CHANGELOG.md"
    if not changelog.is_file():
        return ""
    text = changelog.read_text("utf-8")
    found = re.search(r"^## Unreleased\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return found.group(1) if found else ""


def unlisted_breakages(repo: Path, package: str, ref: str) -> list[str]:
    """Each breaking change to a documented object since ``ref`` that the changelog's
    Unreleased section does not name, explained in one line."""
    import griffe

    logging.getLogger("griffe").setLevel(logging.ERROR)
    old = griffe.load_git(package, ref=ref, repo=repo)
    new = griffe.load(package, search_paths=[str(repo)], try_relative_path=False)
    public = documented_paths(repo, ref)
    listed = unreleased_changes(repo)
    found = []
    for breakage in griffe.find_breaking_changes(old, new):
        path = breakage.obj.path
        # A change to a documented object, to one of its members, or to the module that
        # holds it.
        owners = [
            p for p in public
            if path == p or path.startswith(p + ".") or p.startswith(path + ".")
        ]  # fmt: skip
        if owners and not any(f"`{name}`" in listed for name in [path, *owners]):
            # Markdown style: the one-line style colours its text for a terminal.
            explanation = breakage.explain(griffe.ExplanationStyle.MARKDOWN)
            found.append(f"{path}: {explanation.strip().removeprefix('- ')}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--package", default="kerasformer")
    parser.add_argument("--against", help="the release to compare with (default: latest)")
    args = parser.parse_args(argv)
    try:
        ref = args.against or latest_release(args.repo)
        found = unlisted_breakages(args.repo, args.package, ref)
    except CheckError as error:
        print(f"check_api: error: {error}", file=sys.stderr)
        return 2
    if found:
        print(f"check_api: {len(found)} breaking change(s) to the public API since {ref} "
              "that CHANGELOG.md's '## Unreleased' section does not list (name each path "
              "in backticks there):", file=sys.stderr)  # fmt: skip
        print("\n".join(f"  {line}" for line in found), file=sys.stderr)
        return 1
    print(f"check_api: the public API is compatible with {ref} (or its changes are listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
