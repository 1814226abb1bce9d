"""kerasformer.registry: every name it holds leads to real code, and the code takes it."""

from __future__ import annotations

import inspect

import pytest

from kerasformer import registry
from kerasformer.errors import KerasformerError

# Which function finally takes each model's options: known here, not read from the registry.
MODELS = "kerasformer.models."
OPTION_TAKERS = {
    ("classification", "transformer"): MODELS
    + "transformer_classifier:build_transformer_classifier",
    ("classification", "bert"): MODELS + "bert_classifier:build_bert_classifier",
    ("translation", "transformer"): MODELS + "transformer_translator:build_transformer_translator",
    ("translation", "rnn"): MODELS + "rnn_translator:build_rnn_translator",
    ("language-model", "transformer"): MODELS + "language_model:build_transformer_language_model",
    ("ner", "rnn"): MODELS + "sequence_tagger:build_rnn_tagger",
    ("ner", "transformer"): MODELS + "sequence_tagger:build_transformer_tagger",
    ("ner", "bert"): MODELS + "bert_tagger:build_bert_tagger",
}


def every_model():
    return [(task, model) for task in registry.TASKS.values() for model in task.models]


def test_every_reference_resolves_to_code():
    for task in registry.TASKS.values():
        task_class = registry.resolve(task.task)
        assert task_class.__name__.endswith("Task")
        for dataset in task.datasets:
            assert callable(registry.resolve(dataset.loader))
        for model in task.models:
            assert model.builder and registry.resolve(model.builder) is not None
            if model.defaults:
                assert isinstance(registry.resolve(model.defaults), dict)


@pytest.mark.parametrize("key", sorted(OPTION_TAKERS))
def test_each_option_a_model_allows_is_a_parameter_of_its_builder(key):
    task, name = key
    model = registry.task_entry(task).model(name)
    parameters = set(inspect.signature(registry.resolve(OPTION_TAKERS[key])).parameters)
    # vocab_size and tokenizer of a translator make its two tokenizers, in the task, and
    # label_smoothing is its task's loss; a
    # tagger's vocabulary, decoding and windows are its tagger object's, not its Keras
    # model's (SequenceTagger, BertTagger).
    handled_by_task = {
        "translation": {"vocab_size", "tokenizer", "label_smoothing"},
        "ner": {"vocab_size", "decoding", "preprocess", "seq_length", "doc_stride"},
    }.get(task, set())  # fmt: skip
    assert set(model.options) - handled_by_task <= parameters


def test_defaults_name_only_options_the_model_allows_or_fixes():
    for task, model in every_model():
        if model.defaults:
            defaults = set(registry.resolve(model.defaults))
            # Fixed, not offered on the command line: dense_units, max_question_tokens, and
            # the taggers' character features and vocabulary cut-off.
            fixed = {"dense_units", "max_question_tokens", "char_embed_dim", "char_filters",
                     "min_count"}  # fmt: skip
            assert defaults - model.options <= fixed, (
                task.name,
                model.name,
            )


def test_names_are_unique_and_defaults_come_first():
    for task in registry.TASKS.values():
        assert len(set(task.model_names)) == len(task.model_names)
        assert len(set(task.dataset_names)) == len(task.dataset_names)
        for model in task.models:
            assert model.default_recipe == model.recipes[0]
            assert set(model.input_pipelines) <= set(registry.INPUT_PIPELINES)
            assert (model.input_pipeline is None) == (not model.input_pipelines)
            assert model.input_pipeline in (None, *model.input_pipelines)
    assert set(registry.DATASET_NAMES) == {
        "bbc_news", "ag_news", "spa_eng", "wikitext2", "squad", "conll2003"
    }  # fmt: skip
    assert "distillation" not in registry.TRAINED_BY_TRAIN


@pytest.mark.parametrize(
    "lookup, message",
    [
        (
            lambda: registry.task_entry("pos-tagging"),
            "unknown task 'pos-tagging'; choose one of: classification",
        ),
        (
            lambda: registry.task_entry("translation").model("bert"),
            "model 'bert' does not fit task 'translation'; choose one of: transformer, rnn.",
        ),
        (
            lambda: registry.task_entry("classification").dataset("squad"),
            "dataset 'squad' is not a classification dataset; choose one of: bbc_news, ag_news.",
        ),
    ],
)
def test_unknown_names_are_refused_in_one_line(lookup, message):
    with pytest.raises(KerasformerError) as caught:
        lookup()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_command_line_offers_exactly_the_registry():
    from kerasformer.cli.main import build_parser

    train = build_parser().command_parsers["train"]
    choices = {action.dest: action.choices for action in train._actions if action.choices}
    assert tuple(choices["task"]) == registry.TRAINED_BY_TRAIN
    assert set(choices["model"]) == set(registry.MODEL_NAMES)
    assert set(choices["recipe"]) == set(registry.RECIPE_NAMES)
    dataset = next(action for action in train._actions if action.dest == "dataset")
    assert set(dataset.type.names) == set(registry.DATASET_NAMES)
