"""Decoding loops for sequence models: greedy, beam search and sampling, in TensorFlow ops.

The loops are the Model Garden's (``official.nlp.modeling.ops``): ``SamplingModule``
for greedy decoding and temperature / top-k / top-p sampling, ``sequence_beam_search``
for beam search. Both are ``tf.while_loop`` s, so a decoder runs inside a
``tf.function`` and inside an exported SavedModel.

A model takes part through a *step function* and a *cache*:

``step(ids, index, cache) -> (logits, cache)``
    ``ids`` is every token so far, ``(batch, index + 1)``; ``logits``
    ``(batch, vocab_size)`` score the token at position ``index + 1``. ``cache`` is a
    dict of float32 tensors with the batch first (the loops reorder and tile them for
    beam search): a decoder's keys and values of earlier tokens, the encoded source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kerasformer.backend import is_tensor, tf
from kerasformer.validation import is_whole_number

# Forward references: the alias is made without importing TensorFlow.
StepFunction = Callable[["tf.Tensor", "tf.Tensor", dict], tuple["tf.Tensor", dict]]
# The scores of finished beams: Model Garden's length penalty ((5 + length) / 6) ** alpha.
DEFAULT_LENGTH_PENALTY = 0.6
MIN_TEMPERATURE = 1e-6


@dataclass(frozen=True)
class Sampling:
    """How to choose each next token when sampling: temperature, then top-k, then top-p.

    ``temperature`` 0 is greedy decoding (always the most likely token, whatever top-k
    and top-p say).
    """

    temperature: float = 1.0
    top_k: int = 0  # 0: no limit
    top_p: float = 1.0  # 1: no limit

    def __post_init__(self):
        from kerasformer.errors import KerasformerError

        if any(is_tensor(value) for value in vars(self).values()):
            return  # chosen at run time (a serving signature's inputs)
        if not self.temperature >= 0:
            raise KerasformerError(f"temperature must be >= 0, got {self.temperature!r}.")
        if not is_whole_number(self.top_k) or self.top_k < 0:
            raise KerasformerError(f"top_k must be a whole number >= 0, got {self.top_k!r}.")
        if not 0 < self.top_p <= 1:
            raise KerasformerError(f"top_p must be in (0, 1], got {self.top_p!r}.")

    @property
    def greedy(self) -> bool:
        """Temperature 0 is the limit of always choosing the most likely token."""
        return not is_tensor(self.temperature) and self.temperature == 0

    def run_time_temperature(self):
        """The temperature for the Model Garden's sampler, which reads 0 as "unscaled".

        A run-time 0 becomes a temperature so small that sampling picks the most likely
        token, as greedy decoding does.
        """
        temperature = tf.cast(self.temperature, tf.float32)
        return tf.where(temperature > 0, temperature, MIN_TEMPERATURE)


# What the command line and exports sample with unless told: the 40 likeliest tokens.
DEFAULT_SAMPLING = Sampling(temperature=1.0, top_k=40)


def decode(
    step: StepFunction,
    start_ids: tf.Tensor,
    cache: dict,
    *,
    vocab_size: int,
    max_length: int,
    end_id: int,
    beam_width: int = 1,
    sampling: Sampling | None = None,
    length_penalty: float = DEFAULT_LENGTH_PENALTY,
) -> tuple[tf.Tensor, tf.Tensor]:
    """Generate up to ``max_length`` tokens after ``start_ids`` ``(batch,)``.

    Greedy when ``beam_width`` is 1 and ``sampling`` is None; beam search when
    ``beam_width`` > 1; sampling otherwise. Returns the generated ids
    ``(batch, max_length)`` without the start token, 0 after the end token (which is
    kept), and each sequence's log-probability (length-penalised for beams).
    """
    if beam_width > 1 and sampling is not None:
        raise ValueError("choose beam search or sampling, not both.")
    start_ids = tf.cast(start_ids, tf.int32)
    if beam_width > 1:
        from official.nlp.modeling.ops import beam_search

        sequences, scores = plain_tensorflow(beam_search.sequence_beam_search)(
            symbols_to_logits_fn=step,
            initial_ids=start_ids,
            initial_cache=cache,
            vocab_size=vocab_size,
            beam_size=beam_width,
            alpha=length_penalty,
            max_decode_length=max_length,
            eos_id=end_id,
            padded_decode=False,
        )
        sequences, scores = sequences[:, 0], scores[:, 0]  # the best beam
    else:
        from official.nlp.modeling.ops import sampling_module

        sampling = sampling or Sampling(temperature=0.0)
        module = sampling_module.SamplingModule(
            symbols_to_logits_fn=step,
            vocab_size=vocab_size,
            max_decode_length=max_length,
            eos_id=end_id,
            padded_decode=False,
            top_k=sampling.top_k,
            top_p=sampling.top_p,
            sample_temperature=0.0 if sampling.greedy else sampling.run_time_temperature(),
            enable_greedy=sampling.greedy,
        )
        sequences, scores = plain_tensorflow(module.generate)(
            initial_ids=start_ids, initial_cache=cache
        )
        scores = scores[:, 0]
    return pad_to_length(sequences[:, 1:], max_length), scores


def plain_tensorflow(function: Callable) -> Callable:
    """``function``, left as it is when a ``tf.function`` traces it.

    The Model Garden's loops are written in TensorFlow's own control flow
    (``tf.while_loop``, ``tf.cond``), as are the step functions they call: AutoGraph
    rewriting their source adds nothing and took 2 to 3 s of every first trace of a
    decoder (a translator's training, export and first ``translate``).
    """
    return tf.autograph.experimental.do_not_convert(function)


def pad_to_length(ids: tf.Tensor, length: int) -> tf.Tensor:
    """``ids`` padded with zeros (or cut) to ``length`` columns: loops stop early."""
    ids = ids[:, :length]
    return tf.pad(ids, [[0, 0], [0, length - tf.shape(ids)[1]]])


def ids_before_end(ids: tf.Tensor, end_id: int) -> tf.RaggedTensor:
    """Each row of generated ids up to, not including, its end token or padding."""
    stop = tf.logical_or(tf.equal(ids, end_id), tf.equal(ids, 0))
    keep = tf.equal(tf.cumsum(tf.cast(stop, tf.int32), axis=1), 0)
    return tf.ragged.boolean_mask(ids, keep)
