"""On-device runners: ``.tflite`` exports (``kerasformer export-litert``) run with LiteRT.

`LiteRTClassifier` and `LiteRTTagger` need only NumPy and ``ai-edge-litert``, no
TensorFlow.
The writer is `kerasformer.export.litert_export`.
Names are imported on first use (PEP 562).
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "classifier": ["LiteRTClassifier"],
        "files": ["LiteRTFiles"],
        "runtime": ["RUNTIMES", "signature_runner"],
        "tagger": ["LiteRTTagger"],
        "word_ids": ["WordIds"],
    },
)
