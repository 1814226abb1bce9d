"""Training translators end to end on a task that only a working model can learn.

Each source is a string of random digits written as words ("3 1 4 1 5"), its target the
same digits reversed. Reversing needs cross-attention over every source position, the
decoder's causal mask (teacher forcing with a leaking mask learns to copy the next
target token and then fails at greedy decoding) and, for greedy decoding, a correct
key/value cache. Held-out strings never occur in training, so they cannot be memorised.
"""

import json
import math

import numpy as np
import pytest
import sacrebleu

from kerasformer.backend import tf
from kerasformer.datasets.sentence_pairs import SentencePairs, TranslationData
from kerasformer.models.translator import Translator
from kerasformer.training import TrainingConfig, train
from tests.helpers.data import reversal_pairs
from tests.helpers.processes import run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

HELD_OUT = 100  # validation and test pairs each
TRAIN_PAIRS = 2000
# Seed 0: validation token accuracy is 1.0 from epoch 3 (transformer) or 4 (RNN) on.
EPOCHS = 5
# Measured on 2 CPU cores: the transformer trains in ~23 s (plus ~15 s of export), the RNN
# in ~28 s; the file takes 70-100 s depending on what else runs.
TRANSFORMER_OPTIONS = dict(
    vocab_size=20, maxlen=12, embed_dim=32, num_heads=2, ff_dim=64, num_layers=1, dropout=0.0
)
RNN_OPTIONS = dict(vocab_size=20, maxlen=12, embed_dim=32, units=64, dropout=0.0)


def digit_strings(count: int, rng: np.random.Generator, exclude: set[str]) -> list[str]:
    """``count`` distinct strings of 3 to 6 digits, none of them in ``exclude``."""
    chosen: list[str] = []
    while len(chosen) < count:
        text = " ".join(str(d) for d in rng.integers(0, 10, rng.integers(3, 7)))
        if text not in exclude:
            exclude.add(text)
            chosen.append(text)
    return chosen


@pytest.fixture(scope="module")
def digit_data() -> TranslationData:
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    test = digit_strings(HELD_OUT, rng, seen)
    validation = digit_strings(HELD_OUT, rng, seen)
    train_sources = digit_strings(TRAIN_PAIRS, rng, seen)
    splits = {
        "train": reversal_pairs(train_sources),
        "validation": reversal_pairs(validation),
        "test": reversal_pairs(test),
    }
    return TranslationData("reversed_digits", "digits", "reversed digits", splits)


def train_translator(model, options, data, export_dir=None):
    config = TrainingConfig(
        task="translation", model=model, dataset="spa_eng", epochs=EPOCHS, batch_size=64,
        learning_rate=3e-3, model_options=options,
        export_dir=None if export_dir is None else str(export_dir),
    )  # fmt: skip
    return train(config, export=export_dir is not None, verbose=0, data=data)


@pytest.fixture(scope="module")
def trained_transformer(digit_data, tmp_path_factory):
    export_dir = tmp_path_factory.mktemp("digits") / "transformer"
    return train_translator("transformer", TRANSFORMER_OPTIONS, digit_data, export_dir)


@pytest.fixture(scope="module")
def trained_rnn(digit_data):
    return train_translator("rnn", RNN_OPTIONS, digit_data)


def exact_share(translations, references) -> float:
    return float(
        np.mean([got == wanted for got, wanted in zip(translations, references, strict=True)])
    )


def test_transformer_reverses_held_out_digit_strings(trained_transformer, digit_data):
    test = digit_data.splits["test"]
    translator = trained_transformer.model
    assert isinstance(translator, Translator)
    translations = translator.translate(list(test.sources))
    assert exact_share(translations, test.targets) >= 0.9, translations[:5]


def test_transformer_cached_and_uncached_greedy_decoding_agree(trained_transformer, digit_data):
    """The key/value cache is an optimisation: decoding without it gives the same words."""
    cached = trained_transformer.model
    uncached = Translator(
        cached.model, cached.source_vocabulary, cached.target_vocabulary, cached.maxlen,
        cached=False,
    )  # fmt: skip
    sources = list(digit_data.splits["test"].sources[:40])
    assert uncached.translate(sources) == cached.translate(sources)


def test_rnn_reverses_held_out_digit_strings(trained_rnn, digit_data):
    test = digit_data.splits["test"]
    translations = trained_rnn.model.translate(list(test.sources))
    assert exact_share(translations, test.targets) >= 0.9, translations[:5]


@pytest.mark.parametrize("split", ["validation", "test"])
def test_bleu_and_chrf_are_sacrebleus_scores_of_the_greedy_translations(
    trained_rnn, digit_data, split
):
    part = digit_data.splits[split]
    translations = trained_rnn.model.translate(list(part.sources))
    references = [list(part.targets)]
    scores = trained_rnn.metrics[split]
    assert scores["bleu"] == pytest.approx(
        sacrebleu.corpus_bleu(translations, references).score, abs=1e-9
    )
    assert scores["bleu_lowercase"] == pytest.approx(
        sacrebleu.corpus_bleu(translations, references, lowercase=True).score, abs=1e-9
    )
    assert scores["chrf"] == pytest.approx(
        sacrebleu.corpus_chrf(translations, references).score, abs=1e-9
    )
    # Copying the source is right only for palindromes: a model must beat it.
    copied = sacrebleu.corpus_bleu(list(part.sources), references).score
    assert scores["bleu"] > copied + 30


def teacher_forced_token_accuracy(translator: Translator, part: SentencePairs) -> float:
    """Share of target tokens (``[end]`` included, padding not) whose argmax is right."""
    sources = translator.source_ids(tf.constant(list(part.sources))).to_tensor().numpy()
    targets = translator.target_ids(tf.constant(list(part.targets))).to_tensor().numpy()
    logits = translator.model.predict(
        {"source_ids": sources, "target_ids": targets[:, :-1]}, verbose=0
    )
    labels = targets[:, 1:]
    real = labels != 0
    return float(np.sum((np.argmax(logits, axis=-1) == labels) & real) / np.sum(real))


def test_metrics_json_has_validation_and_test_scores(trained_transformer, digit_data):
    metrics = json.loads((trained_transformer.export_dir / "metrics.json").read_text())
    assert metrics["config"]["task"] == "translation"
    assert metrics["sizes"] == {"train": TRAIN_PAIRS, "validation": HELD_OUT, "test": HELD_OUT}
    for split in ("validation", "test"):
        scores = metrics[split]
        assert {"bleu", "chrf", "loss", "token_accuracy"} <= set(scores), split
        assert scores == trained_transformer.metrics[split]  # JSON keeps floats exactly
        assert 0 < scores["loss"] < math.log(TRANSFORMER_OPTIONS["vocab_size"])
        assert 90 <= scores["bleu"] <= 100 + 1e-9 and 90 <= scores["chrf"] <= 100 + 1e-9
        expected = teacher_forced_token_accuracy(
            trained_transformer.model, digit_data.splits[split]
        )
        assert scores["token_accuracy"] == pytest.approx(expected, abs=1e-6)


def test_history_json_has_validation_loss_and_accuracy_per_epoch(trained_transformer):
    history = json.loads((trained_transformer.export_dir / "history.json").read_text())
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        assert len(history[key]) == EPOCHS, key
        assert all(math.isfinite(value) for value in history[key]), key
    assert history == trained_transformer.history
    assert history["val_loss"][-1] < history["val_loss"][0] / 10
    assert history["val_accuracy"][-1] > history["val_accuracy"][0]
    # The last epoch's validation numbers are those of the trained model in metrics.json.
    metrics = trained_transformer.metrics["validation"]
    assert metrics["token_accuracy"] == pytest.approx(history["val_accuracy"][-1], abs=1e-6)


@pytest.mark.parametrize(
    "model, options, speed",
    [
        ("rnn", RNN_OPTIONS, "mixed_precision"),
        ("transformer", TRANSFORMER_OPTIONS, "xla"),
    ],
)
def test_translators_train_and_decode_with_mixed_precision_and_xla(
    digit_data, model, options, speed
):
    # bfloat16 on CPU: the decoding loop keeps its cache in float32 and must cast it for
    # the layers; XLA pads batches to bucket limits. Both must still learn to reverse.
    config = TrainingConfig(
        task="translation", model=model, dataset="spa_eng", epochs=EPOCHS,
        learning_rate=3e-3, model_options=options, **{speed: True},
    )  # fmt: skip
    result = train(config, data=digit_data, export=False, verbose=0)
    test = digit_data.splits["test"]
    translations = result.model.translate(list(test.sources))
    exact = np.mean([got == want for got, want in zip(translations, test.targets, strict=True)])
    assert exact >= 0.8, exact


# Digits to Spanish number words with their own casing and accents, in reverse order,
# the sentence ended by a full stop: only a tokenizer that keeps case can write them.
CASED_WORDS = ("cero", "Uno", "Dós", "TRES", "cuatro", "Cinco", "séis", "Siete", "ocho", "Nueve")
# Label smoothing too: with it the model must still learn the exact translations.
SUBWORD_OPTIONS = dict(
    TRANSFORMER_OPTIONS, tokenizer="sentencepiece", vocab_size=40, maxlen=20, label_smoothing=0.1
)


def cased_pairs(sources: list[str]) -> SentencePairs:
    targets = [
        " ".join(CASED_WORDS[int(digit)] for digit in reversed(text.split())) + "."
        for text in sources
    ]
    return SentencePairs(np.array(sources, dtype=object), np.array(targets, dtype=object))


# Separate vocabularies, or one of both languages whose one table embeds source and
# target and gives the logits.
@pytest.fixture(scope="module", params=[False, True], ids=["separate", "tied"])
def trained_subword_transformer(tmp_path_factory, request):
    rng, seen = np.random.default_rng(1), set()
    splits = {
        split: cased_pairs(digit_strings(count, rng, seen))
        for split, count in (("test", HELD_OUT), ("validation", HELD_OUT), ("train", TRAIN_PAIRS))
    }
    data = TranslationData("cased_digits", "digits", "Spanish number words", splits)
    export_dir = tmp_path_factory.mktemp("subwords") / "transformer"
    # One vocabulary of both languages is twice as large, as by default (16,000 = 2 x 8,000);
    # one table read three ways learns this task more slowly at 32 wide.
    tied = dict(tie_embeddings=True, vocab_size=80, embed_dim=64) if request.param else {}
    options = {**SUBWORD_OPTIONS, **tied}
    return train_translator("transformer", options, data, export_dir), data


def test_a_subword_translator_writes_case_accents_and_punctuation(
    trained_subword_transformer, request
):
    result, data = trained_subword_transformer
    test = data.splits["test"]
    translations = result.model.translate(list(test.sources))
    assert exact_share(translations, test.targets) >= 0.9, translations[:5]
    assert result.model.source_tokenizer.kind == "sentencepiece"
    tied = request.node.callspec.params["trained_subword_transformer"]
    assert ("shared_embedding" in {layer.name for layer in result.model.model.layers}) == tied
    assert (result.model.source_tokenizer is result.model.target_tokenizer) == tied
    assert ("logits" in {layer.name for layer in result.model.model.layers}) != tied
    scores = result.metrics["test"]
    references = [list(test.targets)]
    assert scores["bleu"] == pytest.approx(
        sacrebleu.corpus_bleu(translations, references).score, abs=1e-9
    )
    assert scores["bleu"] >= 90
    # Lower-cased output would lose most of the cased score.
    lowered = [text.lower() for text in translations]
    assert sacrebleu.corpus_bleu(lowered, references).score < scores["bleu"] - 30


def test_overlong_subword_pairs_are_counted_in_subwords(trained_subword_transformer):
    import sentencepiece

    from kerasformer.registry import task_entry
    from kerasformer.training.tasks.translation import TranslationTask

    result, data = trained_subword_transformer
    source, target = result.model.source_tokenizer, result.model.target_tokenizer
    short = Translator(result.model.model, source, target, maxlen=8)  # 3-6 words a side
    summary = TranslationTask(task_entry("translation")).summarize(short, data)
    train = data.splits["train"]
    pieces = [
        [len(ids) for ids in sentencepiece.SentencePieceProcessor(model_proto=t.model).encode(
            list(texts)
        )]
        for t, texts in ((source, train.sources), (target, train.targets))
    ]  # fmt: skip
    overlong = np.mean([s > 8 or t + 2 > 8 for s, t in zip(*pieces, strict=True)])
    assert overlong > 0.1  # in words none is overlong, so this tells the two apart
    assert summary["over_max_length_share"] == pytest.approx(overlong, abs=1e-4)


# A fresh interpreter with TensorFlow and TensorFlow Text (whose ops SentencePiece needs,
# as TF-Hub's BERT preprocessing does) but not kerasformer: argv[1] the export, argv[2]
# the sentences.
SERVE_SUBWORDS = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401

translator = tf.saved_model.load(sys.argv[1])
texts = tf.constant(json.loads(sys.argv[2]))
served = {
    name: [t.decode("utf-8") for t in translator.signatures[name](inputs=texts)["outputs"].numpy()]
    for name in ("serving_default", "beam_search")
}
served["kerasformer_imported"] = any(name.startswith("kerasformer") for name in sys.modules)
print(json.dumps(served))
"""


def test_a_subword_export_serves_and_loads_the_same_translations(trained_subword_transformer):
    from kerasformer.loading.translator import load_translator

    result, data = trained_subword_transformer
    sources = list(data.splits["validation"].sources[:20])
    served = run_python_json(SERVE_SUBWORDS, str(result.export_dir), json.dumps(sources))
    assert served.pop("kerasformer_imported") is False
    assert served["serving_default"] == result.model.translate(sources)
    assert served["beam_search"] == result.model.translate(sources, beam_width=4)
    loaded = load_translator(result.export_dir)
    assert loaded.target_tokenizer.kind == "sentencepiece"
    assert loaded.target_vocabulary == result.model.target_vocabulary
    assert loaded.translate(sources) == served["serving_default"]
