"""Training recipes: which weights train, with which optimizer, for how many epochs.

- ``from-scratch``: every weight trains with Adam (the transformer classifier).
- ``frozen``: the pretrained encoder stays fixed; only the head trains, with Adam.
- ``unfrozen``: the encoder is fine-tuned too, with AdamW, linear warm-up over the first
  10% of steps and linear decay to zero (``official.nlp.optimization.create_optimizer``).
- ``frozen-then-unfrozen``: ``frozen`` for ``frozen_epochs``, then ``unfrozen`` starting
  from the weights the first phase learned.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError
from kerasformer.registry import TASKS

# Each model's recipes, default first, for one release: kerasformer.registry has them.
RECIPES_BY_MODEL = {model.name: model.recipes for task in TASKS.values() for model in task.models}


@dataclass(frozen=True)
class Phase:
    """One ``model.fit`` call of a recipe."""

    name: str
    epochs: int
    encoder_trainable: bool | None  # None: the model has no pretrained encoder to switch
    make_optimizer: Callable[[], keras.optimizers.Optimizer]


def recipe_phases(
    recipe: str,
    *,
    epochs: int,
    steps_per_epoch: int,
    learning_rate: float,
    fine_tune_learning_rate: float,
    warmup_fraction: float,
    frozen_epochs: int,
) -> list[Phase]:
    """The phases of ``recipe``; ``epochs`` counts the fine-tuning (or only) phase."""

    def adam():
        return keras.optimizers.Adam(learning_rate)

    def adamw_with_warmup():
        from official.nlp import optimization

        total_steps = epochs * steps_per_epoch
        return optimization.create_optimizer(
            init_lr=fine_tune_learning_rate,
            num_train_steps=total_steps,
            num_warmup_steps=math.ceil(warmup_fraction * total_steps),
            optimizer_type="adamw",
        )

    phases = {
        "from-scratch": [Phase("from-scratch", epochs, None, adam)],
        "frozen": [Phase("frozen", epochs, False, adam)],
        "unfrozen": [Phase("unfrozen", epochs, True, adamw_with_warmup)],
        "frozen-then-unfrozen": [
            Phase("frozen", frozen_epochs, False, adam),
            Phase("unfrozen", epochs, True, adamw_with_warmup),
        ],
    }
    if recipe not in phases:
        raise KerasformerError(f"unknown recipe {recipe!r}; choose one of: {', '.join(phases)}.")
    return phases[recipe]
