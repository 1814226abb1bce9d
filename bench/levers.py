"""The training settings every benchmark run can change, as ``kerasformer train`` names
them; each flag's default, None, keeps the package's own default."""

from __future__ import annotations

RUN_LEVERS = (
    ("--learning-rate", dict(type=float)),
    ("--weight-decay", dict(type=float)),
    ("--clip-norm", dict(type=float)),
    ("--lr-schedule", dict(choices=("constant", "cosine", "inverse_sqrt"))),
    ("--warmup-fraction", dict(type=float)),
    ("--average-last", dict(type=int)),
    ("--early-stopping", dict(type=int)),
)


def setting_name(flag: str) -> str:
    """``--weight-decay`` as TrainingConfig names it: ``weight_decay``."""
    return flag[2:].replace("-", "_")


RUN_SETTINGS = tuple(setting_name(flag) for flag, _ in RUN_LEVERS)
