"""Writing exports: SavedModels (raw strings in; probabilities, translations or text out).

Readers are in `kerasformer.loading`. Names are imported on first use (PEP 562).
Modules that moved out keep their old names for one release, each
a module here that stands in for its new home: ``export.convert_bert`` is
`kerasformer.convert.convert_bert`; ``export.staged_directory``, ``export.export_kind`` and
``export.export_files`` are in `kerasformer.files`; ``export.exported_classifier`` is in
`kerasformer.loading`.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        # Names that live elsewhere now come through their old modules' stand-ins.
        "convert_bert": ["HubBert", "convert_bert"],
        "exported_classifier": ["ExportedClassifier", "load_keras_model"],
        "saved_model": ["export_classifier"],
    },
)
