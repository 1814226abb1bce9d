"""Converting checkpoints in: pretrained weights from other formats as TF-Hub BERT models.

Names are imported on first use (PEP 562).
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__, submod_attrs={"convert_bert": ["HubBert", "convert_bert"]}
)
