"""Train a classifier on a dataset, evaluate it, and export it with its history and metrics."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.datasets import TextClassificationData
from kerasformer.datasets.pipeline import (
    INPUT_PIPELINES,
)
from kerasformer.datasets.text_augmentation import require_augmented_copies
from kerasformer.errors import KerasformerError
from kerasformer.export.export_kind import BERT_PART, CLASSIFIER, require_export_kind
from kerasformer.export.staged_directory import require_replaceable, staged_directory
from kerasformer.models.bert_classifier import encoder_layer
from kerasformer.network import is_url
from kerasformer.plots import plot_training_history, save_figure
from kerasformer.training.acceleration import (
    dtype_policy,
    is_chief,
    make_strategy,
    remove_empty_directories,
    worker_export_dir,
)
from kerasformer.training.distillation_loss import require_teacher_weight, require_temperature
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.recipes import (
    RECIPES_BY_MODEL,
    default_recipe,
    recipe_phases,
    require_recipe_fits_model,
)
from kerasformer.training.reproducibility import make_reproducible
from kerasformer.training.run_directory import (
    CONFIG_FILE,
    MAY_DIFFER,
    RunDirectory,
    data_fingerprint,
    run_directory_for,
)
from kerasformer.training.tasks import task_named

HISTORY_FILE = "history.json"
METRICS_FILE = "metrics.json"
HISTORY_PLOT_FILE = "history.png"
# Far beyond any real run, and below what overflows step counters or memory estimates.
MAX_EPOCHS = 100_000
MAX_BATCH_SIZE = 1_000_000
# A model with its own vectorizer trains on token ids made once; a BERT preprocess
# model is a SavedModel layer and keeps running on strings.
PIPELINES_BY_MODEL = {"transformer": INPUT_PIPELINES, "bert": INPUT_PIPELINES}
DEFAULT_PIPELINE = {"transformer": "bucketed", "bert": "bucketed"}
# Tasks whose models are classifiers and read text through --input-pipeline.
CLASSIFYING_TASKS = ("classification", "distillation")


@dataclass
class TrainingConfig:
    """Everything a training run depends on; saved with its metrics."""

    task: str = "classification"  # or another of training.tasks.TASKS
    model: str = "transformer"
    dataset: str = "bbc_news"
    data_dir: str | None = None
    # Chosen on BBC News validation accuracy (mean of 3 seeds levels off by epoch 10).
    epochs: int = 10
    batch_size: int = 128
    learning_rate: float = 1e-3
    recipe: str | None = None  # None: the model's default (see training.recipes)
    fine_tune_learning_rate: float = 3e-5
    warmup_fraction: float = 0.1
    frozen_epochs: int = 1
    seed: int = 0
    deterministic: bool = False
    strategy: str = "default"
    mixed_precision: bool = False
    xla: bool = False
    input_pipeline: str | None = None  # None: the model's default (see PIPELINES_BY_MODEL)
    # Distillation (task "distillation"): the teacher export and how to learn from it.
    teacher: str | None = None
    temperature: float = 2.0
    teacher_weight: float = 0.5
    unlabelled_texts: str | None = None  # a UTF-8 file, one text a line
    augmented_copies: int = 0  # perturbed copies of each training text for the teacher
    validation_fraction: float = 0.1
    export_dir: str | None = None
    overwrite: bool = False
    resume: bool = False  # continue the interrupted run kept beside the export directory
    model_options: dict = field(default_factory=dict)

    def resolved_recipe(self) -> str:
        return self.recipe or default_recipe(self.model)

    def resolved_input_pipeline(self) -> str:
        return self.input_pipeline or DEFAULT_PIPELINE.get(self.model, "strings")

    def resolved_export_dir(self) -> Path:
        if self.export_dir is not None:
            return Path(self.export_dir)
        name = f"{self.dataset}-{self.model}"
        if self.resolved_recipe() != default_recipe(self.model):
            name += f"-{self.resolved_recipe()}"
        if self.task == "distillation":
            name += "-distilled"
        return Path("saved_models") / name

    def validate(self) -> None:
        task = task_named(self.task)
        classifies = self.task in CLASSIFYING_TASKS
        if not classifies and self.input_pipeline is not None:
            raise KerasformerError(
                "--input-pipeline chooses how classifiers read text; "
                f"{self.task} models always read token ids in length buckets."
            )
        if self.model not in RECIPES_BY_MODEL:
            raise KerasformerError(
                f"unknown model {self.model!r}; choose one of: {', '.join(RECIPES_BY_MODEL)}."
            )
        if self.model not in task.models:
            raise KerasformerError(
                f"model {self.model!r} does not fit task {self.task!r}; choose one of: "
                f"{', '.join(task.models)}."
            )
        if self.dataset not in task.datasets:
            raise KerasformerError(
                f"dataset {self.dataset!r} is not a {self.task} dataset; choose one of: "
                f"{', '.join(task.datasets)}."
            )
        require_recipe_fits_model(self.resolved_recipe(), self.model)
        require_bert_handles_fit(self.model_options)
        if classifies:
            self.require_input_pipeline_fits()
        self.require_distillation_settings_fit()
        for name, most in (
            ("epochs", MAX_EPOCHS), ("frozen_epochs", MAX_EPOCHS), ("batch_size", MAX_BATCH_SIZE)
        ):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise KerasformerError(
                    f"{name} must be a whole number from 1 to {most:,}, got {value!r}."
                )
        for name in ("learning_rate", "fine_tune_learning_rate"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (0 < value < math.inf)
            ):
                raise KerasformerError(f"{name} must be a positive finite number, got {value!r}.")
        if not 0 <= self.warmup_fraction < 1:
            raise KerasformerError(
                f"warmup_fraction must be in [0, 1), got {self.warmup_fraction!r}."
            )
        if not 0 < self.validation_fraction < 1:
            raise KerasformerError(
                f"validation_fraction must be between 0 and 1, got {self.validation_fraction!r}."
            )

    def require_distillation_settings_fit(self) -> None:
        if self.task != "distillation":
            for name, unset in (("teacher", None), ("unlabelled_texts", None),
                                ("augmented_copies", 0)):  # fmt: skip
                if getattr(self, name) != unset:
                    raise KerasformerError(
                        f"{name} is for distillation only; run `kerasformer distill`."
                    )
            return
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
        require_temperature(self.temperature)
        require_teacher_weight(self.teacher_weight)
        require_augmented_copies(self.augmented_copies)

    def require_input_pipeline_fits(self) -> None:
        pipeline = self.resolved_input_pipeline()
        if pipeline not in PIPELINES_BY_MODEL[self.model]:
            raise KerasformerError(
                f"input pipeline {pipeline!r} does not fit model {self.model!r}; choose one "
                f"of: {', '.join(PIPELINES_BY_MODEL[self.model])}."
            )
        if self.xla and pipeline == "dynamic":
            raise KerasformerError(
                "--xla would compile again for every batch length of the 'dynamic' input "
                "pipeline; use 'bucketed' or 'padded' with --xla."
            )


def require_bert_handles_fit(model_options: dict) -> None:
    """--preprocess and --encoder name parts of a BERT conversion, not other outputs."""
    for name in ("preprocess", "encoder"):
        handle = model_options.get(name)
        if handle is not None and not is_url(str(handle)):
            require_export_kind(handle, BERT_PART)


@dataclass
class TrainingResult:
    model: keras.Model
    data: TextClassificationData
    history: dict[str, list[float]]
    metrics: dict[str, dict]
    export_dir: Path | None
    interrupted: bool = False
    fit_model: keras.Model | None = None  # what model.fit trained: model, or a part of it
    train_seconds: float = 0.0  # wall time from building the input pipeline to the last epoch


def train(
    config: TrainingConfig,
    export: bool = True,
    verbose: int = 1,
    data: TextClassificationData | None = None,
) -> TrainingResult:
    """Run one training job as configured and return the trained model and its metrics.

    ``data`` trains on your own splits instead of loading ``config.dataset``, which
    then only names the export directory.

    Example:

    >>> result = train(TrainingConfig(dataset="bbc_news"))
    >>> result.metrics["test"]["accuracy"] > 0.9
    True
    """
    config.validate()
    export_dir = config.resolved_export_dir() if export else None
    if export_dir is not None:
        require_replaceable(
            export_dir,
            config.overwrite,
            flag="--export-dir",
            kind=task_named(config.task).export_kind,
        )
    require_model_fits_in_memory(config)

    make_reproducible(config.seed, deterministic_ops=config.deterministic)
    task = task_named(config.task)
    if data is None:
        data = task.load_data(config)
    task.require_trainable(data)
    if verbose:
        print(task.describe(data))
    strategy = make_strategy(config.strategy)
    chief = is_chief(strategy)
    run = None
    if export_dir is not None and chief:
        # Checked now (a run in progress, --resume); written just before the first epoch.
        run = RunDirectory(
            run_directory_for(export_dir), asdict(config), config.resume,
            fingerprint=data_fingerprint(data), start=False,
        )  # fmt: skip
    try:
        with dtype_policy(config.mixed_precision), strategy.scope():
            model, plan = task.build(config, data)
        if export_dir is not None and not chief:
            run = chief_run_directory(export_dir, config)
        started = time.perf_counter()
        try:
            history, interrupted = run_recipe(plan, data, config, verbose, run)
        except NonFiniteLoss:
            if run is not None:
                run.delete()  # its last backup is the state that diverged
            raise
        train_seconds = time.perf_counter() - started
        metrics = task.evaluate(model, data, config)
        if export_dir is not None:
            # Every worker saves (see worker_export_dir); only the chief's export is kept.
            with worker_export_dir(export_dir, strategy) as written:
                export_trained(task, model, data, config, history, metrics, interrupted, written)
            if not chief:
                remove_empty_directories(run.path)  # the chief keeps or deletes its own
            elif interrupted:
                if run.epochs:  # else nothing to continue: closing deletes the directory
                    print(
                        f"Backups of the completed epochs stay in {run.path}; the same "
                        "command with --resume continues the run."
                    )
            else:
                run.delete()
    finally:
        if run is not None:
            run.close()  # releases the lock; deletes a directory with no completed epoch
    return TrainingResult(
        model, data, history, metrics, export_dir, interrupted, plan.fit_model, train_seconds
    )


def chief_run_directory(export_dir: Path, config: TrainingConfig) -> RunDirectory:
    """A non-chief worker's view of the chief's run directory, where it writes nothing.

    Called once the model is built: building waits for the chief to send the initial
    weights, and the chief has checked its run directory before that (and removed one
    left with no completed epoch), so the run found there is this one; a new run's
    directory is written by the chief just before its first epoch. The chief alone
    holds the directory's lock. Keras restores every worker from the chief's backups
    there, so resuming needs a filesystem that all workers share.
    """
    path = run_directory_for(export_dir)
    require_settings_of_the_chief(path, config)
    return RunDirectory(path, asdict(config), resume=True, writer=False, start=False)


def require_settings_of_the_chief(path: Path, config: TrainingConfig) -> None:
    """Refuse to train with other settings than the chief: the workers would disagree.

    Only possible where this worker sees the chief's run directory (a shared filesystem).
    """
    saved_file = path / CONFIG_FILE
    if not saved_file.is_file():
        return
    saved = json.loads(saved_file.read_text(encoding="utf-8"))
    ours = json.loads(json.dumps(asdict(config), default=str))  # as the chief saved its own
    differing = sorted(key for key in saved.keys() | ours.keys()
                       if key not in MAY_DIFFER and saved.get(key) != ours.get(key))  # fmt: skip
    if differing:
        raise KerasformerError(
            f"this worker's settings differ from the chief's ({', '.join(differing)}); start "
            "every worker with the same command, only TF_CONFIG's task index differing."
        )


def export_trained(task, model, data, config, history, metrics, interrupted, export_dir) -> None:
    """Write the export whole (model, history, picture, metrics) or keep the model elsewhere."""
    try:
        with staged_directory(export_dir, task.export_kind, config.overwrite) as staging:
            task.write_export(model, data, staging)
            write_json(staging / HISTORY_FILE, history)
            if history.get("loss"):  # nothing to draw when stopped inside the first epoch
                title = f"{data.name}: {config.model} ({config.resolved_recipe()})"
                save_figure(plot_training_history(history, title), staging / HISTORY_PLOT_FILE)
            write_json(
                staging / METRICS_FILE,
                {
                    "config": asdict(config),
                    "interrupted": interrupted,
                    "sizes": data.sizes(),
                    **metrics,
                },
            )
    except Exception as error:
        kept = keep_model_somewhere(task.keras_model(model))
        raise KerasformerError(
            f"could not export to {export_dir} ({describe_error(error)}); {kept}"
        ) from error


def keep_model_somewhere(model: keras.Model) -> str:
    """Save the trained model where it can be written, and say where, for the error."""
    try:
        rescue = Path(tempfile.mkdtemp(prefix="kerasformer-trained-"))
        model.save(rescue / "model.keras")
    except Exception as error:
        return f"the trained model could not be kept either ({describe_error(error)})."
    return (
        f"the trained model is kept in {rescue / 'model.keras'} "
        "(load it with kerasformer.export.load_keras_model)."
    )


def describe_error(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


def require_model_fits_in_memory(config: TrainingConfig) -> None:
    """Refuse, before building anything, sizes whose weights could not fit in memory."""
    if config.task not in CLASSIFYING_TASKS or config.model != "transformer":
        return
    from kerasformer.models.transformer_classifier import DEFAULTS

    options = {**DEFAULTS, **config.model_options}
    sizes = [options.get(name) for name in ("vocab_size", "maxlen", "embed_dim")]
    if not all(isinstance(size, int) and size > 0 for size in sizes):
        return  # the model itself says which size is wrong
    vocab_size, maxlen, embed_dim = sizes
    # Weights, gradients and Adam's two moments: four float32 copies of each table.
    needed = 4 * 4 * (vocab_size + maxlen) * embed_dim
    available = physical_memory_bytes()
    if available and needed > available / 2:
        raise KerasformerError(
            f"vocab_size {vocab_size:,} and maxlen {maxlen:,} at embed_dim {embed_dim} need "
            f"about {needed / 2**30:.1f} GiB for the embedding tables alone, more than half "
            f"of this machine's {available / 2**30:.1f} GiB; choose smaller sizes."
        )


def physical_memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def run_recipe(
    plan: FitPlan,
    data: TextClassificationData,
    config: TrainingConfig,
    verbose: int,
    run: RunDirectory | None = None,
) -> tuple[dict[str, list], bool]:
    """Fit the model phase by phase; Ctrl-C stops training but keeps what was learned.

    With a run directory, every epoch is backed up, and a resumed run skips what its
    backups hold. Returns the history of every epoch (with the phase it belongs to) and
    whether training was interrupted. A non-finite loss raises `NonFiniteLoss`.
    """
    model = plan.fit_model
    train_batches = plan.batches(data.splits["train"], config.batch_size, config.seed)
    validation_batches = plan.batches(data.splits["validation"], config.batch_size)
    phases = recipe_phases(
        config.resolved_recipe(),
        epochs=config.epochs,
        steps_per_epoch=steps_per_epoch(train_batches, len(data.splits["train"]), config),
        learning_rate=config.learning_rate,
        fine_tune_learning_rate=config.fine_tune_learning_rate,
        warmup_fraction=config.warmup_fraction,
        frozen_epochs=config.frozen_epochs,
    )
    log = EpochLog(run)
    done = 0
    for index, phase in enumerate(phases):
        if phase.encoder_trainable is not None:
            encoder_layer(plan.full_model).trainable = phase.encoder_trainable
        model.compile(
            optimizer=phase.make_optimizer(),
            loss=plan.loss,
            metrics=plan.metrics,
            jit_compile=plan.jit_compile,
        )
        if verbose:
            print(f"Phase {phase.name!r}: {phase.epochs} epoch(s)")
            plan.full_model.summary()
        log.phase = phase.name
        # The weight check before the backup (only finite weights are backed up), the
        # backup before the log (an epoch's numbers are kept only once its weights are).
        callbacks = [StopOnNonFiniteWeights(phase)]
        callbacks += [] if run is None else [run.backup_callback(index)]
        callbacks += [*plan.callbacks, StopOnNonFiniteLoss(phase), log]
        if run is not None:
            run.start()  # nothing refused the run: write its directory and lock it
        try:
            model.fit(
                train_batches,
                validation_data=validation_batches,
                initial_epoch=done,
                epochs=done + phase.epochs,
                callbacks=callbacks,
                verbose=verbose,
            )
        except KeyboardInterrupt:
            return log.history(), True
        except tf.errors.InvalidArgumentError as error:
            if "determinism is enabled" not in error.message:
                raise
            raise KerasformerError(
                "deterministic ops cannot train this model: its SavedModel encoder has "
                "unseeded random ops (dropout); run without --deterministic."
            ) from None
        done += phase.epochs
    return log.history(), False


def steps_per_epoch(train_batches: tf.data.Dataset, examples: int, config) -> int:
    """Batches in one epoch, as ``tf.data`` counts them where it can.

    Examples and batches differ where one example gives several (a long SQuAD context
    gives several windows); bucketed pipelines cannot be counted, and give one batch
    per ``batch_size`` examples.
    """
    count = int(train_batches.cardinality())
    if count > 0:
        return count
    return math.ceil(examples / config.batch_size)


class NonFiniteLoss(KerasformerError):
    """The training loss or a weight became NaN or infinite; nothing trained from then on
    is usable."""


class StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Stop at the first batch whose loss is not finite, before any backup or export."""

    def __init__(self, phase):
        super().__init__()
        self.phase = phase
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            raise NonFiniteLoss(
                f"the training loss became {float(loss)} in epoch {self.epoch + 1}, batch "
                f"{batch + 1} ({self.phase.name} phase), so nothing was exported; lower the "
                "learning rate (--learning-rate, or --fine-tune-learning-rate for the encoder) "
                "and train again."
            )


class StopOnNonFiniteWeights(keras.callbacks.Callback):
    """Stop at the end of the first epoch that leaves a weight NaN or infinite.

    The loss alone can miss it: oneDNN's fused Dense + ReLU turns NaN activations into
    zeros, so a model whose lower layers are all NaN still gives finite (constant)
    probabilities and a finite loss.
    """

    def __init__(self, phase):
        super().__init__()
        self.phase = phase

    def on_epoch_end(self, epoch, logs=None):
        for weight in self.model.trainable_weights:
            if not bool(tf.reduce_all(tf.math.is_finite(weight))):
                raise NonFiniteLoss(
                    f"the weight {weight.name} became NaN or infinite in epoch {epoch + 1} "
                    f"({self.phase.name} phase) although the loss stayed finite, so nothing "
                    "was exported and that epoch was not backed up; lower the learning rate "
                    "(--learning-rate) and train again."
                )


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

    def history(self) -> dict[str, list]:
        """Keras's ``History.history`` layout: one list per metric, plus phase and seconds."""
        columns: dict[str, list] = {"phase": [], "seconds": []}
        for record in self.records:
            for key, value in record.items():
                if key != "epoch":
                    columns.setdefault(key, []).append(value)
        return columns


def write_json(path: Path, payload) -> None:
    path.write_text(json.dumps(payload, indent=2, default=_json_default) + "\n", encoding="utf-8")


def _json_default(value):
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
