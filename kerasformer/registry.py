"""The one table of kerasformer's names: tasks, with their datasets, models, options and recipes.

Plain data, so the command line offers every choice without building anything. The
command line, the trainer, the tasks, the dataset loaders and the model builders all
look names up here; no other module keeps a list of them. Code is named by reference
(``"module:attribute"``) and imported only when it is used.

A new task is one `TaskEntry` in `TASKS` and the `Task` class its ``task`` names (see
the README's "Architecture").
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from kerasformer.errors import KerasformerError

# How a classifier's model.fit reads text: raw strings, or token ids made once and
# padded to maxlen, to each batch's longest text, or in buckets of similar length.
INPUT_PIPELINES = ("strings", "padded", "dynamic", "bucketed")
TRANSFORMER_OPTIONS = frozenset(
    {"embed_dim", "num_heads", "ff_dim", "dropout", "norm_first", "position", "maxlen"}
)
BERT_HANDLES = frozenset({"preprocess", "encoder"})
# A translator's options that its task, not its model builder, takes, with their defaults.
TRANSLATION_DEFAULTS = {"tokenizer": "word", "label_smoothing": 0.0}
TOKENIZERS = ("word", "sentencepiece")  # a translator's: words, or SentencePiece subwords
TRANSLATION_OPTIONS = frozenset(TRANSLATION_DEFAULTS)
TAGGER_OPTIONS = frozenset({"vocab_size", "embed_dim", "dropout", "decoding"})


@dataclass(frozen=True)
class ModelEntry:
    """A model a task can train: its options, recipes and builder.

    ``recipes`` lists the default first; a model with no ``input_pipelines`` always
    reads what its task's pipeline gives it.
    """

    name: str
    options: frozenset[str]
    recipes: tuple[str, ...] = ("from-scratch",)
    input_pipelines: tuple[str, ...] = ()
    input_pipeline: str | None = None  # the default of input_pipelines
    builder: str = ""  # "module:attribute" of the function or class that builds it
    defaults: str = ""  # "module:DEFAULTS", the builder's default options
    decoding: str = ""  # "module:Class" of a sequence model's decoding steps

    @property
    def default_recipe(self) -> str:
        return self.recipes[0]

    @property
    def default_input_pipeline(self) -> str | None:
        return self.input_pipeline

    @property
    def pretrained(self) -> bool:
        """Whether it is built over a pretrained BERT (it takes preprocess and encoder)."""
        return BERT_HANDLES <= self.options


@dataclass(frozen=True)
class DatasetEntry:
    """A dataset known by name, and the function that loads it."""

    name: str
    loader: str  # "module:function"
    # Its own train, validation and test files: --validation-fraction does not apply.
    fixed_splits: bool = False


@dataclass(frozen=True)
class TaskEntry:
    """Everything known about a task by name: what it reads, trains, exports and reports."""

    name: str
    task: str  # "module:Class" of its `kerasformer.training.tasks.base.Task`
    datasets: tuple[DatasetEntry, ...]
    models: tuple[ModelEntry, ...]
    export_kind: str
    headline_metrics: tuple[str, ...]
    command: str = "train"  # the command that trains it
    export_suffix: str = ""  # added to the default export directory's name
    # "module:function" reading the user's own files (--train-file ...), and the options
    # it takes (--text-column ...); None where the task reads only named datasets.
    file_reader: str | None = None
    data_options: frozenset[str] = frozenset()
    # "module:function" reading any TensorFlow Datasets dataset (--dataset tfds:NAME).
    tfds_reader: str | None = None

    @property
    def dataset_names(self) -> tuple[str, ...]:
        return tuple(dataset.name for dataset in self.datasets)

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(model.name for model in self.models)

    def model(self, name: str) -> ModelEntry:
        return named(self.models, name, f"model {name!r} does not fit task {self.name!r}")

    def dataset(self, name: str) -> DatasetEntry:
        return named(self.datasets, name, f"dataset {name!r} is not a {self.name} dataset")


BBC_NEWS = DatasetEntry("bbc_news", "kerasformer.datasets.bbc_news:load_bbc_news")
AG_NEWS = DatasetEntry("ag_news", "kerasformer.datasets.ag_news:load_ag_news")
TRANSFORMER_CLASSIFIER = ModelEntry(
    "transformer",
    TRANSFORMER_OPTIONS | {"vocab_size", "key_dim"},
    input_pipelines=INPUT_PIPELINES,
    input_pipeline="bucketed",
    builder="kerasformer.models.text_classifier:TransformerTextClassifier",
    defaults="kerasformer.models.defaults:TRANSFORMER_CLASSIFIER",
)
BERT_CLASSIFIER = ModelEntry(
    "bert",
    BERT_HANDLES | {"dropout"},
    recipes=("unfrozen", "frozen", "frozen-then-unfrozen"),
    input_pipelines=INPUT_PIPELINES,
    input_pipeline="bucketed",
    builder="kerasformer.models.text_classifier:BertTextClassifier",
)

TASKS: dict[str, TaskEntry] = {
    entry.name: entry
    for entry in (
        TaskEntry(
            "classification",
            "kerasformer.training.tasks.classification:ClassificationTask",
            datasets=(BBC_NEWS, AG_NEWS),
            models=(TRANSFORMER_CLASSIFIER, BERT_CLASSIFIER),
            export_kind="classifier",
            headline_metrics=("accuracy",),
            file_reader="kerasformer.datasets.from_files:from_files",
            data_options=frozenset(
                {"text_column", "label_column", "delimiter", "multi_label", "label_separator"}
            ),
            tfds_reader="kerasformer.datasets.from_tfds:from_tfds",
        ),
        TaskEntry(
            "translation",
            "kerasformer.training.tasks.translation:TranslationTask",
            datasets=(DatasetEntry("spa_eng", "kerasformer.datasets.spa_eng:load_spa_eng"),),
            models=(
                ModelEntry(
                    "transformer",
                    TRANSFORMER_OPTIONS
                    | {"vocab_size", "num_layers", "tie_embeddings"}
                    | TRANSLATION_OPTIONS,
                    builder="kerasformer.models.transformer_translator:build_transformer_translator",
                    defaults="kerasformer.models.defaults:TRANSFORMER_TRANSLATOR",
                    decoding="kerasformer.models.transformer_translator:TransformerTranslatorDecoding",
                ),
                ModelEntry(
                    "rnn",
                    frozenset({"vocab_size", "maxlen", "embed_dim", "units", "dropout"})
                    | TRANSLATION_OPTIONS,
                    builder="kerasformer.models.rnn_translator:build_rnn_translator",
                    defaults="kerasformer.models.defaults:RNN_TRANSLATOR",
                    decoding="kerasformer.models.rnn_translator:RnnTranslatorDecoding",
                ),
            ),
            export_kind="translator",
            headline_metrics=("bleu", "chrf", "bleu_lowercase", "token_accuracy"),
            file_reader="kerasformer.datasets.pairs_from_files:from_sentence_pairs",
            data_options=frozenset({"source_column", "target_column", "delimiter"}),
        ),
        TaskEntry(
            "language-model",
            "kerasformer.training.tasks.language_modeling:LanguageModelingTask",
            datasets=(
                DatasetEntry(
                    "wikitext2", "kerasformer.datasets.wikitext:load_wikitext2", fixed_splits=True
                ),
            ),
            models=(
                ModelEntry(
                    "transformer",
                    TRANSFORMER_OPTIONS
                    | {"num_layers", "vocab_size", "tie_embeddings", "adaptive_cutoffs"},
                    builder="kerasformer.models.language_model:build_transformer_language_model",
                    defaults="kerasformer.models.defaults:LANGUAGE_MODEL",
                ),
            ),
            export_kind="language-model",
            headline_metrics=("perplexity", "strided_perplexity"),
            file_reader="kerasformer.datasets.corpus_from_files:from_text_files",
        ),
        TaskEntry(
            "question-answering",
            "kerasformer.training.tasks.question_answering:QuestionAnsweringTask",
            datasets=(DatasetEntry("squad", "kerasformer.datasets.squad:load_squad"),),
            models=(
                ModelEntry(
                    "bert",
                    BERT_HANDLES | {"seq_length", "doc_stride", "null_threshold"},
                    recipes=BERT_CLASSIFIER.recipes,
                    builder="kerasformer.models.bert_question_answerer:build_bert_question_answerer",
                    defaults="kerasformer.models.defaults:QUESTION_ANSWERER",
                ),
            ),
            export_kind="question answerer",
            headline_metrics=("exact_match", "f1"),
            file_reader="kerasformer.datasets.questions_from_files:from_squad_files",
        ),
        TaskEntry(
            "ner",
            "kerasformer.training.tasks.tagging:TaggingTask",
            datasets=(
                DatasetEntry("conll2003", "kerasformer.datasets.tagged_sentences:load_conll2003"),
            ),
            models=(
                ModelEntry(
                    "rnn",
                    TAGGER_OPTIONS | {"units"},
                    builder="kerasformer.models.sequence_tagger:build_rnn_tagger",
                    defaults="kerasformer.models.defaults:RNN_TAGGER",
                ),
                ModelEntry(
                    "transformer",
                    TAGGER_OPTIONS | {"num_heads", "ff_dim", "num_layers"},
                    builder="kerasformer.models.sequence_tagger:build_transformer_tagger",
                    defaults="kerasformer.models.defaults:TRANSFORMER_TAGGER",
                ),
                ModelEntry(
                    "bert",
                    BERT_HANDLES | {"seq_length", "doc_stride", "dropout", "decoding"},
                    recipes=BERT_CLASSIFIER.recipes,
                    builder="kerasformer.models.bert_tagger:build_bert_tagger",
                    defaults="kerasformer.models.defaults:BERT_TAGGER",
                ),
            ),
            export_kind="tagger",
            headline_metrics=("f1", "precision", "recall"),
            file_reader="kerasformer.datasets.tagged_sentences:from_tagged_files",
        ),
        TaskEntry(
            "distillation",
            "kerasformer.training.tasks.distillation:DistillationTask",
            datasets=(BBC_NEWS, AG_NEWS),
            models=(TRANSFORMER_CLASSIFIER,),
            export_kind="classifier",
            headline_metrics=("accuracy",),
            command="distill",
            export_suffix="-distilled",
            file_reader="kerasformer.datasets.from_files:from_files",
            data_options=frozenset({"text_column", "label_column", "delimiter"}),
            tfds_reader="kerasformer.datasets.from_tfds:from_tfds",
        ),
    )
}
MODEL_NAMES = tuple(dict.fromkeys(m.name for task in TASKS.values() for m in task.models))
DATASET_NAMES = tuple(sorted({d.name for task in TASKS.values() for d in task.datasets}))
RECIPE_NAMES = tuple(
    dict.fromkeys(recipe for task in TASKS.values() for m in task.models for recipe in m.recipes)
)
TRAINED_BY_TRAIN = tuple(name for name, entry in TASKS.items() if entry.command == "train")


def all_model_names() -> tuple[str, ...]:
    """Every model name of every task registered now (tasks may be added at run time)."""
    return tuple(dict.fromkeys(m.name for task in TASKS.values() for m in task.models))


def task_entry(name: str) -> TaskEntry:
    if name not in TASKS:
        raise KerasformerError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}.")
    return TASKS[name]


def resolve(reference: str):
    """The object a ``"module:attribute"`` reference names, imported on first use."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def named(entries, name: str, refusal: str):
    """The entry called ``name``, or an error: ``refusal`` and the names to choose from."""
    for entry in entries:
        if entry.name == name:
            return entry
    names = ", ".join(entry.name for entry in entries)
    raise KerasformerError(f"{refusal}; choose one of: {names}.")
