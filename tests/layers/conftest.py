"""Collection rules for the layer tests, which run under tf-keras and Keras 3 alike."""

from kerasformer.layers.backend import KERAS_VERSION

collect_ignore = []

if KERAS_VERSION == 3:
    # TensorFlow graph and XLA behaviour of the tf-keras layers; under Keras 3 the
    # layers are not tf-keras layers, so that file has nothing to test.
    collect_ignore.append("test_token_and_position_embedding_on_tensorflow.py")
