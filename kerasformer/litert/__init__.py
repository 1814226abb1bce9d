"""On-device runners: ``.tflite`` exports (``kerasformer export-litert``) run with LiteRT.

`LiteRTClassifier` needs only NumPy and ``ai-edge-litert``, no TensorFlow;
`kerasformer.litert.tagger.LiteRTTagger` reads words and entities with kerasformer's
tagging code, so it imports TensorFlow's Python package (LiteRT still runs the model).
The writer is `kerasformer.export.litert_export`.
"""

from kerasformer.litert.classifier import LiteRTClassifier
from kerasformer.litert.files import LiteRTFiles
from kerasformer.litert.runtime import RUNTIMES, signature_runner
from kerasformer.litert.word_ids import WordIds

__all__ = ["RUNTIMES", "LiteRTClassifier", "LiteRTFiles", "WordIds", "signature_runner"]
