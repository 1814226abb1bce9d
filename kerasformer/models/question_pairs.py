"""Question-and-context pairs: their one check, and answering them in batches, shared by
the Keras question answerer and its SavedModel."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError


def require_pairs(questions: Sequence[str], contexts: Sequence[str]) -> None:
    """One non-blank context string per non-blank question string, or a one-line error
    naming the first that is not."""
    if len(questions) != len(contexts):
        raise KerasformerError(
            f"got {len(questions)} questions and {len(contexts)} contexts; give one context "
            "per question."
        )
    for kind, texts in (("question", questions), ("context", contexts)):
        for number, text in enumerate(texts):
            if not isinstance(text, str):
                raise KerasformerError(f"{kind} {number} is {type(text).__name__}, not text.")
            if not text.strip():
                raise KerasformerError(
                    f"{kind} {number} is empty; give a question and the paragraph that answers it."
                )


def answers_in_batches(
    answer_batch: Callable[[tf.Tensor, tf.Tensor], dict],
    questions: Sequence[str],
    contexts: Sequence[str],
    batch_size: int,
) -> list[dict]:
    """Each question's answer in its context: ``{"answer", "start", "end", "score",
    "no_answer_score"}``, ``answer_batch`` (question and context string tensors in, the
    answering signature's tensors out) run on ``batch_size`` pairs at a time.

    Raises a one-line error for an empty question or context, or unequal lengths.
    """
    questions, contexts = list(questions), list(contexts)
    require_pairs(questions, contexts)
    results = []
    for first in range(0, len(questions), batch_size):
        batch = answer_batch(
            tf.constant(questions[first : first + batch_size], tf.string),
            tf.constant(contexts[first : first + batch_size], tf.string),
        )
        batch = {key: value.numpy() for key, value in batch.items()}
        for i in range(len(batch["answer"])):
            results.append({
                "answer": batch["answer"][i].decode("utf-8"),
                "start": int(batch["start"][i]),
                "end": int(batch["end"][i]),
                "score": float(batch["score"][i]),
                "no_answer_score": float(batch["no_answer_score"][i]),
            })  # fmt: skip
    return results
