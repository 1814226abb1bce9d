"""A language-model export measured on a text: its perplexity under both protocols
(`stream_metrics`), with the share of the text's tokens outside its vocabulary.

The export's signatures generate text; perplexity needs each next token's probability,
so it is read from the export's Keras model (`load_generator`), which those signatures
wrap. The text is tokenised as training tokenises it: each line's whitespace-separated
words, then ``<eos>``; a word outside the vocabulary is read as the unknown token, which
the model scores as one word, as WikiText-2's ``<unk>`` is scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.training.language_model_metrics import (
    stream_metrics,
    token_ids,
    vocabulary_index,
)

UNKNOWN_ID = 1


def language_model_metrics(
    export_dir: str | Path, tokens: Sequence[str], batch_size: int = 32
) -> dict:
    """`stream_metrics` of the language model at ``export_dir`` on ``tokens``, with
    ``unknown_tokens`` (how many are outside its vocabulary) and ``window``.

    Raises:
        KerasformerError: ``tokens`` fills no window of the model's (``maxlen + 1``
            tokens), so the windowed perplexity would have nothing to average.

    Example:

    >>> tokens = from_text_files("novel.txt").splits["test"]
    >>> language_model_metrics("saved_models/wikitext2-lm", tokens)["strided_perplexity"]
    148.9...
    """
    from kerasformer.loading.generator import load_generator

    generator = load_generator(export_dir)
    if len(tokens) <= generator.maxlen:
        raise KerasformerError(
            f"the text has {len(tokens)} tokens (words and line ends); {export_dir} reads "
            f"windows of {generator.maxlen}, so give a text of at least "
            f"{generator.maxlen + 1} tokens."
        )
    index = vocabulary_index(generator.vocabulary)
    ids = token_ids(tokens, index)
    metrics = stream_metrics(generator.model, ids, generator.maxlen, batch_size)
    return {
        **metrics,
        "unknown_tokens": int((ids == UNKNOWN_ID).sum()),
        "text_tokens": len(ids),
        "window": generator.maxlen,
    }
