"""Old home of `kerasformer.convert.convert_bert`, for one release."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kerasformer.convert.convert_bert")
