"""Checks that kerasformer's layers compute the same under tf-keras and Keras 3 (TF, JAX).

Kept outside ``tests/layers`` on purpose: each test here starts its own processes, one per
Keras configuration, so it runs once, in the main (tf-keras) test session.
"""
