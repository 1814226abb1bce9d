"""The README's quick start is what CI runs: exactly two commands, the second in .ci/run."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_quick_start_has_two_commands_and_ci_runs_the_second():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    assert commands[0].startswith("pip install -e . && kerasformer train")
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci_lines


def test_quick_start_predicts_with_the_default_export_dir():
    from kerasformer.training import TrainingConfig

    default_export = TrainingConfig().resolved_export_dir()
    assert f"kerasformer predict {default_export} " in quick_start_commands()[0]
