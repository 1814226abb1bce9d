"""The task a trainer asks: what a kind of training job reads, builds, measures and exports.

As in the Model Garden's ``base_task.Task``: the trainer knows no task by name. It asks
the task for its settings, data, model and ``model.fit`` plan, final metrics and export;
recipes, backups and resume, history and distribution stay the trainer's, for every task.
A task is made from its `kerasformer.registry.TaskEntry`.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

from kerasformer.datasets.data_summary import format_summary, summary_warnings
from kerasformer.datasets.from_files import data_name
from kerasformer.datasets.from_tfds import is_tfds, tfds_data_name
from kerasformer.errors import KerasformerError
from kerasformer.files.export_kind import BERT_PART, require_export_kind
from kerasformer.network import is_url
from kerasformer.registry import TASKS, TaskEntry, resolve


@dataclasses.dataclass(frozen=True)
class NoSettings:
    """A task with no settings of its own."""


class Task:
    """One kind of training job, built from its registry entry.

    Subclasses set ``settings_class`` (a dataclass of the task's own settings, which
    `TrainingConfig.task_options` fills) and implement the methods that raise here.
    """

    settings_class: type = NoSettings
    # What one example of the task's data is called, in errors.
    example_noun = "examples"

    def __init__(self, entry: TaskEntry):
        self.entry = entry
        self.name = entry.name
        self.models = entry.model_names
        self.datasets = entry.dataset_names
        self.export_kind = entry.export_kind
        self.headline_metrics = entry.headline_metrics

    # -- settings ----------------------------------------------------------------------

    def validate(self, config) -> None:
        """Refuse settings that cannot train, each in one line naming the fix.

        A known model, then what this task, its model and its dataset take, then the run's
        numbers and sizes. A task that adds checks calls ``super().validate(config)``.
        """
        config.require_known_model()
        model = self.entry.model(config.model)
        require_known_model_options(config, model)
        if config.train_file is None and not is_tfds(config.dataset):
            self.entry.dataset(config.dataset)
        self.require_readable_files(config)
        recipe = config.recipe or model.default_recipe
        if recipe not in model.recipes:
            raise KerasformerError(
                f"recipe {recipe!r} does not apply to --model {model.name}; choose one of: "
                f"{', '.join(model.recipes)}."
            )
        require_bert_handles_fit(config.model_options)
        self.require_input_pipeline_fits(config)
        self.settings(config)
        config.require_paths_exist()
        config.require_tensorboard_dir()
        config.require_numbers_fit()
        self.require_fits_in_memory(config)

    def require_readable_files(self, config) -> None:
        """Your own files: only with a training file, and only for a task that reads them."""
        if config.train_file is None and is_tfds(config.dataset):
            self.require_readable_tfds(config)
            return
        if config.tfds_data_dir is not None:
            raise KerasformerError(
                "--tfds-data-dir goes with a TensorFlow Datasets dataset; give --dataset "
                "tfds:NAME too."
            )
        if config.train_file is None:
            given = [name for name in ("validation_file", "test_file") if getattr(config, name)]
            if given or config.data_options:
                what = ", ".join([*given, *sorted(config.data_options)])
                raise KerasformerError(
                    f"{what} go(es) with your own training data; give --train-file too."
                )
            return
        if config.data_dir is not None:
            raise KerasformerError(
                "--data-dir and --train-file both name the training data; give one of them."
            )
        if self.entry.file_reader is None:
            raise KerasformerError(
                f"--task {self.name} does not read your own files yet; use one of its "
                f"datasets ({', '.join(self.datasets)}) with --dataset and --data-dir."
            )
        stray = sorted(set(config.data_options) - self.entry.data_options)
        if stray:
            flags = ", ".join("--" + name.replace("_", "-") for name in stray)
            raise KerasformerError(f"{flags} do(es) not apply to --task {self.name}.")

    def require_readable_tfds(self, config) -> None:
        """``--dataset tfds:NAME``: a task that reads TFDS, with the options its reader takes."""
        if self.entry.tfds_reader is None:
            raise KerasformerError(
                f"--task {self.name} does not read TensorFlow Datasets datasets; use one of "
                f"its datasets ({', '.join(self.datasets)}) or --train-file."
            )
        if config.data_dir is not None:
            raise KerasformerError(
                f"--data-dir does not apply to {config.dataset}; pass the folder it is "
                "prepared in with --tfds-data-dir."
            )
        given = [name for name in ("validation_file", "test_file") if getattr(config, name)]
        takes = set(inspect.signature(resolve(self.entry.tfds_reader)).parameters)
        stray = sorted([*given, *(set(config.data_options) - takes)])
        if stray:
            flags = ", ".join("--" + name.replace("_", "-") for name in stray)
            raise KerasformerError(f"{flags} do(es) not apply to {config.dataset}.")

    def require_input_pipeline_fits(self, config) -> None:
        model = self.entry.model(config.model)
        if not model.input_pipelines:
            if config.input_pipeline is not None:
                raise KerasformerError(
                    "--input-pipeline chooses how classifiers read text; "
                    f"{self.name} models always read token ids in length buckets."
                )
            return
        pipeline = config.input_pipeline or model.default_input_pipeline
        if pipeline not in model.input_pipelines:
            raise KerasformerError(
                f"input pipeline {pipeline!r} does not fit model {model.name!r}; choose one "
                f"of: {', '.join(model.input_pipelines)}."
            )
        if config.xla and pipeline == "dynamic":
            raise KerasformerError(
                "--xla would compile again for every batch length of the 'dynamic' input "
                "pipeline; use 'bucketed' or 'padded' with --xla."
            )

    def settings(self, config, checked: bool = True):
        """The task's own settings from ``config.task_options``, checked unless not asked."""
        names = {field.name for field in dataclasses.fields(self.settings_class)}
        own = {}
        for name, value in config.task_options.items():
            if name in names:
                own[name] = value
                continue
            owner, default = task_owning_setting(name)
            if owner is None:
                raise KerasformerError(f"unknown setting {name!r} for task {self.name!r}.")
            if value != default:  # another task's setting left as it is is no mistake
                raise KerasformerError(
                    f"{name} is for {owner.name} only; run `kerasformer {owner.command}`."
                )
        settings = self.settings_class(**own)
        check = getattr(settings, "validate", None)
        if checked and check is not None:
            check()
        return settings

    def record(self, config) -> dict:
        """The settings as saved with the metrics: the run's, then the task's own."""
        run = {**dataclasses.asdict(config), "dataset": self.data_name(config)}
        run.pop("task_options")
        return {**run, **dataclasses.asdict(self.settings(config, checked=False))}

    def data_name(self, config) -> str:
        """The dataset's name, or your training file's (without its suffix)."""
        if config.train_file is not None:
            return data_name(config.train_file)
        return tfds_data_name(config.dataset) if is_tfds(config.dataset) else config.dataset

    def export_name(self, config) -> str:
        """The default export directory's name: data, model, recipe if not the default."""
        model = self.entry.model(config.model)
        name = f"{self.data_name(config)}-{config.model}"
        if config.resolved_recipe() != model.default_recipe:
            name += f"-{config.resolved_recipe()}"
        return name + self.entry.export_suffix

    def require_fits_in_memory(self, config) -> None:
        """Refuse, before anything is built, sizes that cannot fit in memory."""

    def export_dir(self, config) -> Path:
        """Where the run exports: ``config.export_dir``, or ``saved_models/`` `export_name`."""
        if config.export_dir is not None:
            return Path(config.export_dir)
        return Path("saved_models") / self.export_name(config)

    # -- the job -----------------------------------------------------------------------

    def load_data(self, config):
        """The dataset ``config`` names, split as it says, by its registry loader."""
        if config.train_file is None and is_tfds(config.dataset):
            read = resolve(self.entry.tfds_reader)
            return read(
                config.dataset, config.tfds_data_dir,
                validation_fraction=config.validation_fraction,
                test_fraction=config.test_fraction, split_seed=0, log=print,
                **config.data_options,
            )  # fmt: skip
        if config.train_file is not None:
            read = resolve(self.entry.file_reader)
            return read(
                config.train_file, config.validation_file, config.test_file,
                validation_fraction=config.validation_fraction,
                test_fraction=config.test_fraction, split_seed=0, **config.data_options,
            )  # fmt: skip
        dataset = self.entry.dataset(config.dataset)
        load = resolve(dataset.loader)
        if dataset.fixed_splits:
            return load(config.data_dir)
        return load(config.data_dir, validation_fraction=config.validation_fraction, split_seed=0)

    def as_trained_on(self, data):
        """``data`` (loaded, or given to `train`) as the model trains and is scored on it;
        as it is, unless the task's export reads its examples otherwise."""
        return data

    def require_trainable(self, data) -> None:
        for split in ("train", "validation"):
            if len(data.splits[split]) == 0:
                raise KerasformerError(
                    f"the {split} split of {data.name} has no {self.example_noun}."
                )

    def describe(self, data) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        return f"{data.name}: {sizes}"

    def build(self, config, data):
        """The task's model object and the `FitPlan` that trains it."""
        raise NotImplementedError

    def summarize(self, model, data) -> dict | None:
        """What the user sees of the data before training, as `data_summary` gives it
        (lengths measured as ``model`` reads them); None where the task has no summary."""
        return None

    def report_data(self, model, data, verbose: int) -> dict | None:
        """`summarize` with its warnings added, printed unless ``verbose`` is 0."""
        summary = self.summarize(model, data)
        if summary is None:
            return None
        summary["warnings"] = summary_warnings(summary)
        if verbose:
            print(format_summary(summary, with_sizes=False))
            for warning in summary["warnings"]:
                print(f"warning: {warning}")
        return summary

    def evaluate(self, model, data, config) -> dict[str, dict]:
        raise NotImplementedError

    def write_export(self, model, data, directory: Path) -> None:
        raise NotImplementedError

    def reported_metrics(self, metrics: dict[str, dict]) -> tuple[str, ...]:
        """The metrics `kerasformer train` prints for each split: the headline ones."""
        return self.headline_metrics

    def keras_model(self, model):
        """The Keras model inside the task's model object (what a rescue saves)."""
        return model.model

    def result_model(self, model):
        """What `TrainingResult.model` holds: the task's model object, by default."""
        return model


def require_bert_handles_fit(model_options: dict) -> None:
    """--preprocess and --encoder name parts of a BERT conversion, not other outputs."""
    for name in ("preprocess", "encoder"):
        handle = model_options.get(name)
        if handle is not None and not is_url(str(handle)):
            require_export_kind(handle, BERT_PART)


def task_owning_setting(name: str) -> tuple[TaskEntry | None, object]:
    """The task whose settings have ``name``, and that setting's default."""
    for entry in TASKS.values():
        for field in dataclasses.fields(resolve(entry.task).settings_class):
            if field.name == name:
                return entry, field.default
    return None, None


def require_known_model_options(config, model) -> None:
    """Refuse, before any data is read, a model option the model does not take (a typo in
    a ``--config`` file, or another model's option), naming the ones it takes."""
    if not isinstance(config.model_options, dict):
        raise KerasformerError(
            f"model_options must be a dict of options by name, got "
            f"{type(config.model_options).__name__}."
        )
    known = set(model.options) | (set(resolve(model.defaults)) if model.defaults else set())
    unknown = sorted(set(config.model_options) - known)
    if unknown:
        raise KerasformerError(
            f"--model {model.name} of --task {config.task}: unknown option"
            f"{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; its options "
            f"are {', '.join(sorted(known))}."
        )
