"""The serving functions' settings for a command line's one-shot calls."""

import tensorflow as tf

from kerasformer.loading.serving_function import without_graph_rewrites


def rewrites_off() -> bool:
    return tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)


def test_graph_rewrites_are_off_in_the_block_and_as_before_after_it():
    assert not rewrites_off()
    with without_graph_rewrites():
        assert rewrites_off()
        # A function first called here still computes what it computes.
        square = tf.function(lambda x: tf.reduce_sum(x * x))
        assert float(square(tf.constant([1.0, 2.0, 3.0]))) == 14.0
    assert not rewrites_off()


def test_a_callers_own_setting_survives_the_block_and_an_error_in_it():
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    try:
        with without_graph_rewrites():
            assert rewrites_off()
        assert rewrites_off()
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False})
    try:
        with without_graph_rewrites():
            raise RuntimeError("a failing command")
    except RuntimeError:
        pass
    assert not rewrites_off()
