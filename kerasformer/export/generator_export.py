"""Export a `TextGenerator` as a SavedModel that continues prompt strings.

The export directory holds the SavedModel, ``model.keras``, ``vocabulary.txt`` and
``generator.json``. Signatures, each taking ``inputs`` (a batch of prompts) and
returning ``outputs`` (their continuations, up to ``max_tokens`` tokens fixed at
export, at most half the model's window):

- ``serving_default``: sampling as chosen at export (temperature, top-k, top-p);
- ``sample``: also takes ``temperature``, ``top_k`` and ``top_p`` scalars.

No kerasformer is needed to serve it.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.export.saved_model_files import INPUT_NAME, write_saved_model
from kerasformer.files.text_files import write_lines, write_settings
from kerasformer.loading.generator import (
    SETTINGS_FILE,
    VOCABULARY_FILE,
    load_generator,  # noqa: F401  (its old home)
)
from kerasformer.models.generation import DEFAULT_SAMPLING, Sampling
from kerasformer.models.language_model import DEFAULT_MAX_TOKENS, TextGenerator


class GeneratorServing(tf.Module):
    def __init__(self, generator: TextGenerator, max_tokens: int, sampling: Sampling):
        super().__init__(name="generator_serving")
        self._generator = generator
        self.model = generator.model
        self.vectorizer = generator.vectorizer
        self.max_tokens = max_tokens
        self.sampling = sampling

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def default(self, inputs):
        return {"outputs": self._generator.generate_tensor(inputs, self.max_tokens, self.sampling)}

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name=INPUT_NAME),
            tf.TensorSpec([], tf.float32, name="temperature"),
            tf.TensorSpec([], tf.int32, name="top_k"),
            tf.TensorSpec([], tf.float32, name="top_p"),
        ]
    )
    def sample(self, inputs, temperature, top_k, top_p):
        # Served without kerasformer, so the values are checked here, as the CLI checks them;
        # NaN fails every comparison, so it is refused too.
        checks = [
            tf.debugging.Assert(
                tf.logical_and(temperature >= 0.0, tf.math.is_finite(temperature)),
                ["temperature must be a finite number >= 0 (0 is greedy); got", temperature],
            ),
            tf.debugging.Assert(top_k >= 0, ["top_k must be >= 0 (0 for no limit); got", top_k]),
            tf.debugging.Assert(
                tf.logical_and(top_p > 0.0, top_p <= 1.0),
                ["top_p must be in (0, 1] (1 for no limit); got", top_p],
            ),
        ]
        with tf.control_dependencies(checks):
            sampling = Sampling(tf.identity(temperature), tf.identity(top_k), tf.identity(top_p))
        return {"outputs": self._generator.generate_tensor(inputs, self.max_tokens, sampling)}


def write_generator(
    generator: TextGenerator,
    directory: Path,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    sampling: Sampling = DEFAULT_SAMPLING,
) -> None:
    directory = Path(directory)
    if generator.maxlen < 3:
        raise KerasformerError(
            f"a language model with a window of {generator.maxlen} tokens has no room to "
            "generate after a prompt; train it with --maxlen 3 or more."
        )
    # Leave at least half the window for the prompt.
    max_tokens = min(max_tokens, generator.maxlen // 2)
    serving = GeneratorServing(generator, max_tokens, sampling)
    signatures = {"serving_default": serving.default, "sample": serving.sample}
    write_saved_model(directory, serving, signatures, generator.model)
    write_lines(directory / VOCABULARY_FILE, generator.vocabulary)
    # The window, so that `ExportedGenerator` checks prompts as `TextGenerator` does.
    settings = {
        "end_token": generator.end_token, "max_tokens": max_tokens, "maxlen": generator.maxlen,
        **asdict(sampling),
    }  # fmt: skip
    write_settings(directory / SETTINGS_FILE, settings)
