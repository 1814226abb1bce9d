"""Use a language-model export through its SavedModel's ``sample`` signature."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.files.export_files import require_export_files
from kerasformer.files.export_kind import LANGUAGE_MODEL
from kerasformer.files.text_files import read_lines, read_settings
from kerasformer.loading.exported_classifier import INPUT_NAME, utf8_texts
from kerasformer.loading.generator import SETTINGS_FILE, VOCABULARY_FILE
from kerasformer.loading.serving_function import load_checked_serving_function
from kerasformer.loading.vocabulary_words import known_counts, split_words
from kerasformer.models.generation import Sampling
from kerasformer.models.length_limits import prompt_problem

SAMPLE_SIGNATURE = "sample"


class ExportedGenerator:
    """A language-model export, continued by its own ``sample`` signature.

    The SavedModel holds the word lookup, the decoder and the sampling loop, so this
    needs TensorFlow alone: no Keras and no Model Garden. It generates the number of
    tokens the export was written for (``max_tokens``); prompts are checked and their
    unknown words counted as `TextGenerator` does it, with the words TensorFlow's
    whitespace split gives and the export's ``vocabulary.txt``. Exports written before
    their settings held the model's window, and other numbers of tokens, are told apart
    by `load_if_serves`; load those with `load_generator`. Its methods are called as
    `TextGenerator`'s are, so a caller can take either.

    Sampling is not seeded: the signature's random ops were traced without a seed, so
    ``tf.random.set_seed`` does not reach them. For text that repeats, use
    `load_generator` after setting a seed.

    Args:
        export_dir: A directory ``kerasformer train --task language-model`` wrote,
            checked whole (every file and saved value) before it is loaded.

    Raises:
        KerasformerError: ``export_dir`` is not a language-model export, or one of its
            files is missing or damaged.

    Examples:
        >>> generator = ExportedGenerator("saved_models/wikitext2-transformer")
        >>> generator.known_words(["the cat sat", "the zebra"])
        [3, 1]
        >>> generator.generate(["the cat"], sampling=Sampling(temperature=0.0))
        ['...']
    """

    def __init__(self, export_dir: str | Path):
        self.export_dir, self._sample = load_checked_serving_function(
            export_dir, LANGUAGE_MODEL, SAMPLE_SIGNATURE
        )
        settings = read_export_settings(self.export_dir)
        self.max_tokens, self.maxlen = settings["max_tokens"], settings["maxlen"]
        self.vocabulary = frozenset(read_lines(self.export_dir / VOCABULARY_FILE))

    @classmethod
    def load_if_serves(cls, export_dir: str | Path, max_tokens: int) -> ExportedGenerator | None:
        """The generator of ``export_dir``, or None where its signature cannot serve:
        ``max_tokens`` other than the export's, or an export whose settings lack the
        model's window (written before it was recorded). Reads the settings alone first."""
        settings = read_export_settings(require_export_files(export_dir, LANGUAGE_MODEL))
        if "maxlen" not in settings or settings.get("max_tokens") != max_tokens:
            return None
        return cls(export_dir)

    def require_max_tokens(self, max_tokens: int) -> None:
        """Refuse a number of tokens other than the one the signature generates."""
        if max_tokens != self.max_tokens:
            raise KerasformerError(
                f"{self.export_dir}'s signature generates {self.max_tokens} tokens, not "
                f"{max_tokens}; load it with load_generator for another number."
            )

    def problem(self, prompt: str, max_tokens: int | None = None) -> str | None:
        """Why ``prompt`` cannot be continued, or None if it can (`TextGenerator.problem`)."""
        self.require_max_tokens(max_tokens or self.max_tokens)
        (words,) = self._words(utf8_texts([prompt], "generating"))
        return prompt_problem(len(words), self.max_tokens, self.maxlen)

    def known_words(self, prompts: Sequence[str]) -> list[int]:
        """How many words of each prompt are in the vocabulary."""
        return known_counts(self._words(utf8_texts(prompts, "generating")), self.vocabulary)

    def generate(
        self,
        prompts: Sequence[str],
        max_tokens: int | None = None,
        sampling: Sampling | None = None,
    ) -> list[str]:
        """Continue each prompt by up to ``max_tokens`` tokens (greedy if no sampling), as
        `TextGenerator.generate` does; ``max_tokens`` must be the export's (None: it)."""
        self.require_max_tokens(max_tokens or self.max_tokens)
        encoded = utf8_texts(prompts, "generating")
        for index, words in enumerate(self._words(encoded)):
            problem = prompt_problem(len(words), self.max_tokens, self.maxlen)
            if problem is not None:
                raise KerasformerError(f"prompt {index + 1} {problem}.")
        sampling = sampling or Sampling(temperature=0.0)
        outputs = self._sample(
            **{INPUT_NAME: tf.constant(encoded, tf.string)},
            temperature=tf.constant(sampling.temperature, tf.float32),
            top_k=tf.constant(sampling.top_k, tf.int32),
            top_p=tf.constant(sampling.top_p, tf.float32),
        )["outputs"]
        return [text.decode("utf-8") for text in outputs.numpy()]

    @staticmethod
    def _words(encoded: list[bytes]) -> list[list[str]]:
        # The split the export's TextVectorization makes: TensorFlow's, on whitespace.
        return split_words(tf.constant(encoded, tf.string)) if encoded else []


def read_export_settings(directory: Path) -> dict:
    return read_settings(directory, SETTINGS_FILE, "language model", "language-model")
