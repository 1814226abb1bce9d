"""Old home of `kerasformer.files.export_kind`, for one release."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kerasformer.files.export_kind")
