"""`DistillationSettings`: what a distilled student learns from besides its labels.

Plain data and checks, with no TensorFlow, so the command line shows the defaults.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from kerasformer.datasets.text_augmentation import require_augmented_copies
from kerasformer.errors import KerasformerError
from kerasformer.files.export_kind import CLASSIFIER, require_export_kind
from kerasformer.validation import is_real_number


@dataclasses.dataclass(frozen=True)
class DistillationSettings:
    """What the student learns from besides the labels, and how.

    ``teacher`` is a classifier export; ``temperature`` softens both models'
    probabilities; ``teacher_weight`` is the teacher's share of the loss;
    ``unlabelled_texts`` a UTF-8 file of more texts (one a line) and ``augmented_copies``
    perturbed copies of each training text, both labelled by the teacher alone.
    """

    teacher: str | None = None
    temperature: float = 2.0
    teacher_weight: float = 0.5
    unlabelled_texts: str | None = None
    augmented_copies: int = 0

    def validate(self) -> None:
        self.require_teacher_export()
        require_temperature(self.temperature)
        require_teacher_weight(self.teacher_weight)
        require_augmented_copies(self.augmented_copies)

    def require_teacher_export(self) -> None:
        """``teacher`` is a classifier's export directory; the command line asks first."""
        if not self.teacher:
            raise KerasformerError(
                "distillation needs a teacher: the export directory of a classifier trained "
                "on this dataset (kerasformer distill --teacher saved_models/ag_news-bert)."
            )
        require_export_kind(self.teacher, CLASSIFIER)
        if not (Path(self.teacher) / "saved_model.pb").is_file():
            raise KerasformerError(
                f"--teacher {self.teacher} is not an exported model (no saved_model.pb); pass "
                "the directory that `kerasformer train` wrote, e.g. saved_models/ag_news-bert."
            )


def require_temperature(value) -> None:
    if not is_real_number(value) or not (math.isfinite(value) and value > 0):
        raise KerasformerError(f"temperature must be a positive finite number, got {value!r}.")


def require_teacher_weight(value) -> None:
    if not is_real_number(value) or not 0 <= value <= 1:
        raise KerasformerError(f"teacher_weight must be a number from 0 to 1, got {value!r}.")
