"""Seed 001's from-scratch classifier, reproduced faithfully as the speed baseline.

Everything here is as the seed wrote it, flaws included: positions for a fixed
``maxlen`` (every text is padded to it), no padding mask, ``key_dim=embed_dim``, a
``Sequential`` model with ``TextVectorization`` inside, Adam, batches of 128 raw strings
fed every step, no reshuffling between epochs. Only the tf-keras import and the
TextVectorization path (no longer under ``experimental``) are updated.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

EMBED_DIM, NUM_HEADS, FF_DIM, MAXLEN, VOCAB_SIZE = 32, 2, 32, 256, 20000


class TokenAndPositionEmbedding(keras.layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = keras.layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = keras.layers.Embedding(input_dim=maxlen, output_dim=embed_dim)
        self.maxlen = maxlen

    def call(self, x):
        positions = self.pos_emb(tf.range(start=0, limit=self.maxlen, delta=1))
        return self.token_emb(x) + positions


class TransformerBlock(keras.layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = keras.layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=embed_dim, name="attn"
        )
        self.ffn = keras.Sequential(
            [keras.layers.Dense(ff_dim, activation="relu"), keras.layers.Dense(embed_dim)]
        )
        self.layernorm1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = keras.layers.Dropout(rate)
        self.dropout2 = keras.layers.Dropout(rate)

    def call(self, inputs, training=None):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output, training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output, training=training)
        return self.layernorm2(out1 + ffn_output)


def build_seed_model(num_classes: int, maxlen: int = MAXLEN) -> keras.Sequential:
    return keras.models.Sequential(
        [
            keras.layers.TextVectorization(
                max_tokens=VOCAB_SIZE, output_sequence_length=maxlen, input_shape=(1,)
            ),
            TokenAndPositionEmbedding(maxlen, VOCAB_SIZE, EMBED_DIM),
            TransformerBlock(EMBED_DIM, NUM_HEADS, FF_DIM),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dropout(0.1),
            keras.layers.Dense(20, activation="relu"),
            keras.layers.Dropout(0.1),
            keras.layers.Dense(num_classes, activation="softmax"),
        ]
    )


def string_tensors(part) -> tuple[tf.Tensor, tf.Tensor]:
    """A split's texts and labels as the seed feeds them: string and label tensors."""
    return tf.constant(part.texts, dtype=tf.string), tf.constant(part.labels)


def adapted_seed_model(train_texts, num_classes: int, maxlen: int = MAXLEN) -> keras.Sequential:
    """The seed's model with its vocabulary learned from the training texts."""
    model = build_seed_model(num_classes, maxlen)
    model.layers[0].adapt(tf.data.Dataset.from_tensor_slices(train_texts))
    return model


def fit_seed_model(model, train, validation, epochs: int, callbacks=()) -> keras.Sequential:
    """Compile and fit as the seed does: raw string batches of 128 in a fixed order."""
    model.compile(loss="sparse_categorical_crossentropy", metrics=["acc"], optimizer="adam")
    model.fit(
        tf.data.Dataset.from_tensor_slices(train).batch(128),
        validation_data=tf.data.Dataset.from_tensor_slices(validation).batch(128),
        epochs=epochs,
        callbacks=list(callbacks),
        verbose=2,
    )
    return model
