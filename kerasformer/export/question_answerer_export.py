"""Export a `QuestionAnswerer` as a SavedModel: question and context strings in, answers out.

The export directory holds:

    saved_model.pb, variables/, assets/    the SavedModel: windows, BERT, span search
    model.keras                            the Keras model, for kerasformer
    question_answerer.json                 what `load_question_answerer` needs besides it

``serving_default`` takes ``question`` and ``context`` (batches of strings, one context
per question) and returns ``answer`` (string), ``start`` and ``end`` (int32 character
offsets, ``context[start:end] == answer``) and ``score`` (float32, start probability ×
end probability). A context of any length is read whole, window by window. A pair whose
context is empty gets ``""``, -1, -1 and 0; an empty question is answered from the
context alone. Serving needs ``import tensorflow_text`` (the tokeniser's ops), not
kerasformer.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import tf
from kerasformer.export.saved_model_files import write_saved_model
from kerasformer.files.text_files import write_settings
from kerasformer.loading.exported_question_answerer import CONTEXT_INPUT, QUESTION_INPUT
from kerasformer.loading.question_answerer import (  # noqa: F401  (its old home)
    SETTINGS_FILE,
    load_question_answerer,
)
from kerasformer.models.question_answerer import QuestionAnswerer


class QuestionAnswererServing(tf.Module):
    """The model, the preprocess model and the answering signature."""

    def __init__(self, answerer: QuestionAnswerer):
        super().__init__(name="question_answerer_serving")
        self._answerer = answerer
        # Tracked here so the encoder's variables and the tokeniser's tables are saved.
        self.model = answerer.model
        self.preprocess = answerer.windows.preprocess

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name=QUESTION_INPUT),
            tf.TensorSpec([None], tf.string, name=CONTEXT_INPUT),
        ]
    )
    def answer(self, question, context):
        check = tf.debugging.assert_equal(
            tf.size(question), tf.size(context),
            message="give one context per question: question and context differ in length",
        )  # fmt: skip
        with tf.control_dependencies([check]):
            return self._answerer.answer_tensors(tf.identity(question), context)


def write_question_answerer(answerer: QuestionAnswerer, directory: Path) -> None:
    """Write the SavedModel, ``model.keras`` and the settings into ``directory``."""
    directory = Path(directory)
    serving = QuestionAnswererServing(answerer)
    write_saved_model(directory, serving, {"serving_default": serving.answer}, answerer.model)
    settings = {"preprocess": answerer.preprocess_handle, **answerer.settings}
    write_settings(directory / SETTINGS_FILE, settings)
