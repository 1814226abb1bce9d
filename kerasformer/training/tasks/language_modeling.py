"""Language modelling: a token stream in, a `TextGenerator` (model and vocabulary) out."""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import keras
from kerasformer.datasets.data_summary import summarize_tokens
from kerasformer.datasets.pipeline import next_token_batches
from kerasformer.datasets.wikitext import END_OF_LINE, LanguageModelData
from kerasformer.errors import KerasformerError
from kerasformer.export.generator_export import write_generator
from kerasformer.models.language_model import (
    DEFAULTS,
    TextGenerator,
    build_transformer_language_model,
    next_token_loss_model,
)
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.language_model_metrics import (
    stream_metrics,
    token_ids,
    vocabulary_index,
)
from kerasformer.training.tasks.base import Task


class LanguageModelingTask(Task):
    """A token stream in; a `TextGenerator`, its perplexity and a language-model export out."""

    def validate(self, config) -> None:
        super().validate(config)
        if config.model_options.get("adaptive_cutoffs") is None:
            return
        if not config.model_options.get("tie_embeddings"):
            raise KerasformerError(
                "--adaptive-cutoffs makes the tied output layer an adaptive softmax; add "
                "--tie-embeddings."
            )
        if config.xla:
            raise KerasformerError(
                "--xla cannot compile the adaptive softmax's loss (how many tokens each "
                "cluster scores changes every batch); drop --xla or --adaptive-cutoffs."
            )

    def require_trainable(self, data: LanguageModelData) -> None:
        for split in ("train", "validation"):
            if len(data.splits[split]) < 2:
                raise KerasformerError(f"the {split} split of {data.name} has too few tokens.")

    def describe(self, data: LanguageModelData) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        return f"{data.name}: {sizes} tokens; vocabulary {len(data.vocabulary())}"

    def build(self, config, data: LanguageModelData):
        options = {**DEFAULTS, **config.model_options}
        vocabulary = capped_vocabulary(data.vocabulary(), options.pop("vocab_size", None))
        try:
            model = build_transformer_language_model(len(vocabulary) + 2, **options)
        except (TypeError, ValueError) as error:
            raise KerasformerError(f"cannot build model {config.model!r}: {error}") from error
        generator = TextGenerator(model, vocabulary, end_token=END_OF_LINE)
        index = vocabulary_index(vocabulary)

        def batches(tokens, batch_size: int, shuffle_seed: int | None):
            ids = token_ids(tokens, index)
            return next_token_batches(ids, generator.maxlen, batch_size, shuffle_seed)

        if options.get("adaptive_cutoffs") is None:
            plan = FitPlan(
                model, model, config.xla, batches,
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            )  # fmt: skip
            return generator, plan

        def scored_batches(tokens, batch_size: int, shuffle_seed: int | None):
            return batches(tokens, batch_size, shuffle_seed).map(lambda x, y: ((x, y), y))

        plan = FitPlan(
            model, next_token_loss_model(model), False, scored_batches,
            loss=scored_loss, metrics=[],
        )  # fmt: skip
        return generator, plan

    def summarize(self, generator: TextGenerator, data: LanguageModelData) -> dict:
        return summarize_tokens(data, generator.vocabulary)

    def evaluate(self, generator: TextGenerator, data: LanguageModelData, config) -> dict:
        """Perplexity of validation and test under both protocols (`stream_metrics`)."""
        index = vocabulary_index(generator.vocabulary)
        # The strided protocol needs only each target's loss, which an adaptive softmax
        # scores in the target's own cluster without forming every word's log-probability.
        adaptive = config.model_options.get("adaptive_cutoffs") is not None
        loss_model = next_token_loss_model(generator.model) if adaptive else None
        return {
            split: stream_metrics(
                generator.model, token_ids(data.splits[split], index), generator.maxlen,
                config.batch_size, loss_model,
            )
            for split in ("validation", "test")
        }  # fmt: skip

    def write_export(self, generator: TextGenerator, data, directory: Path) -> None:
        write_generator(generator, directory)


def capped_vocabulary(vocabulary: list[str], vocab_size: int | None) -> list[str]:
    """The most frequent words, ``vocab_size`` ids in all (padding and unknown included),
    ``<eos>`` always among them."""
    if vocab_size is None:
        return vocabulary
    if vocab_size < 3:
        raise KerasformerError(
            f"a vocabulary of {vocab_size} tokens leaves no room for words; use at least 3."
        )
    capped = vocabulary[: vocab_size - 2]
    if END_OF_LINE in vocabulary and END_OF_LINE not in capped:
        capped[-1] = END_OF_LINE  # generation stops at it, so it always has an id
    return capped


def scored_loss(targets, losses):
    """The loss of a model whose outputs are already each position's ``-log p(target)``."""
    del targets
    return losses
