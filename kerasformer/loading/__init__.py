"""Reading exports: every kind of export kerasformer writes, loaded back and checked whole."""

from kerasformer.loading.exported_classifier import ExportedClassifier, Predictions
from kerasformer.loading.generator import load_generator
from kerasformer.loading.keras_model import load_keras_model
from kerasformer.loading.question_answerer import load_question_answerer
from kerasformer.loading.tagger import load_tagger
from kerasformer.loading.translator import load_translator

__all__ = [
    "ExportedClassifier",
    "Predictions",
    "load_generator",
    "load_keras_model",
    "load_question_answerer",
    "load_tagger",
    "load_translator",
]
