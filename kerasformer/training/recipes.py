"""Training recipes: which weights train, with which optimizer, for how many epochs.

- ``from-scratch``: every weight trains with Adam (the transformer classifier), or
  AdamW with weight decay, with the global gradient norm clipped, and with a constant
  learning rate or linear warm-up then cosine decay to zero, as the settings ask.
- ``frozen``: the pretrained encoder stays fixed; only the head trains, as from scratch.
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
    weight_decay: float = 0.0,
    clip_norm: float | None = None,
    lr_schedule: str = "constant",
) -> list[Phase]:
    """The phases of ``recipe``; ``epochs`` counts the fine-tuning (or only) phase."""

    def adam_for(phase_epochs: int):
        def make():
            rate = learning_rate_schedule(
                lr_schedule, learning_rate, phase_epochs * steps_per_epoch, warmup_fraction
            )
            return adam_optimizer(rate, weight_decay, clip_norm)

        return make

    adam = adam_for(epochs)

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
            Phase("frozen", frozen_epochs, False, adam_for(frozen_epochs)),
            Phase("unfrozen", epochs, True, adamw_with_warmup),
        ],
    }
    if recipe not in phases:
        raise KerasformerError(f"unknown recipe {recipe!r}; choose one of: {', '.join(phases)}.")
    return phases[recipe]


# Biases and LayerNormalization's scale and offset are not decayed (as in BERT and GPT-2).
NOT_DECAYED = [r"(bias|gamma|beta)(:\d+)?$"]  # the weight's own name, last in its path


def learning_rate_schedule(schedule: str, peak: float, total_steps: int, warmup_fraction: float):
    """``peak`` throughout (``"constant"``), or a linear warm-up from 0 over
    ``warmup_fraction`` of the steps to ``peak``, then ``"cosine"``: a cosine decay to 0 at
    ``total_steps``; ``"inverse_sqrt"``: ``peak * sqrt(warmup / step)`` (``peak /
    sqrt(step)`` without a warm-up), the decay of Vaswani et al. (2017), whose peak is
    ``d_model ** -0.5 * warmup ** -0.5``."""
    if schedule == "constant":
        return peak
    if schedule not in ("cosine", "inverse_sqrt"):
        raise KerasformerError(
            f"unknown lr_schedule {schedule!r}; choose constant, cosine or inverse_sqrt."
        )
    # At least one step after the warm-up, so that a short run still trains at its peak.
    warmup = min(math.ceil(warmup_fraction * total_steps), max(total_steps - 1, 0))
    if schedule == "inverse_sqrt":
        return inverse_square_root_decay(peak, warmup)
    return keras.optimizers.schedules.CosineDecay(
        0.0 if warmup else peak,
        decay_steps=max(total_steps - warmup, 1),
        warmup_target=peak if warmup else None,
        warmup_steps=warmup,
    )


def inverse_square_root_decay(peak: float, warmup: int):
    """The Model Garden's linear warm-up to ``peak``, then ``peak * sqrt(warmup / step)``."""
    from official.modeling.optimization.lr_schedule import DirectPowerDecay, LinearWarmup

    decay = DirectPowerDecay(peak * math.sqrt(max(warmup, 1)), power=-0.5)
    return LinearWarmup(decay, warmup_steps=warmup, warmup_learning_rate=0.0) if warmup else decay


def adam_optimizer(rate, weight_decay: float, clip_norm: float | None):
    """Adam, or AdamW where ``weight_decay`` > 0; the global gradient norm clipped to
    ``clip_norm`` where given."""
    if not weight_decay:
        return keras.optimizers.Adam(rate, global_clipnorm=clip_norm)
    optimizer = keras.optimizers.AdamW(rate, weight_decay=weight_decay, global_clipnorm=clip_norm)
    optimizer.exclude_from_weight_decay(var_names=NOT_DECAYED)
    return optimizer
