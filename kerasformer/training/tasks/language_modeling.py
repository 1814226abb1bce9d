"""Language modelling: a token stream in, a `TextGenerator` (model and vocabulary) out."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.datasets.data_summary import summarize_tokens
from kerasformer.datasets.pipeline import next_token_batches, strided_next_token_windows
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
        index = {token: i + 2 for i, token in enumerate(vocabulary)}

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
        """Perplexity: exp of the mean next-token loss over every window of a split.

        ``perplexity`` reads the split in windows that each start afresh, so a window's
        first tokens are predicted from little context; ``strided_perplexity`` slides
        windows by half their length, so every token after the first window is
        predicted from at least half a window (see `strided_next_token_windows`).
        """
        index = {token: i + 2 for i, token in enumerate(generator.vocabulary)}
        # The strided protocol needs only each target's loss, which an adaptive softmax
        # scores in the target's own cluster without forming every word's log-probability.
        adaptive = config.model_options.get("adaptive_cutoffs") is not None
        loss_model = next_token_loss_model(generator.model) if adaptive else None
        metrics = {}
        for split in ("validation", "test"):
            ids = token_ids(data.splits[split], index)
            batches = next_token_batches(ids, generator.maxlen, config.batch_size)
            loss, accuracy = loss_and_accuracy(generator.model, batches)
            metrics[split] = {
                "loss": float(loss),
                "perplexity": math.exp(loss),
                "token_accuracy": float(accuracy),
                "tokens": int((len(ids) - 1) // generator.maxlen * generator.maxlen),
                "strided_perplexity": strided_perplexity(
                    generator.model, ids, generator.maxlen, config.batch_size, loss_model
                ),
            }
        return metrics

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


def token_ids(tokens, index: dict[str, int]) -> np.ndarray:
    """Each token's id; tokens outside the vocabulary get the unknown id 1."""
    return np.fromiter((index.get(token, 1) for token in tokens), np.int32, len(tokens))


def scored_loss(targets, losses):
    """The loss of a model whose outputs are already each position's ``-log p(target)``."""
    del targets
    return losses


def loss_and_accuracy(model, batches: tf.data.Dataset) -> tuple[float, float]:
    """Mean next-token cross-entropy and accuracy of ``model`` over every target token."""
    every_token = batches.map(lambda x, y: (x, y, tf.ones_like(y, tf.float32)))
    loss, correct, count = summed_scores(model, every_token)
    if not count:
        return math.nan, math.nan
    return loss / count, correct / count


def strided_perplexity(
    model, ids: np.ndarray, window: int, batch_size: int, loss_model=None
) -> float:
    """exp of the mean loss of every next token of ``ids``, windows sliding by half.

    ``loss_model``, where given, is ``model``'s `next_token_loss_model`: each loss is then
    read from it instead of from ``model``'s logits.
    """
    inputs, targets, weights = strided_next_token_windows(ids, window, max(window // 2, 1))
    batches = tf.data.Dataset.from_tensor_slices((inputs, targets, weights)).batch(batch_size)
    if not weights.sum():
        return math.nan  # fewer than two tokens: no next token to predict
    if loss_model is None:
        loss, _, count = summed_scores(model, batches)
    else:
        loss, count = summed_losses(loss_model, batches)
    return math.exp(loss / count)


def summed_losses(loss_model, batches: tf.data.Dataset) -> tuple[float, float]:
    """Weighted sums of a `next_token_loss_model`'s losses and of the weights over
    ``(inputs, targets, weights)`` batches."""

    @tf.function
    def summed(x, y, w):
        losses = tf.cast(loss_model([x, y], training=False), tf.float32)
        return tf.reduce_sum(losses * w), tf.reduce_sum(w)

    totals = np.zeros(2)
    for x, y, w in batches:
        totals += [float(value) for value in summed(x, y, w)]
    return float(totals[0]), float(totals[1])


def summed_scores(model, batches: tf.data.Dataset) -> tuple[float, float, float]:
    """Weighted sums of next-token cross-entropy, right guesses and weights over
    ``(inputs, targets, weights)`` batches."""

    @tf.function
    def summed(x, y, w):
        logits = tf.cast(model(x, training=False), tf.float32)
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        right = tf.cast(tf.equal(tf.argmax(logits, axis=-1, output_type=y.dtype), y), tf.float32)
        return tf.reduce_sum(losses * w), tf.reduce_sum(right * w), tf.reduce_sum(w)

    totals = np.zeros(3)
    for x, y, w in batches:
        totals += [float(value) for value in summed(x, y, w)]
    return tuple(float(total) for total in totals)
