"""Pictures of training runs and models: training history, confusion matrix, attention.

Every function returns a matplotlib ``Figure`` built without pyplot, so nothing needs a
display and a notebook's backend is left alone; ``save_figure`` writes one to a file.
"""

from kerasformer.plots.alignment import plot_alignment
from kerasformer.plots.attention_heads import plot_attention_heads
from kerasformer.plots.attention_view import (
    AttentionMapLike,
    attention_figure,
    attention_html,
    plot_head_view,
)
from kerasformer.plots.confusion_matrix import plot_confusion_matrix
from kerasformer.plots.entities import plot_entities
from kerasformer.plots.figures import save_figure
from kerasformer.plots.span_probabilities import plot_span_probabilities
from kerasformer.plots.training_history import plot_training_history

__all__ = [
    "AttentionMapLike",
    "attention_figure",
    "attention_html",
    "plot_alignment",
    "plot_attention_heads",
    "plot_confusion_matrix",
    "plot_entities",
    "plot_head_view",
    "plot_span_probabilities",
    "plot_training_history",
    "save_figure",
]
