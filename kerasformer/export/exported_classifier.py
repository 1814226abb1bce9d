"""Old home of `kerasformer.loading.exported_classifier`, for one release."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kerasformer.loading.exported_classifier")
