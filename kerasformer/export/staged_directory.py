"""Old home of `kerasformer.files.staged_directory`, for one release."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kerasformer.files.staged_directory")
