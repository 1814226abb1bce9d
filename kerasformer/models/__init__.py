"""Ready-made models: classifiers by name, translators, a language model, and decoding.

Names are imported on first use (PEP 562), so ``import kerasformer.models`` alone imports
no Keras.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "attention_maps": ["AttentionMap"],
        "bert_classifier": ["build_bert_classifier"],
        "entity_tagger": ["EntityTagger"],
        "language_model": ["TextGenerator"],
        "question_answerer": ["QuestionAnswerer"],
        "classifiers": [
            "MODELS", "build_classifier", "build_text_classifier",
            "classifier_attention_maps", "has_text_vectorizer", "string_classifier",
        ],
        "text_classifier": ["TextClassifier"],
        "translator": ["Alignment", "Translator"],
        "transformer_classifier": [
            "adapt_vectorizer", "attention_weights", "build_transformer_classifier",
            "padding_free_classifier", "text_vectorizer", "token_id_classifier",
        ],
    },
)  # fmt: skip
