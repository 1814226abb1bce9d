"""Named-entity recognition: tagged sentences in, a tagger (from scratch or over BERT) and
entity F1 out."""

from __future__ import annotations

import functools
from pathlib import Path

from kerasformer.backend import keras, tf
from kerasformer.datasets.pipeline import token_id_batches
from kerasformer.datasets.tagged_sentences import TaggedSentences, TaggingData
from kerasformer.errors import KerasformerError
from kerasformer.export.tagger_export import write_tagger
from kerasformer.models.bert_classifier import ONLINE_ENCODER, ONLINE_PREPROCESS, absolute_handle
from kerasformer.models.bert_tagger import BertTagger
from kerasformer.models.encoder_positions import require_seq_length_fits
from kerasformer.models.entity_tagger import EntityTagger
from kerasformer.models.question_answerer import load_preprocess
from kerasformer.models.sequence_tagger import (
    SequenceTagger,
    character_vocabulary,
    padded_features,
    tag_ids,
    word_vocabulary,
)
from kerasformer.models.word_piece_windows import ragged_words
from kerasformer.registry import resolve
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.tagging_metrics import entity_scores, entity_type_confusion
from kerasformer.training.tasks.base import Task

CONFUSION_FILE = "entity_confusion.png"
# Per-word options of the tagger object and its vocabularies, not of the Keras model.
TAGGER_OPTIONS = ("vocab_size", "min_count", "decoding")


class TaggingTask(Task):
    """Tagged sentences in; an `EntityTagger`, entity-level scores and a tagger export out."""

    example_noun = "sentences"

    def as_trained_on(self, data: TaggingData) -> TaggingData:
        """Every split in the words the export reads in raw text, each piece with its
        word's tag: a tagger trained on CoNLL's own words (``U.S.`` whole) lost 4 to 5
        F1 points on raw text, which the export splits at every punctuation mark."""
        return data.as_served_words()

    def describe(self, data: TaggingData) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        lines = [f"{data.name}: {sizes} sentences; entity types {', '.join(data.entity_types())}"]
        return "\n".join([*lines, *(f"note: {note}" for note in data.notes)])

    def build(self, config, data: TaggingData):
        model_entry = self.entry.model(config.model)
        options = {**resolve(model_entry.defaults), **config.model_options}
        build = resolve(model_entry.builder)
        try:
            if model_entry.pretrained:
                tagger = bert_tagger(data, build, options)
                make_batches = functools.partial(window_batches, fixed_shapes=config.xla)
            else:
                tagger = word_tagger(data, build, options)
                make_batches = tagged_batches
        except (TypeError, ValueError) as error:
            raise KerasformerError(f"cannot build model {config.model!r}: {error}") from error

        def batches(part: TaggedSentences, batch_size: int, shuffle_seed: int | None):
            return make_batches(tagger, part, batch_size, shuffle_seed)

        plan = FitPlan(
            tagger.model, tagger.model, config.xla, batches,
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=[], weighted_metrics=["accuracy"],
            callbacks=[ValidationEntities(tagger, data.splits["validation"], config.batch_size)],
            encoder=tagger.encoder,
        )  # fmt: skip
        return tagger, plan

    def evaluate(self, tagger: EntityTagger, data: TaggingData, config) -> dict[str, dict]:
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

    def write_export(self, tagger: EntityTagger, data: TaggingData, directory: Path) -> None:
        """The tagger export, with the test split's entity-type confusion matrix drawn."""
        # Imported here: matplotlib costs every command, most of which draw nothing, a second.
        from kerasformer.plots import plot_confusion_matrix, save_figure

        write_tagger(tagger, directory)
        test = data.splits["test"]
        matrix, names = entity_type_confusion(
            test.tags, tagger.predict_tags(test.tokens), list(data.entity_types())
        )
        figure = plot_confusion_matrix(matrix, names, title=f"{data.name} test: entity types")
        figure.axes[0].set_xlabel("predicted type (same span)")
        figure.axes[0].set_ylabel("true type")
        save_figure(figure, directory / CONFUSION_FILE)


def word_tagger(data: TaggingData, build, options: dict) -> SequenceTagger:
    """A from-scratch tagger with vocabularies of the training words and characters."""
    vocab_size, min_count, decoding = (options.pop(name) for name in TAGGER_OPTIONS)
    train = data.splits["train"]
    words = word_vocabulary(train.tokens, vocab_size, min_count)
    characters = character_vocabulary(train.tokens)
    model = build(len(data.tag_names), len(words) + 2, len(characters) + 2, **options)
    return SequenceTagger(model, words, characters, data.tag_names, decoding)


def bert_tagger(data: TaggingData, build, options: dict) -> BertTagger:
    """A tagging head on the encoder ``options`` names, reading with its preprocess model."""
    preprocess = absolute_handle(options.pop("preprocess", None) or ONLINE_PREPROCESS)
    encoder = str(options.pop("encoder", None) or ONLINE_ENCODER)
    require_seq_length_fits(options["seq_length"], encoder)
    model = build(len(data.tag_names), encoder, dropout=options.pop("dropout"))
    return BertTagger(model, load_preprocess(preprocess), data.tag_names,
                      preprocess_handle=preprocess, **options)  # fmt: skip


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


def window_batches(
    tagger: BertTagger, part: TaggedSentences, batch_size: int, shuffle_seed: int | None,
    fixed_shapes: bool = False,
) -> tf.data.Dataset:  # fmt: skip
    """``(encoder inputs, tag ids, weights)`` batches of word-piece windows of similar
    length; only each word's first piece weighs 1 in the loss and the token accuracy."""
    ids, codes = window_examples(tagger, part)

    def window(index):
        first, limit = ids.row_splits[index], ids.row_splits[index + 1]
        return ids.values[first:limit], codes.values[first:limit]

    # Sliced from the flat values: tf.data cannot pad-batch ragged slices.
    examples = tf.data.Dataset.range(ids.nrows()).map(window)
    # Made once: they are the same windows every epoch.
    batches = token_id_batches(examples, batch_size, "bucketed", tagger.windows.seq_length,
                               shuffle_seed, fixed_shapes=fixed_shapes)  # fmt: skip

    def encoder_inputs(ids, codes):
        inputs = {
            "input_word_ids": ids,
            "input_mask": tf.cast(codes > PADDING, tf.int32),
            "input_type_ids": tf.zeros_like(ids),
        }
        return inputs, tf.maximum(codes - FIRST_TAG, 0), tf.cast(codes >= FIRST_TAG, tf.float32)

    return batches.map(encoder_inputs, num_parallel_calls=tf.data.AUTOTUNE)


# What a window's positions hold besides their ids, so that bucketing pads them with 0:
# padding, a token with no tag of its own ([CLS], [SEP], a word's later pieces), a tag.
PADDING, UNTAGGED, FIRST_TAG = 0, 1, 2


def window_examples(tagger: BertTagger, part: TaggedSentences, chunk: int = 512):
    """Each window's ids and position codes (`PADDING`, `UNTAGGED`, `FIRST_TAG` + tag id),
    ragged ``[windows, (length)]``, over every sentence of ``part``."""
    ids, codes = [], []
    for begin in range(0, len(part), chunk):
        tokens, tags = part.tokens[begin : begin + chunk], part.tags[begin : begin + chunk]
        words = ragged_words(tokens)
        inputs = tagger.windows(words)
        lengths = tf.reduce_sum(inputs["input_mask"], axis=1)
        word_index = inputs["word_index"]
        sentence_start = tf.pad(tf.cumsum(words.row_lengths()), [[1, 0]])
        word = tf.gather(sentence_start, inputs["example"])[:, None] + tf.cast(
            tf.maximum(word_index, 0), tf.int64
        )
        # One id more: the positions of an empty last sentence (masked below) stay in range.
        flat_tags = tf.pad(tag_ids(tagger.tag_names, tags).flat_values, [[0, 1]])
        tag_of = tf.gather(flat_tags, word)
        code = tf.where(word_index >= 0, tag_of + FIRST_TAG, UNTAGGED)
        ids.append(tf.RaggedTensor.from_tensor(inputs["input_word_ids"], lengths=lengths))
        codes.append(tf.RaggedTensor.from_tensor(code, lengths=lengths))
    if not ids:
        none = tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), tf.zeros([0], tf.int64))
        return none, none
    return tf.concat(ids, axis=0), tf.concat(codes, axis=0)


class ValidationEntities(keras.callbacks.Callback):
    """Adds validation entity precision, recall and F1 to each epoch's logs (and so to
    ``history.json``, and to what ``--monitor`` can watch: ``val_entity_f1``)."""

    def __init__(self, tagger: EntityTagger, part: TaggedSentences, batch_size: int):
        super().__init__()
        self.tagger, self.part, self.batch_size = tagger, part, batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        predicted = self.tagger.predict_tags(self.part.tokens, batch_size=self.batch_size)
        scores = entity_scores(self.part.tags, predicted)
        for name in ("precision", "recall", "f1"):
            logs[f"val_entity_{name}"] = scores[name]
