"""SavedModel export: raw strings in, class probabilities out."""

from kerasformer.export.exported_classifier import ExportedClassifier
from kerasformer.export.saved_model import export_classifier

__all__ = ["ExportedClassifier", "export_classifier"]
