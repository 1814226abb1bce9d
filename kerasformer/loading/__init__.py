"""Reading exports: every kind of export kerasformer writes, loaded back and checked whole.

Names are imported on first use (PEP 562), so a reader loads only what its export needs.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "exported_classifier": ["ExportedClassifier", "Predictions"],
        "exported_generator": ["ExportedGenerator"],
        "exported_question_answerer": ["ExportedQuestionAnswerer"],
        "exported_tagger": ["ExportedTagger"],
        "exported_translator": ["ExportedTranslator"],
        "generator": ["load_generator"],
        "keras_model": ["load_keras_model"],
        "question_answerer": ["load_question_answerer"],
        "tagger": ["load_tagger"],
        "translator": ["load_translator"],
    },
)
