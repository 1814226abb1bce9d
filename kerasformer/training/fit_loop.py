"""The fit loop: a recipe's phases through ``model.fit``, with the checks every run needs.

Each phase compiles the plan's model with its optimiser and fits it; an epoch whose loss
or weights stop being finite ends the run before anything is backed up or exported,
and Ctrl-C ends it keeping what was learned.
"""

from __future__ import annotations

import time

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.training.early_stopping import early_stopping_for, with_best_epoch
from kerasformer.training.fit_plan import FitPlan, batches_per_epoch
from kerasformer.training.non_finite import (
    NonFiniteLoss,
    StopOnNonFiniteLoss,
    StopOnNonFiniteWeights,
)
from kerasformer.training.recipes import recipe_phases
from kerasformer.training.run_directory import RunDirectory
from kerasformer.training.weight_averaging import weight_averaging_for, with_averaged_weights


def run_recipe(
    plan: FitPlan,
    data,
    config,
    verbose: int,
    run: RunDirectory | None = None,
    callbacks: tuple = (),
) -> tuple[dict[str, list], bool]:
    """Fit the model phase by phase; Ctrl-C stops training but keeps what was learned.

    With a run directory, every epoch is backed up, and a resumed run skips what its
    backups hold. Returns the history of every epoch (with the phase it belongs to) and
    whether training was interrupted. A non-finite loss raises `NonFiniteLoss` and
    deletes the run directory, whose last backup is the state that diverged.

    With ``config.early_stopping``, the last phase (the fine-tuning of a two-phase
    recipe; the only one otherwise) stops once ``config.monitor`` has not improved in it
    for that many epochs, the model ends with that phase's best epoch's weights, and the
    history's ``best_epoch`` (1-based) names it. With ``config.average_last``, the model
    then ends with the mean weights of that many epochs of the last phase, up to its last
    (or best) epoch, which the history's ``averaged_epochs`` name; a run stopped by
    Ctrl-C is not averaged. ``callbacks`` (such as TensorBoard) see every epoch of every
    phase.
    """
    log = EpochLog(run)
    train_batches, validation_batches, steps = plan.epoch_batches(
        data.splits, config.batch_size, config.seed
    )
    phases = recipe_phases(
        config.resolved_recipe(),
        epochs=config.epochs,
        steps_per_epoch=steps,
        learning_rate=config.learning_rate,
        fine_tune_learning_rate=config.fine_tune_learning_rate,
        warmup_fraction=config.warmup_fraction,
        frozen_epochs=config.frozen_epochs,
        weight_decay=config.weight_decay,
        clip_norm=config.clip_norm,
        lr_schedule=config.lr_schedule,
    )
    last = phases[-1].name
    averaging = weight_averaging_for(config, run)
    early = early_stopping_for(
        config, lambda: [record for record in log.records if record["phase"] == last], run
    )
    done = 0
    interrupted = False
    for index, phase in enumerate(phases):
        watched = early is not None and index == len(phases) - 1
        if watched and early.should_stop(early.records()):
            break  # a resumed run that had already stopped early
        log.phase = phase.name
        # The weight check before the backup (only finite weights are backed up), the
        # backup before the log (an epoch's numbers are kept only once its weights are);
        # the best weights are kept before the log too, and an epoch's weights for
        # averaging before the backup, so a run resumed from it finds every epoch.
        fit_callbacks = [StopOnNonFiniteWeights(phase)]
        last_phase = index == len(phases) - 1
        fit_callbacks += [averaging] if averaging is not None and last_phase else []
        fit_callbacks += [] if run is None else [run.backup_callback(index)]
        fit_callbacks += [*plan.callbacks, StopOnNonFiniteLoss(phase), *callbacks]
        fit_callbacks += [early] if watched else []
        fit_callbacks.append(log)
        plan.compile_for(phase)
        if verbose:
            print(f"Phase {phase.name!r}: {phase.epochs} epoch(s)")
            plan.full_model.summary()
        if run is not None:
            run.start()  # nothing refused the run: write its directory and lock it
        try:
            plan.fit_model.fit(
                train_batches,
                validation_data=validation_batches,
                initial_epoch=done,
                epochs=done + phase.epochs,
                callbacks=fit_callbacks,
                verbose=verbose,
            )
        except KeyboardInterrupt:
            interrupted = True
            break
        except NonFiniteLoss:
            if run is not None:
                run.delete()
            raise
        except tf.errors.InvalidArgumentError as error:
            if "determinism is enabled" not in error.message:
                raise
            raise KerasformerError(
                "deterministic ops cannot train this model: its SavedModel encoder has "
                "unseeded random ops (dropout); run without --deterministic."
            ) from None
        done += phase.epochs
        if early is not None and early.stopped:
            break
    history = with_best_epoch(log.history, early, plan.fit_model)
    if interrupted:
        return history, True  # the epochs to average may not all have been trained
    return with_averaged_weights(history, averaging, log.records, last, plan.fit_model), False


def steps_per_epoch(train_batches: tf.data.Dataset, examples: int, config) -> int:
    """Batches in one epoch of ``config.batch_size`` (see `FitPlan.epoch_batches`)."""
    return batches_per_epoch(train_batches, examples, config.batch_size)


class EpochLog(keras.callbacks.Callback):
    """Each epoch's metrics, phase and wall time (training and validation), in order.

    With a run directory the records are kept there too, so a resumed run reports
    every epoch, not only those after the interruption.
    """

    def __init__(self, run: RunDirectory | None):
        super().__init__()
        self.run = run
        self.records: list[dict] = list(run.epochs) if run is not None else []
        self.phase = ""

    def on_epoch_begin(self, epoch, logs=None):
        self._started = time.perf_counter()
        self.records = [kept for kept in self.records if kept["epoch"] < epoch]
        if self.run is not None:
            self.run.forget_from(epoch)

    def on_epoch_end(self, epoch, logs=None):
        record = {
            "epoch": epoch,
            "phase": self.phase,
            **{key: float(value) for key, value in (logs or {}).items()},
            "seconds": time.perf_counter() - self._started,
        }
        self.records.append(record)
        if self.run is not None:
            self.run.record_epoch(record)

    @property
    def history(self) -> dict[str, list]:
        """As Keras's ``History.history``: one list per metric, plus phase and seconds."""
        keys = dict.fromkeys(["phase", "seconds"])
        for record in self.records:
            keys.update(dict.fromkeys(key for key in record if key != "epoch"))
        # None where an epoch lacks a key (such as the learning rate logged only with
        # --tensorboard, turned on at a --resume): every list stays aligned with epochs.
        return {key: [record.get(key) for record in self.records] for key in keys}
