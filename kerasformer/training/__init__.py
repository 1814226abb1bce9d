"""Training: fit, evaluate and export a classifier, a translator or a language model."""

from kerasformer.training.evaluation import classification_metrics
from kerasformer.training.reproducibility import make_reproducible
from kerasformer.training.trainer import TrainingConfig, TrainingResult, train

__all__ = [
    "TrainingConfig",
    "TrainingResult",
    "classification_metrics",
    "make_reproducible",
    "train",
]
