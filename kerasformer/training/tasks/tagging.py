"""Named-entity recognition: tagged sentences in, a `SequenceTagger` and entity F1 out."""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import keras, tf
from kerasformer.datasets.tagged_sentences import TaggedSentences, TaggingData
from kerasformer.errors import KerasformerError
from kerasformer.export.tagger_export import write_tagger
from kerasformer.models.sequence_tagger import (
    SequenceTagger,
    character_vocabulary,
    padded_features,
    word_vocabulary,
)
from kerasformer.plots import plot_confusion_matrix, save_figure
from kerasformer.registry import resolve
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.tagging_metrics import entity_scores, entity_type_confusion
from kerasformer.training.tasks.base import Task

CONFUSION_FILE = "entity_confusion.png"
# Per-word options of the tagger object and its vocabularies, not of the Keras model.
TAGGER_OPTIONS = ("vocab_size", "min_count", "decoding")


class TaggingTask(Task):
    """Tagged sentences in; a `SequenceTagger`, entity-level scores and a tagger export out."""

    example_noun = "sentences"

    def describe(self, data: TaggingData) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        lines = [f"{data.name}: {sizes} sentences; entity types {', '.join(data.entity_types())}"]
        return "\n".join([*lines, *(f"note: {note}" for note in data.notes)])

    def build(self, config, data: TaggingData):
        model_entry = self.entry.model(config.model)
        options = {**resolve(model_entry.defaults), **config.model_options}
        vocab_size, min_count, decoding = (options.pop(name) for name in TAGGER_OPTIONS)
        train = data.splits["train"]
        words = word_vocabulary(train.tokens, vocab_size, min_count)
        characters = character_vocabulary(train.tokens)
        try:
            model = resolve(model_entry.builder)(
                len(data.tag_names), len(words) + 2, len(characters) + 2, **options
            )
        except (TypeError, ValueError) as error:
            raise KerasformerError(f"cannot build model {config.model!r}: {error}") from error
        tagger = SequenceTagger(model, words, characters, data.tag_names, decoding)

        def batches(part: TaggedSentences, batch_size: int, shuffle_seed: int | None):
            return tagged_batches(tagger, part, batch_size, shuffle_seed)

        plan = FitPlan(
            model, model, config.xla, batches,
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=[], weighted_metrics=["accuracy"],
            callbacks=[ValidationEntities(tagger, data.splits["validation"], config.batch_size)],
        )  # fmt: skip
        return tagger, plan

    def evaluate(self, tagger: SequenceTagger, data: TaggingData, config) -> dict[str, dict]:
        """Entity precision, recall and F1 per split, decoded as the tagger decodes, with
        the F1 of argmax decoding beside it (what the IOB2 constraint buys)."""
        metrics = {}
        for split in ("validation", "test"):
            part = data.splits[split]
            probs = tagger.probabilities(part.tokens, config.batch_size)
            chosen = [tagger.decode(p) for p in probs]
            argmax = [tagger.decode(p, "argmax") for p in probs]
            scores = entity_scores(part.tags, chosen)
            scores["f1_argmax"] = entity_scores(part.tags, argmax)["f1"]
            matrix, names = entity_type_confusion(part.tags, chosen, list(data.entity_types()))
            metrics[split] = {
                **scores, "decoding": tagger.decoding, "sentences": len(part),
                "entity_confusion": {"types": names, "matrix": matrix},
            }  # fmt: skip
        return metrics

    def write_export(self, tagger: SequenceTagger, data: TaggingData, directory: Path) -> None:
        """The tagger export, with the test split's entity-type confusion matrix drawn."""
        write_tagger(tagger, directory)
        test = data.splits["test"]
        matrix, names = entity_type_confusion(
            test.tags, tagger.predict_tags(test.tokens), list(data.entity_types())
        )
        figure = plot_confusion_matrix(matrix, names, title=f"{data.name} test: entity types")
        figure.axes[0].set_xlabel("predicted type (same span)")
        figure.axes[0].set_ylabel("true type")
        save_figure(figure, directory / CONFUSION_FILE)


def tagged_batches(
    tagger: SequenceTagger, part: TaggedSentences, batch_size: int, shuffle_seed: int | None
) -> tf.data.Dataset:
    """``(features, tag ids, weights)`` batches padded to each batch's longest sentence and
    word; padded words weigh 0 in the loss and the token accuracy."""
    examples = tf.data.Dataset.from_tensor_slices(
        (tagger.ragged_features(part.tokens), tagger.tag_ids(part.tags))
    )
    if shuffle_seed is not None:
        examples = examples.shuffle(len(part), seed=shuffle_seed, reshuffle_each_iteration=True)

    def padded(features, tags):
        weights = tf.cast(tf.ones_like(tags).to_tensor() > 0, tf.float32)
        return padded_features(features), tags.to_tensor(), weights

    return (
        examples.batch(batch_size)
        .map(padded, num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )


class ValidationEntities(keras.callbacks.Callback):
    """Adds validation entity precision, recall and F1 to each epoch's logs (and so to
    ``history.json``, and to what ``--monitor`` can watch: ``val_entity_f1``)."""

    def __init__(self, tagger: SequenceTagger, part: TaggedSentences, batch_size: int):
        super().__init__()
        self.tagger, self.part, self.batch_size = tagger, part, batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        predicted = self.tagger.predict_tags(self.part.tokens, batch_size=self.batch_size)
        scores = entity_scores(self.part.tags, predicted)
        for name in ("precision", "recall", "f1"):
            logs[f"val_entity_{name}"] = scores[name]
