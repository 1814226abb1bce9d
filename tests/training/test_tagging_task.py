"""The NER task: every tagger learns a tagging that needs context, through `train`."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.data import context_ner_sentences, synthetic_ner_sentences, write_conll

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

TINY = {
    "rnn": {"embed_dim": 16, "units": 16},
    "transformer": {"embed_dim": 16, "num_heads": 2, "ff_dim": 32, "num_layers": 1},
}


def context_options(model: str, tiny_ner_bert) -> dict:
    if model != "bert":
        return TINY[model]
    # Windows of 8 tokens: most sentences are cut, so the stride is exercised too.
    return {"preprocess": str(tiny_ner_bert.preprocess), "encoder": str(tiny_ner_bert.encoder),
            "seq_length": 8, "doc_stride": 3}  # fmt: skip


@pytest.mark.parametrize("model", ["rnn", "transformer", "bert"])
def test_each_tagger_tells_the_same_word_apart_by_its_neighbour(model, tiny_ner_bert, tmp_path):
    from kerasformer.training import TrainingConfig, train

    train_file = write_conll(tmp_path / "train.txt", context_ner_sentences(200, seed=0))
    test_file = write_conll(tmp_path / "test.txt", context_ner_sentences(40, seed=1))
    config = TrainingConfig(
        task="ner", model=model, train_file=str(train_file), test_file=str(test_file),
        epochs=30 if model == "bert" else 12, batch_size=16, learning_rate=0.01,
        fine_tune_learning_rate=3e-3, seed=0,
        model_options=context_options(model, tiny_ner_bert),
    )  # fmt: skip
    tagger = train(config, export=False, verbose=0).model
    held_out = context_ner_sentences(60, seed=2)
    predicted = tagger.predict_tags([words for words, _ in held_out], decoding="argmax")
    at_jordan = [
        (tags[words.index("Jordan")], guess[words.index("Jordan")])
        for (words, tags), guess in zip(held_out, predicted, strict=True)
    ]
    right = np.mean([true == guess for true, guess in at_jordan])
    # Both readings are common; a tagger blind to the neighbour is right about half the time.
    assert {true for true, _ in at_jordan} == {"B-PER", "B-LOC"}
    assert right >= 0.95, at_jordan


@pytest.mark.parametrize(
    "recipe,encoder_moves", [("frozen", False), ("frozen-then-unfrozen", True)]
)
def test_the_bert_recipes_freeze_the_encoder_or_not(recipe, encoder_moves, tiny_ner_bert, tmp_path):
    from kerasformer.models.bert_tagger import build_bert_tagger
    from kerasformer.training import TrainingConfig, train

    train_file = write_conll(tmp_path / "train.txt", context_ner_sentences(48, seed=0))
    config = TrainingConfig(
        task="ner", model="bert", train_file=str(train_file), recipe=recipe, epochs=2,
        frozen_epochs=1, batch_size=16, learning_rate=0.01, fine_tune_learning_rate=1e-3,
        model_options=context_options("bert", tiny_ner_bert),
    )  # fmt: skip
    tagger = train(config, export=False, verbose=0).model
    pretrained = build_bert_tagger(len(tagger.tag_names), str(tiny_ner_bert.encoder))

    def weights(model, layer):
        return [w.numpy() for w in model.get_layer(layer).weights]

    moved = [
        not np.allclose(after, before)
        for after, before in zip(weights(tagger.model, "encoder"),
                                 weights(pretrained, "encoder"), strict=True)
    ]  # fmt: skip
    assert any(moved) == encoder_moves
    # The head trains in every recipe: its bias starts at zeros.
    assert np.any(tagger.model.get_layer("tag_logits").bias.numpy() != 0)


def test_bert_windows_carry_each_word_tag_at_its_first_piece_only(minilm_preprocess):
    from kerasformer.backend import tf
    from kerasformer.convert.convert_bert import default_bert_checkpoint_dir
    from kerasformer.datasets.tagged_sentences import TaggedSentences
    from kerasformer.models.bert_tagger import BertTagger
    from kerasformer.training.tasks.tagging import window_batches, window_examples
    from tests.helpers.bert import reference_pieces

    vocabulary = {
        word: i
        for i, word in enumerate((default_bert_checkpoint_dir() / "vocab.txt").read_text().split())
    }
    tag_names = ("O", "B-PER", "I-PER", "B-LOC")
    # Chunks of two sentences: an empty sentence ends one, and the long one is cut.
    sentences = [
        (["Zoë", "Müller"], ["B-PER", "I-PER"]),
        ([], []),
        (["in", "Ouagadougou", "Kraftfahrzeughaftpflichtversicherung", "Paris", "."],
         ["O", "B-LOC", "O", "B-LOC", "O"]),
        (["Hi"], ["O"]),
    ]  # fmt: skip
    part = TaggedSentences.of([w for w, _ in sentences], [t for _, t in sentences])
    tagger = BertTagger(None, minilm_preprocess, tag_names, seq_length=8, doc_stride=3)
    ids, codes = window_examples(tagger, part, chunk=2)
    room, stride, row = 6, 3, 0
    for words, tags in sentences:
        pieces, expected = [], []
        for word, tag in zip(words, tags, strict=True):
            word_pieces = reference_pieces(word, vocabulary)
            pieces += word_pieces
            expected += [2 + tag_names.index(tag)] + [1] * (len(word_pieces) - 1)
        for first in range(0, 1 + max(len(pieces) - room, 0) + stride - 1, stride):
            window_ids = [vocabulary["[CLS]"], *pieces[first : first + room], vocabulary["[SEP]"]]
            assert ids[row].numpy().tolist() == window_ids
            assert codes[row].numpy().tolist() == [1, *expected[first : first + room], 1]
            row += 1
    assert row == ids.nrows()
    # Batched: the loss's labels are the tags, weighing 1 at first pieces and 0 elsewhere.
    for inputs, labels, weights in window_batches(tagger, part, 3, None):
        mask = inputs["input_mask"].numpy()
        assert ((weights.numpy() > 0) <= (mask > 0)).all()
        assert (labels.numpy()[weights.numpy() == 0] == 0).all()
    empty = window_examples(tagger, TaggedSentences.of([], []))
    assert [tensor.nrows() for tensor in empty] == [0, 0]
    assert tf.is_tensor(empty[0].flat_values)


# Names as CoNLL-2003 writes them, whole, with the punctuation inside them.
DOTTED_PEOPLE = ("O'Neil", "J.R. Smith", "Mary-Ann Lee", "Ada")
DOTTED_PLACES = ("U.S.", "St.-Denis", "U.K.", "Bonn")
DOTTED_TEMPLATES = ("{PER} visited {LOC} .", "In {LOC} , {PER} 's team won 6-2 .",
                    "{PER} flew to {LOC} on 1996-08-31 .")  # fmt: skip


def dotted_sentences(count: int, seed: int) -> list[tuple[list[str], list[str]]]:
    return synthetic_ner_sentences(count, seed, DOTTED_TEMPLATES, DOTTED_PEOPLE, DOTTED_PLACES)


def gold_offsets(words, tags) -> set[tuple[int, int, str]]:
    """``(start, end, type)`` of each IOB2 entity in ``" ".join(words)``."""
    entities, at = [], 0
    for word, tag in zip(words, tags, strict=True):
        if tag.startswith("B-"):
            entities.append([at, at + len(word), tag[2:]])
        elif tag.startswith("I-"):
            entities[-1][1] = at + len(word)
        at += len(word) + 1
    return {tuple(entity) for entity in entities}


def test_a_tagger_trains_on_the_words_its_export_reads_in_raw_text(tmp_path):
    """CoNLL keeps ``U.S.`` whole; the export reads raw text as ``U . S .``. Trained on
    CoNLL's words, the export found none of those names in raw text."""
    from kerasformer.backend import tf
    from kerasformer.training import TrainingConfig, train

    train_file = write_conll(tmp_path / "train.txt", dotted_sentences(160, seed=0))
    config = TrainingConfig(
        task="ner", model="rnn", train_file=str(train_file), epochs=10, batch_size=16,
        learning_rate=0.01, seed=0, model_options=TINY["rnn"],
        export_dir=str(tmp_path / "tagger"),
    )  # fmt: skip
    result = train(config, verbose=0)
    trained_words = {word for words in result.data.splits["train"].tokens for word in words}
    assert {"U", "S", "K", "Neil", "'", "-", "1996"} <= trained_words
    assert not {"U.S.", "O'Neil", "'s", "1996-08-31"} & trained_words

    held_out = dotted_sentences(40, seed=1)
    texts = [" ".join(words) for words, _ in held_out]
    serve = tf.saved_model.load(config.export_dir).signatures["serving_default"]
    out = serve(inputs=tf.constant(texts))
    right = total = 0
    for row, (words, tags) in enumerate(held_out):
        gold = gold_offsets(words, tags)
        count = int(out["entity_counts"][row])
        found = {
            (int(out["entity_starts"][row, i]), int(out["entity_ends"][row, i]),
             out["entity_types"][row, i].numpy().decode())
            for i in range(count)
        }  # fmt: skip
        texts_found = [out["entity_texts"][row, i].numpy().decode() for i in range(count)]
        assert texts_found == [texts[row][start:end] for start, end, _ in sorted(found)]
        right, total = right + len(gold & found), total + len(gold)
    assert right / total >= 0.95, (right, total)
    # The file's own words (predict_tags, each word its first piece's tag) agree.
    predicted = result.model.predict_tags([words for words, _ in held_out])
    assert np.mean([p == t for (_, t), p in zip(held_out, predicted, strict=True)]) >= 0.95
