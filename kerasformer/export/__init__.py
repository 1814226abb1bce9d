"""SavedModel export (raw strings in; probabilities, translations or text out), BERT conversion."""

from kerasformer.export.convert_bert import HubBert, convert_bert
from kerasformer.export.exported_classifier import ExportedClassifier, load_keras_model
from kerasformer.export.saved_model import export_classifier

__all__ = ["ExportedClassifier", "HubBert", "convert_bert", "export_classifier", "load_keras_model"]
