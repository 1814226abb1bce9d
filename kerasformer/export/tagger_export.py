"""Export an `EntityTagger` as a SavedModel: raw strings in, entities with offsets out.

The export directory holds:

    saved_model.pb, variables/     the SavedModel: word splitting, model and decoding
                   (assets/)       (a BERT tagger's word-piece vocabulary)
    model.keras, tagger.json       the Keras model, vocabularies and tags, for kerasformer

``serving_default`` takes ``inputs``, a batch of strings. It splits them into words as
BERT's basic tokenizer does (`kerasformer.models.word_spans`), decodes each sentence as
the tagger does (IOB2-constrained Viterbi by default), and returns, padded per batch:
``entity_texts``, ``entity_types`` (``""``), ``entity_starts``, ``entity_ends`` (character
offsets, end exclusive, ``-1``), ``entity_scores`` (the mean probability of the entity's
tags, ``0``), ``entity_counts``, and ``words`` and ``tags`` (``""``). Serving a
from-scratch tagger needs TensorFlow only; a BERT tagger needs ``import tensorflow_text``
too (its tokeniser's ops).
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import tf
from kerasformer.export.saved_model_files import INPUT_NAME, write_saved_model
from kerasformer.files.text_files import write_settings
from kerasformer.loading.tagger import SETTINGS_FILE
from kerasformer.models.entity_tagger import EntityTagger
from kerasformer.models.iob_tags import tag_type, viterbi_tf
from kerasformer.models.word_splitter import WordSplitter


class TaggerServing(tf.Module):
    """The tagger's reader (its model and vocabularies), its tags and the string-in signature."""

    def __init__(self, tagger: EntityTagger):
        super().__init__(name="tagger_serving")
        self.reader = tagger.serving_reader()
        self.splitter = WordSplitter()
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
        lengths = words.row_lengths()
        probs = self.reader(words, codes)
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


def write_tagger(tagger: EntityTagger, directory: Path) -> None:
    """Write the SavedModel, ``model.keras`` and ``tagger.json`` into ``directory``."""
    directory = Path(directory)
    serving = TaggerServing(tagger)
    write_saved_model(directory, serving, {"serving_default": serving.serve}, tagger.model)
    write_settings(directory / SETTINGS_FILE, {"model": tagger.model.name, **tagger.settings()})
