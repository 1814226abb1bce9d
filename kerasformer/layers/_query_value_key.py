"""The base of attention layers whose weights depend on their query's, value's and key's sizes."""

from __future__ import annotations

from ._base import Layer


class QueryValueKeyLayer(Layer):
    """An attention layer of ``call(query, value, key=None, ...)`` with weights sized by all three.

    Keras 3 passes every input's shape to `build`; tf-keras passes the query's only, so
    then the weights are made on the first call, when value and key are known. The shapes
    are the build config, so that a loaded layer has its weights before they are read.
    Subclasses make their weights in ``_make_weights``. The output carries the query's
    mask.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self._shapes = None

    def build(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is not None:
            self._build_weights(query_shape, value_shape, key_shape or value_shape)
        self.built = True

    def _build_weights(self, query_shape, value_shape, key_shape):
        self._shapes = {
            "query_shape": tuple(query_shape),
            "value_shape": tuple(value_shape),
            "key_shape": tuple(key_shape),
        }
        self._make_weights(query_shape, value_shape, key_shape)

    def _make_weights(self, query_shape, value_shape, key_shape):
        raise NotImplementedError

    def _key_after_building(self, query, value, key):
        """``key``, or ``value`` when it is None, once the weights are made for the three."""
        key = value if key is None else key
        if self._shapes is None:
            self._build_weights(query.shape, value.shape, key.shape)
        return key

    def get_build_config(self):
        return self._shapes

    def build_from_config(self, config):
        if config:
            self.build(**config)

    def compute_mask(self, inputs, mask=None):
        return mask
