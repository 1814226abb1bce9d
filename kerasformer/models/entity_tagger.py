"""What every named-entity tagger does once it has each word's tag probabilities.

A tagger (`SequenceTagger` from scratch, `BertTagger` over a pretrained encoder) says
how likely each tag is for each word of a sentence; `EntityTagger` decodes those
probabilities into tags (IOB2-constrained Viterbi or argmax), reads entities from the
tags and tags raw text, with character offsets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models import defaults
from kerasformer.models.iob_tags import allowed_transitions, entity_spans, tag_type, viterbi
from kerasformer.models.served_words import first_piece_tags, word_pieces
from kerasformer.models.word_spans import split_words

DECODINGS = defaults.DECODINGS


class EntityTagger:
    """Tag names, a decoding, and the tagging of words and raw text built on them.

    Subclasses give `probabilities` (Python, tokenised sentences in) and
    `serving_reader` (TensorFlow, for the SavedModel); both read words the same way.

    Args:
        tag_names: The tags, in the model's output order (``O``, ``B-PER``, ``I-PER``...).
        decoding: ``"constrained"`` (the default: IOB2 Viterbi, which never starts an
            entity with ``I-``) or ``"argmax"`` (each word's most likely tag on its own).

    Raises:
        KerasformerError: ``decoding`` is neither of those.

    Examples:
        >>> tagger = EntityTagger(["O", "B-PER", "I-PER"])
        >>> tagger.entity_types()
        ('PER',)
        >>> probabilities = np.array([[0.1, 0.2, 0.7], [0.1, 0.1, 0.8]])  # (words, tags)
        >>> tagger.decode(probabilities), tagger.decode(probabilities, "argmax")
        (['B-PER', 'I-PER'], ['I-PER', 'I-PER'])
    """

    # The pretrained encoder layer whose ``trainable`` the recipes switch; None from scratch.
    encoder = None

    def __init__(self, tag_names: Sequence[str], decoding: str = "constrained"):
        if decoding not in DECODINGS:
            raise KerasformerError(f"decoding {decoding!r} is not one of: {', '.join(DECODINGS)}.")
        self.tag_names = tuple(tag_names)
        self.decoding = decoding
        self.start, self.transitions = allowed_transitions(self.tag_names)

    def probabilities(self, sentences, batch_size: int = 64) -> list[np.ndarray]:
        """Each tokenised sentence's ``(words, tags)`` tag probabilities."""
        raise NotImplementedError

    def serving_reader(self) -> tf.Module:
        """A module called on ragged ``words`` ``(batch, None)`` and their code points
        ``(batch, None, None)`` that returns ``(batch, longest, tags)`` probabilities."""
        raise NotImplementedError

    def word_id_model(self):
        """The Keras model on int ids (``word_ids``, ``char_ids``) that LiteRT can run."""
        raise KerasformerError(
            "a BERT tagger reads word pieces made by TF Text ops, which LiteRT lacks; "
            "only from-scratch taggers (--model rnn or transformer) export to LiteRT."
        )

    def settings(self) -> dict:
        """What `kerasformer.loading.tagger.load_tagger` needs besides the Keras model."""
        return {"tag_names": list(self.tag_names), "decoding": self.decoding}

    def entity_types(self) -> tuple[str, ...]:
        """The entity types its tags name (``PER`` of ``B-PER``), sorted."""
        return tuple(sorted({tag_type(tag) for tag in self.tag_names} - {None}))

    def decode(self, probs: np.ndarray, decoding: str | None = None) -> list[str]:
        if (decoding or self.decoding) == "argmax":
            best = probs.argmax(axis=-1)
        else:
            best = viterbi(np.log(np.maximum(probs, 1e-12)), self.start, self.transitions)
        return [self.tag_names[i] for i in best]

    def predict_tags(self, sentences, decoding: str | None = None, batch_size: int = 64):
        """A tag for each word of each tokenised sentence.

        The tagger reads each sentence as its export reads the sentence's words joined by
        spaces (``U.S.`` as ``U . S .``, see `kerasformer.models.served_words`); each
        word gets its first piece's tag.
        """
        if isinstance(sentences, str | bytes) or any(isinstance(s, str | bytes) for s in sentences):
            raise KerasformerError(
                "predict_tags takes tokenised sentences, lists of words (e.g. [['EU', "
                "'rejects']]); for raw text use tag([text])."
            )
        split = [word_pieces(words) for words in sentences]
        probs = self.probabilities([pieces for pieces, _ in split], batch_size)
        return [
            first_piece_tags(self.decode(p, decoding) if len(p) else [], counts)
            for p, (_, counts) in zip(probs, split, strict=True)
        ]

    def tag(self, texts: Sequence[str], batch_size: int = 64) -> list[dict]:
        """Words, tags and entities (with character offsets and scores) of raw texts."""
        if isinstance(texts, str | bytes):
            raise KerasformerError("pass a list of texts, e.g. [text], not a single string.")
        spans = [split_words(text) for text in texts]
        probs = self.probabilities([[w for w, _, _ in s] for s in spans], batch_size)
        records = []
        for text, words, p in zip(texts, spans, probs, strict=True):
            tags = self.decode(p) if words else []
            chosen = [p[i, self.tag_names.index(tag)] for i, tag in enumerate(tags)]
            entities = [
                {
                    "text": text[words[first][1] : words[last - 1][2]],
                    "type": kind,
                    "start": words[first][1],
                    "end": words[last - 1][2],
                    "score": float(np.mean(chosen[first:last])),
                }
                for kind, first, last in entity_spans(tags)
            ]
            records.append({"words": [w for w, _, _ in words], "tags": tags, "entities": entities})
        return records
