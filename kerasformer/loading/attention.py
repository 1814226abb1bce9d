"""What an exported model attends to for one input: `export_attention_maps`.

The same for every kind: ``kerasformer attention`` draws it, and the try page of
``kerasformer serve`` shows it as a heatmap.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.errors import KerasformerError


def export_attention_maps(model: Path, text: str, second: str | None = None) -> list:
    """Every attention map of the export at ``model`` for ``text``, by its kind.

    The export's Keras model (``model.keras``) is loaded and run: the from-scratch or BERT
    classifier (``second``: a sentence pair's second text), the translator (over its
    greedy translation), the language model (the prompt) and the question answerer
    (``text`` the question, ``second`` the context). Taggers have none.

    Raises:
        KerasformerError: a tagger, a second text a translator or language model does not
            read, a question without its context, or an export that is not whole.
    """
    from kerasformer.files.export_kind import (
        CLASSIFIER,
        LANGUAGE_MODEL,
        QUESTION_ANSWERER,
        TAGGER,
        TRANSLATOR,
        export_kind,
    )

    kind = export_kind(model)
    if kind is TAGGER:
        raise KerasformerError(
            f"{model} is a tagger, and taggers have no attention view yet; "
            "`kerasformer tag --plot PNG` draws the entities it finds."
        )
    if kind in (TRANSLATOR, LANGUAGE_MODEL) and second is not None:
        raise KerasformerError(
            f"{model} is {kind.noun}, which reads one text; drop --second/--context."
        )
    if kind is TRANSLATOR:
        from kerasformer.loading.translator import load_translator

        return load_translator(model).attention_maps(text)
    if kind is LANGUAGE_MODEL:
        from kerasformer.loading.generator import load_generator

        return load_generator(model).attention_maps(text)
    if kind is QUESTION_ANSWERER:
        if second is None:
            raise KerasformerError(
                f"{model} is a question answerer; give the question as TEXT and the "
                "paragraph with --context."
            )
        from kerasformer.loading.question_answerer import load_question_answerer

        return load_question_answerer(model).attention_maps(text, second)
    from kerasformer.files.export_files import require_intact_export

    require_intact_export(model, CLASSIFIER)
    from kerasformer.loading.keras_model import load_keras_model
    from kerasformer.models import classifier_attention_maps

    return classifier_attention_maps(load_keras_model(model), text, second)
