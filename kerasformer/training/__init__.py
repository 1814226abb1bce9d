"""Training: fit, evaluate and export a classifier, a translator or a language model.

Names are imported on first use (PEP 562).
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "evaluation": ["classification_metrics"],
        "reproducibility": ["make_reproducible"],
        "trainer": ["TrainingConfig", "TrainingResult", "train"],
    },
)
