"""Export a `SequenceTagger` as a SavedModel: raw strings in, entities with offsets out.

The export directory holds:

    saved_model.pb, variables/     the SavedModel: word splitting, model and decoding
    model.keras, tagger.json       the Keras model, vocabularies and tags, for kerasformer

``serving_default`` takes ``inputs``, a batch of strings. It splits them into words as
BERT's basic tokenizer does (`kerasformer.models.word_spans`), decodes each sentence as
the tagger does (IOB2-constrained Viterbi by default), and returns, padded per batch:
``entity_texts``, ``entity_types`` (``""``), ``entity_starts``, ``entity_ends`` (character
offsets, end exclusive, ``-1``), ``entity_scores`` (the mean probability of the entity's
tags, ``0``), ``entity_counts``, and ``words`` and ``tags`` (``""``). Serving it needs
TensorFlow only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.backend import tf
from kerasformer.export.saved_model import INPUT_NAME
from kerasformer.files.text_files import write_settings
from kerasformer.loading.keras_model import KERAS_FILE
from kerasformer.loading.tagger import SETTINGS_FILE
from kerasformer.models.iob_tags import tag_type, viterbi_tf
from kerasformer.models.sequence_tagger import (
    MAX_WORD_CHARACTERS,
    UNKNOWN_ID,
    SequenceTagger,
    padded_features,
)
from kerasformer.models.word_spans import WordSplitter


def lookup_table(keys, key_dtype) -> tf.lookup.StaticHashTable:
    """Key ``i`` to id ``i + 2`` (0 pads, 1 is unknown); unknown keys to 1."""
    values = tf.range(2, len(keys) + 2, dtype=tf.int64)
    initializer = tf.lookup.KeyValueTensorInitializer(tf.constant(keys, key_dtype), values)
    return tf.lookup.StaticHashTable(initializer, default_value=UNKNOWN_ID)


class TaggerServing(tf.Module):
    """The model, its vocabularies and tags, and the string-in signature."""

    def __init__(self, tagger: SequenceTagger):
        super().__init__(name="tagger_serving")
        self.model = tagger.model
        self.splitter = WordSplitter()
        self.words = lookup_table(tagger.words or [""], tf.string)
        self.characters = lookup_table(
            np.array([ord(c) for c in tagger.characters] or [0], np.int64), tf.int64
        )
        self.constrained = tagger.decoding == "constrained"
        names = tagger.tag_names
        self.tag_names = tf.constant(names)
        self.types = tf.constant([tag_type(tag) or "" for tag in names])
        self.inside = tf.constant([tag.startswith("I-") for tag in names])
        self.start = tf.constant(tagger.start)
        self.transitions = tf.constant(tagger.transitions)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def serve(self, inputs):
        words, codes, starts, ends = self.splitter(inputs)
        word_ids = tf.ragged.map_flat_values(
            self.words.lookup, tf.strings.lower(words, encoding="utf-8")
        )
        codes = codes.with_values(codes.values[:, :MAX_WORD_CHARACTERS])
        char_ids = tf.ragged.map_flat_values(self.characters.lookup, codes)
        features = {
            "word_ids": tf.cast(word_ids, tf.int32),
            "char_ids": tf.cast(char_ids, tf.int32),
        }
        lengths = words.row_lengths()
        longest = tf.cast(tf.reduce_max(tf.concat([lengths, [0]], axis=0)), tf.int32)
        logits = self.model(padded_features(features), training=False)[:, :longest]
        probs = tf.nn.softmax(tf.cast(logits, tf.float32))
        if self.constrained:
            best = viterbi_tf(tf.math.log(tf.maximum(probs, 1e-12)), lengths, self.start,
                              self.transitions)  # fmt: skip
        else:
            best = tf.argmax(probs, axis=-1, output_type=tf.int32)
        chosen = tf.gather(probs, best, batch_dims=2)
        best = tf.RaggedTensor.from_tensor(best, lengths=lengths)
        chosen = tf.RaggedTensor.from_tensor(chosen, lengths=lengths)
        entities = self.entities(inputs, best, chosen, starts, ends)
        return {
            **entities,
            "words": words.to_tensor(""),
            "tags": tf.gather(self.tag_names, best).to_tensor(""),
        }

    def entities(self, inputs, best, chosen, starts, ends) -> dict:
        """Each text's entities, read from its tags as `entity_spans` reads them."""
        tags, rows = best.flat_values, best.value_rowids()
        kinds = tf.gather(self.types, tags)
        first = tf.equal(tf.ragged.range(best.row_lengths()).flat_values, 0)
        previous = tf.roll(kinds, 1, axis=0)
        continues = tf.gather(self.inside, tags) & ~first & tf.equal(previous, kinds)
        named = tf.not_equal(kinds, "")
        begins = named & ~continues
        entity_of = tf.boolean_mask(tf.cumsum(tf.cast(begins, tf.int64)) - 1, named)
        count = tf.reduce_sum(tf.cast(begins, tf.int64))
        entity_rows = tf.boolean_mask(rows, begins)
        start = tf.boolean_mask(starts.flat_values, begins)
        end = tf.math.unsorted_segment_max(
            tf.boolean_mask(ends.flat_values, named), entity_of, count
        )
        score = tf.math.unsorted_segment_mean(tf.boolean_mask(chosen.flat_values, named),
                                              entity_of, count)  # fmt: skip
        text = tf.strings.substr(tf.gather(inputs, entity_rows), start, end - start,
                                 unit="UTF8_CHAR")  # fmt: skip
        batch = tf.shape(inputs, out_type=tf.int64)[0]

        def padded(values, pad):
            per_text = tf.RaggedTensor.from_value_rowids(values, entity_rows, nrows=batch)
            return per_text.to_tensor(pad)

        return {
            "entity_texts": padded(text, ""),
            "entity_types": padded(tf.boolean_mask(kinds, begins), ""),
            "entity_starts": padded(start, -1),
            "entity_ends": padded(end, -1),
            "entity_scores": padded(score, 0.0),
            "entity_counts": tf.math.bincount(
                tf.cast(entity_rows, tf.int32), minlength=tf.cast(batch, tf.int32),
                maxlength=tf.cast(batch, tf.int32), dtype=tf.int64,
            ),
        }  # fmt: skip


def write_tagger(tagger: SequenceTagger, directory: Path) -> None:
    """Write the SavedModel, ``model.keras`` and ``tagger.json`` into ``directory``."""
    directory = Path(directory)
    serving = TaggerServing(tagger)
    tf.saved_model.save(serving, str(directory), signatures={"serving_default": serving.serve})
    tagger.model.save(directory / KERAS_FILE)
    write_settings(
        directory / SETTINGS_FILE,
        {
            "model": tagger.model.name,
            "tag_names": list(tagger.tag_names),
            "decoding": tagger.decoding,
            "words": tagger.words,
            "characters": tagger.characters,
        },
    )
