"""A string-in classifier and what its preprocessor lets the trainer, evaluation and export do.

As KerasHub's ``Task`` owns its ``preprocessor``: the family of a classifier (a
from-scratch transformer with its ``TextVectorization``, or a BERT with its TF-Hub
preprocess model and encoder) answers how to run it fast on strings, how to train it on
token ids made once, how to count the words it knows, which layer is its pretrained
encoder, and what its attention is. Nothing else looks inside a classifier.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models.attention_maps import AttentionMap
from kerasformer.models.bert_classifier import (
    PackedBertClassifier,
    bert_attention_maps,
    bert_classifier_on_encoder_inputs,
    bert_preprocess_layer,
    build_bert_classifier,
    encoder_layer,
)
from kerasformer.models.bert_packing import BertInputPacker
from kerasformer.models.transformer_classifier import (
    adapt_vectorizer,
    attention_map,
    build_transformer_classifier,
    drop_padding_columns,
    padding_free_classifier,
    text_vectorizer,
    token_id_classifier,
)

# BERT spends far more per token than the from-scratch model, so its buckets are narrow:
# on AG News, 8-token buckets pack 56 positions per text of 53 tokens, buckets growing
# by half 63.
BERT_BUCKET_WIDTH = 8
# TextVectorization's fixed ids: 0 pads, 1 stands for every out-of-vocabulary word.
OOV_ID = 1
# BERT word pieces that stand for no word of the text.
BERT_NON_WORDS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
BERT_SPECIAL_IDS = ("padding_id", "start_of_sequence_id", "end_of_segment_id")


@dataclass(frozen=True)
class TokenReader:
    """How a classifier is trained on token ids made once instead of strings.

    ``tokenize`` turns a batch of strings into ragged ids; ``pack`` (if any) turns a
    padded batch of them into what ``model`` reads; ``max_length`` bounds the ids.
    """

    tokenize: Callable[[tf.Tensor], tf.RaggedTensor]
    model: keras.Model
    max_length: int
    pack: Callable | None = None
    bucket_width: int | None = None


@dataclass(frozen=True)
class WordIdModel:
    """A classifier after its vectorizer, with what makes its ids, for runtimes that have
    no string ops (LiteRT): ``model`` maps int64 ids ``(batch, words)`` to probabilities,
    ``vocabulary`` is the vectorizer's (id ``i`` is word ``i``), ``max_length`` its maxlen."""

    model: keras.Model
    vocabulary: list[str]
    max_length: int


class TextClassifier:
    """A Keras classifier from raw strings to class probabilities, by family.

    This base class runs any string-in Keras model as it is; `TextClassifier.of` gives
    a model its family's subclass (the from-scratch transformer's, or BERT's).

    Args:
        model: The string-in Keras model.
        threshold: A multi-label classifier's (sigmoid outputs): the probability over
            which a class is predicted, chosen on validation; None for one class per text.

    Examples:
        >>> model = build_transformer_classifier(4, maxlen=16, embed_dim=8, ff_dim=8)
        >>> adapt_vectorizer(model, ["stocks rose", "the team won the cup"])
        >>> classifier = TextClassifier.of(model)
        >>> classifier.family
        'transformer'
        >>> classifier.string_function()(tf.constant(["stocks rose"])).shape
        TensorShape([1, 4])
    """

    family = "keras"

    def __init__(self, model: keras.Model, threshold: float | None = None):
        self.model = model
        self.threshold = threshold

    def __call__(self, *args, **kwargs):
        """The Keras model's call: strings in, probabilities out."""
        return self.model(*args, **kwargs)

    @staticmethod
    def of(model: keras.Model) -> TextClassifier:
        """The family of a classifier that comes as a bare Keras model.

        Models built by `kerasformer.models.build_text_classifier` come with theirs;
        this is the one place that tells one from its parts (a Keras model, from a
        ``model.keras`` file or the user's code, carries no other mark).
        """
        if isinstance(model, TextClassifier):
            return model
        if bert_preprocess_layer(model) is not None:
            return BertTextClassifier(model)
        vectorizer = keras.layers.TextVectorization
        if any(isinstance(layer, vectorizer) for layer in model.layers):
            return TransformerTextClassifier(model)
        return TextClassifier(model)

    @property
    def encoder(self) -> keras.layers.Layer | None:
        """The pretrained encoder whose ``trainable`` recipes switch, if it has one."""
        return None

    def string_function(self) -> Callable[[tf.Tensor], tf.Tensor]:
        """The fastest way to run the model on a batch of strings, with the same results."""
        return self.model

    def counting_function(self) -> Callable:
        """A function from strings to (probabilities, known tokens per text)."""
        raise ValueError(
            f"cannot export model {self.model.name!r}: it has neither a TextVectorization "
            "layer nor a BERT preprocess layer (output 'input_word_ids') to tell which "
            "words it knows; build it with kerasformer.models.build_classifier."
        )

    def length_measure(self) -> tuple[int | None, Callable[[list[str]], list[int]] | None]:
        """The most tokens the model reads of a text (None: no limit known), and a function
        counting each text's tokens as it reads them (None: whitespace words)."""
        return None, None

    def token_reader(self) -> TokenReader:
        raise KerasformerError(
            f"model {self.model.name!r} reads strings only; train it with --input-pipeline strings."
        )

    def word_id_model(self) -> WordIdModel:
        raise KerasformerError(
            f"model {self.model.name!r} reads strings with TensorFlow ops that LiteRT lacks "
            "(a BERT preprocess model's tokenizer, or its own); only from-scratch "
            "classifiers (--model transformer) export to LiteRT."
        )

    def attention_maps(self, text: str, second: str | None = None) -> list[AttentionMap]:
        require_one_text(second)
        raise KerasformerError(
            f"model {self.model.name!r} has no kerasformer TransformerBlock layers to show "
            "attention for; use a model trained with --model transformer."
        )


class TransformerTextClassifier(TextClassifier):
    """A from-scratch classifier that reads words through its own ``TextVectorization``."""

    family = "transformer"

    def string_function(self):
        return padding_free_classifier(self.model)

    def counting_function(self):
        vectorizer, on_ids = text_vectorizer(self.model), token_id_classifier(self.model)

        def classify(texts):
            ids = drop_padding_columns(vectorizer(texts))
            known_tokens = tf.reduce_sum(tf.cast(ids > OOV_ID, tf.int32), axis=-1)
            probabilities = on_ids(ids, training=False)
            return probabilities, known_tokens

        return classify

    def length_measure(self):
        """Up to ``maxlen`` words (as the vectorizer splits them, near enough whitespace's)."""
        return text_vectorizer(self.model).get_config()["output_sequence_length"], None

    def token_reader(self) -> TokenReader:
        vectorizer = text_vectorizer(self.model)
        maxlen = vectorizer.get_config()["output_sequence_length"]
        return TokenReader(vectorizer, token_id_classifier(self.model), maxlen)

    def word_id_model(self) -> WordIdModel:
        vectorizer = text_vectorizer(self.model)
        config = vectorizer.get_config()
        # The ids LiteRT's runner makes in Python follow the default standardisation.
        if (config["standardize"], config["split"], config["ngrams"]) != (
            "lower_and_strip_punctuation",
            "whitespace",
            None,
        ):
            raise KerasformerError(
                f"model {self.model.name!r} has a TextVectorization with its own "
                "standardize/split/ngrams, which the LiteRT runner does not reproduce; "
                "build it with kerasformer.models.build_classifier."
            )
        return WordIdModel(
            token_id_classifier(self.model), vectorizer.get_vocabulary(),
            config["output_sequence_length"],
        )  # fmt: skip

    @classmethod
    def build(cls, num_classes: int, train_texts: Iterable[str], **options):
        """`build_transformer_classifier`, its vocabulary adapted to ``train_texts``."""
        model = build_transformer_classifier(num_classes, **options)
        adapt_vectorizer(model, train_texts)
        return cls(model)

    def attention_maps(self, text, second=None):
        require_one_text(second)
        return [attention_map(self.model, text)]


class BertTextClassifier(TextClassifier):
    """A classifier around a TF-Hub BERT preprocess model and encoder."""

    family = "bert"

    @classmethod
    def build(cls, num_classes: int, train_texts: Iterable[str], **options):
        """`build_bert_classifier`; the preprocess model brings its own vocabulary."""
        del train_texts
        return cls(build_bert_classifier(num_classes, **options))

    @property
    def preprocess(self) -> keras.layers.Layer:
        return bert_preprocess_layer(self.model)

    @property
    def encoder(self):
        return encoder_layer(self.model)

    def string_function(self):
        return PackedBertClassifier(self.model)

    def counting_function(self):
        packed = PackedBertClassifier(self.model)
        non_words = sorted(bert_non_word_ids(self.preprocess))

        def classify(texts):
            probabilities, pieces = packed.probabilities_and_pieces(texts)
            is_non_word = tf.reduce_any(
                pieces.flat_values[:, None] == tf.constant(non_words, pieces.dtype), axis=-1
            )
            known = pieces.with_flat_values(tf.cast(tf.logical_not(is_non_word), tf.int32))
            return probabilities, tf.reduce_sum(known, axis=-1)

        return classify

    def length_measure(self):
        """Up to the preprocess model's sequence length in word pieces, [CLS] and [SEP] in."""
        packer = BertInputPacker(self.preprocess)
        return packer.max_seq_length, packer.piece_counts

    def token_reader(self) -> TokenReader:
        """Word pieces tokenised once, packed per batch.

        ``padded`` packs every batch to the preprocess model's sequence length, as the
        string-in model does; ``dynamic`` and ``bucketed`` only to the batch's longest
        text (under XLA, ``bucketed`` to its bucket's limit).
        """
        packer = BertInputPacker(self.preprocess)
        packer.require_padding_id_zero()
        return TokenReader(
            packer.padded_word_pieces,
            bert_classifier_on_encoder_inputs(self.model),
            packer.max_pieces,
            pack=packer.pack_padded,
            bucket_width=BERT_BUCKET_WIDTH,
        )

    def attention_maps(self, text, second=None):
        return bert_attention_maps(self.model, text, second)


def require_one_text(second: str | None) -> None:
    if second is not None:
        raise KerasformerError(
            "a second text is for BERT models, which read sentence pairs; this classifier "
            "reads one text."
        )


def bert_non_word_ids(preprocess: keras.layers.Layer) -> set[int]:
    """Ids of [PAD], [CLS], [SEP] (from the tokenizer) and [UNK] (from its vocab file).

    The preprocess model's ``tokenize.get_special_tokens_dict`` has no unknown-token
    id, so that one is looked up by name in ``assets/vocab.txt`` of its handle.
    """
    import tensorflow_hub as hub

    special = preprocess.resolved_object.tokenize.get_special_tokens_dict()
    ids = {int(special[key]) for key in BERT_SPECIAL_IDS}
    vocab_file = Path(hub.resolve(preprocess.get_config()["handle"])) / "assets/vocab.txt"
    if vocab_file.is_file():
        vocab = vocab_file.read_text(encoding="utf-8").splitlines()
        ids |= {i for i, piece in enumerate(vocab) if piece.strip() in BERT_NON_WORDS}
    return ids
