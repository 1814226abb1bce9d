"""Pictures of training runs and models: training history, confusion matrix, attention.

Every function returns a matplotlib ``Figure`` built without pyplot, so nothing needs a
display and a notebook's backend is left alone; ``save_figure`` writes one to a file.
Names are imported on first use (PEP 562): matplotlib loads with the first picture.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "alignment": ["plot_alignment"],
        "attention_heads": ["plot_attention_heads"],
        "attention_view": [
            "AttentionMapLike", "attention_figure", "attention_html", "plot_head_view",
        ],
        "confusion_matrix": ["plot_confusion_matrix"],
        "entities": ["plot_entities"],
        "figures": ["save_figure"],
        "span_probabilities": ["plot_span_probabilities"],
        "training_history": ["plot_training_history"],
    },
)  # fmt: skip
