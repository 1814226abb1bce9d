"""kerasformer for tf-keras (Keras 2) code: `kerasformer.tf_keras.layers`."""
