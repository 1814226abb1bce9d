"""SentencePiece subwords in TensorFlow ops, against the `sentencepiece` library itself."""

import numpy as np
import pytest
import sentencepiece

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.subword_tokenizer import SubwordTokenizer, train_subwords

# Cased, accented, with opening and closing punctuation: what a word tokenizer loses.
SENTENCES = [
    "¿Dónde está la estación de trenes?",
    "Tom no quiere ir a París.",
    "¡Qué día tan bonito!",
    "María y José viven en Ávila.",
    "Ella dijo: «No lo sé».",
    "El niño comió una manzana.",
] * 20
UNSEEN = ["Tom vive en Ávila y no en París.", "¿Qué dijo María?"]  # words never seen


@pytest.fixture(scope="module")
def model() -> bytes:
    return train_subwords(SENTENCES, vocab_size=60)


def test_ids_are_those_of_the_sentencepiece_library(model):
    tokenizer = SubwordTokenizer(model)
    reference = sentencepiece.SentencePieceProcessor(model_proto=model)
    texts = SENTENCES[:6] + UNSEEN
    ids = tokenizer.ids(tf.constant(texts))
    assert ids.to_list() == reference.encode(texts)
    assert tokenizer.pieces(ids[0].numpy()) == reference.encode(texts[0], out_type=str)


def test_text_comes_back_with_its_case_accents_and_punctuation(model):
    tokenizer = SubwordTokenizer(model)
    texts = SENTENCES[:6] + UNSEEN
    back = tokenizer.texts(tokenizer.ids(tf.constant(texts)))
    assert [text.decode("utf-8") for text in back.numpy()] == texts


def test_reserved_ids_are_the_word_tokenizers_and_known_text_has_no_unknown_id(model):
    tokenizer = SubwordTokenizer(model)
    assert tokenizer.size == len(tokenizer.vocabulary) + 2
    assert tokenizer.pieces([0, 1, 2, 3]) == ["<pad>", "<unk>", "<s>", "</s>"]
    ids = np.concatenate(tokenizer.ids(tf.constant(SENTENCES[:6] + UNSEEN)).to_list())
    assert ids.min() > 3  # no padding, unknown, start or end inside a sentence
    # A character never seen in training is the unknown id, not dropped silently.
    assert 1 in tokenizer.ids(tf.constant(["Ω"]))[0].numpy()


def test_ids_in_a_tf_data_pipeline_equal_the_eager_ones(model):
    tokenizer = SubwordTokenizer(model)
    texts = SENTENCES[:6]
    mapped = tf.data.Dataset.from_tensor_slices(texts).batch(4).map(tokenizer.ids)
    from_pipeline = [row for batch in mapped for row in batch.to_list()]
    assert from_pipeline == tokenizer.ids(tf.constant(texts)).to_list()


def test_training_is_repeatable(model):
    assert train_subwords(SENTENCES, vocab_size=60) == model


def test_a_vocabulary_too_small_is_a_one_line_error():
    with pytest.raises(KerasformerError, match="too small; use at least 8"):
        train_subwords(SENTENCES, vocab_size=5)


def test_a_model_with_other_reserved_ids_is_refused():
    import io

    written = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES), model_writer=written, vocab_size=60, minloglevel=2
    )  # the library's defaults: <unk> 0, <s> 1, </s> 2, no padding
    with pytest.raises(KerasformerError, match="ids 0-3 as <pad>, <unk>, <s>, </s>"):
        SubwordTokenizer(written.getvalue())


def test_a_vocabulary_too_small_for_the_characters_names_the_flag():
    # 80 ids cannot hold the ~200 distinct characters (plus the reserved ids).
    texts = [
        "".join(chr(0x4E00 + i) for i in range(start, start + 20)) for start in range(0, 200, 20)
    ]
    with pytest.raises(KerasformerError, match="use a larger --vocab-size"):
        train_subwords(texts * 3, vocab_size=80)


def test_a_translator_refuses_a_word_and_a_subword_tokenizer_together(model):
    from kerasformer.models.translator import Translator

    with pytest.raises(KerasformerError, match="two tokenizers must be of one kind"):
        Translator(None, ["[UNK]", "a"], SubwordTokenizer(model), maxlen=8)
