"""Translation: sentence pairs in, a `Translator` (model and tokenizers) out."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.data_summary import summarize_pairs
from kerasformer.datasets.pipeline import sequence_pair_examples, teacher_forcing_batches
from kerasformer.datasets.sentence_pairs import SentencePairs, TranslationData
from kerasformer.errors import KerasformerError
from kerasformer.export.translator_export import write_translator
from kerasformer.models import defaults
from kerasformer.models.subword_tokenizer import (
    SubwordTokenizer,
    require_subword_vocabulary_size,
    train_subwords,
)
from kerasformer.models.translator import TARGET_RESERVED, Tokenizer, Translator
from kerasformer.models.word_tokenizer import WordTokenizer, adapted_vocabulary
from kerasformer.registry import TOKENIZERS, TRANSLATION_DEFAULTS, resolve
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.tasks.base import Task
from kerasformer.training.token_crossentropy import (
    require_label_smoothing,
    token_crossentropy,
)
from kerasformer.training.translator_evaluation import scored_translations

VOCAB_SIZE = defaults.TRANSLATION_VOCAB_SIZE
SUBWORD_VOCAB_SIZE = defaults.SUBWORD_VOCAB_SIZE
SHARED_SUBWORD_VOCAB_SIZE = defaults.SHARED_SUBWORD_VOCAB_SIZE


class TranslationTask(Task):
    """Sentence pairs in; a `Translator`, its BLEU and chrF, and a translator export out."""

    example_noun = "sentence pairs"

    def describe(self, data: TranslationData) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        languages = f"{data.source_language} to {data.target_language}"
        return f"{data.name}: {sizes} sentence pairs, {languages}"

    def validate(self, config) -> None:
        super().validate(config)
        options = {**TRANSLATION_DEFAULTS, **config.model_options}
        tokenizer = options["tokenizer"]
        if tokenizer not in TOKENIZERS:
            raise KerasformerError(
                f"unknown tokenizer {tokenizer!r}; use one of {', '.join(TOKENIZERS)}."
            )
        require_label_smoothing(options["label_smoothing"])
        vocab_size = config.model_options.get("vocab_size")
        if tokenizer == "sentencepiece" and vocab_size is not None:
            require_subword_vocabulary_size(vocab_size)
        if config.model_options.get("tie_embeddings") and tokenizer != "sentencepiece":
            raise KerasformerError(
                "tie_embeddings shares one vocabulary between the languages, which only "
                "subwords give; add --tokenizer sentencepiece."
            )

    def build(self, config, data: TranslationData):
        model_entry = self.entry.model(config.model)
        build, defaults = resolve(model_entry.builder), resolve(model_entry.defaults)
        options = {**defaults, **TRANSLATION_DEFAULTS, **config.model_options}
        kind = options.pop("tokenizer")
        loss = token_crossentropy(options.pop("label_smoothing"))
        source, target = trained_tokenizers(
            data.splits["train"], kind, options.pop("vocab_size", None), config.seed,
            shared=options.get("tie_embeddings", False),
        )  # fmt: skip
        try:
            model = build(source.size, target.size, **options)
        except (TypeError, ValueError) as error:
            raise KerasformerError(f"cannot build model {config.model!r}: {error}") from error
        maxlen = options["maxlen"]
        translator = Translator(model, source, target, maxlen, family=model_entry.name)

        def batches(part: SentencePairs, batch_size: int, shuffle_seed: int | None):
            examples = sequence_pair_examples(
                part.to_dataset(), translator.source_ids, translator.target_ids, maxlen
            )
            return teacher_forcing_batches(
                examples, batch_size, maxlen, shuffle_seed, fixed_shapes=config.xla
            )

        plan = FitPlan(
            model, model, config.xla, batches,
            loss=loss,
        )  # fmt: skip
        return translator, plan

    def summarize(self, translator: Translator, data: TranslationData) -> dict:
        if translator.source_tokenizer.kind == "word":
            return summarize_pairs(data, translator.maxlen)
        train = data.splits["train"]
        counts = translator.source_lengths(train.sources), translator.target_lengths(train.targets)
        return summarize_pairs(data, translator.maxlen, token_counts=counts)

    def evaluate(self, translator: Translator, data: TranslationData, config) -> dict[str, dict]:
        """Teacher-forced loss and accuracy, and BLEU and chrF of greedy translations."""
        return {
            split: evaluate_translations(translator, data.splits[split], config.batch_size)
            for split in ("validation", "test")
        }

    def write_export(self, translator: Translator, data: TranslationData, directory: Path) -> None:
        write_translator(
            translator, directory, languages=(data.source_language, data.target_language)
        )


def trained_tokenizers(
    train: SentencePairs, kind: str, vocab_size: int | None, seed: int, shared: bool = False
) -> tuple[Tokenizer, Tokenizer]:
    """The source's and the target's tokenizer, learnt from the training pairs: the most
    frequent words (``word``) or a SentencePiece model of each side (``sentencepiece``),
    or, ``shared``, one SentencePiece model of both sides for both."""
    if kind == "word":
        size = vocab_size or VOCAB_SIZE
        return (
            WordTokenizer(adapted_vocabulary(train.sources, size), name="source_words"),
            WordTokenizer(
                adapted_vocabulary(train.targets, size, TARGET_RESERVED), name="target_words"
            ),
        )
    if kind == "sentencepiece" and shared:
        both = np.concatenate([train.sources, train.targets])
        tokenizer = SubwordTokenizer(
            train_subwords(both, vocab_size or SHARED_SUBWORD_VOCAB_SIZE, seed),
            name="shared_subwords",
        )
        return tokenizer, tokenizer
    if kind == "sentencepiece":
        size = vocab_size or SUBWORD_VOCAB_SIZE
        return tuple(
            SubwordTokenizer(train_subwords(texts, size, seed), name=name)
            for texts, name in (
                (train.sources, "source_subwords"),
                (train.targets, "target_subwords"),
            )
        )
    raise KerasformerError(f"unknown tokenizer {kind!r}; use one of {', '.join(TOKENIZERS)}.")


def evaluate_translations(
    translator: Translator, part: SentencePairs, batch_size: int, beam_width: int = 1
) -> dict:
    examples = sequence_pair_examples(
        part.to_dataset(), translator.source_ids, translator.target_ids, translator.maxlen
    )
    batches = teacher_forcing_batches(examples, batch_size, translator.maxlen)
    loss, accuracy = next_token_loss_and_accuracy(translator.model, batches)
    return {
        "loss": float(loss),
        "token_accuracy": float(accuracy),
        **scored_translations(translator, part, beam_width),
    }


def next_token_loss_and_accuracy(model, batches) -> tuple[float, float]:
    """Mean cross-entropy and accuracy over every real (non-padding) target token.

    Keras's ``evaluate`` averages per-batch means weighted by sentences, not tokens;
    here batches with more words weigh more, so the loss is the corpus's per-token one.
    """

    @tf.function(reduce_retracing=True)
    def sums(inputs, targets):
        targets = tf.cast(targets, tf.int32)
        logits = model(inputs, training=False)
        real = tf.cast(tf.not_equal(targets, 0), tf.float32)
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(targets, logits)
        predicted = tf.argmax(logits, -1, output_type=tf.int32)
        correct = tf.cast(tf.equal(predicted, targets), tf.float32)
        return tf.stack(
            [tf.reduce_sum(losses * real), tf.reduce_sum(correct * real), tf.reduce_sum(real)]
        )

    loss, correct, tokens = sum(sums(inputs, targets).numpy() for inputs, targets in batches)
    return float(loss / max(tokens, 1.0)), float(correct / max(tokens, 1.0))
