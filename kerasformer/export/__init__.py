"""Writing exports: SavedModels (raw strings in; probabilities, translations or text out).

Readers are in `kerasformer.loading`. Modules that moved out keep their old names for
one release: ``export.convert_bert`` is `kerasformer.convert.convert_bert`,
``export.staged_directory`` and ``export.export_kind`` are in `kerasformer.files`,
``export.export_files`` and ``export.exported_classifier`` in `kerasformer.loading`.
"""

import sys

from kerasformer.convert import convert_bert as _convert_bert_module  # noqa: F401
from kerasformer.convert.convert_bert import HubBert, convert_bert
from kerasformer.export.saved_model import export_classifier
from kerasformer.files import export_files as _export_files
from kerasformer.files import export_kind as _export_kind
from kerasformer.files import staged_directory as _staged_directory
from kerasformer.loading import ExportedClassifier, load_keras_model
from kerasformer.loading import exported_classifier as _exported_classifier

for _old, _module in (
    ("convert_bert", sys.modules["kerasformer.convert.convert_bert"]),
    ("export_kind", _export_kind),
    ("staged_directory", _staged_directory),
    ("export_files", _export_files),
    ("exported_classifier", _exported_classifier),
):
    sys.modules[f"{__name__}.{_old}"] = _module

__all__ = ["ExportedClassifier", "HubBert", "convert_bert", "export_classifier", "load_keras_model"]
