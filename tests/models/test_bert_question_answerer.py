"""The span-labelling head: logits kept only where an answer may start or end."""

import numpy as np

from kerasformer.models.bert_question_answerer import (
    MASKED_LOGIT,
    SpanLogitMask,
    build_bert_question_answerer,
)


def expected_keep(mask, type_ids):
    """[CLS], and second-segment tokens other than the closing [SEP], by plain loops."""
    keep = np.zeros(mask.shape, bool)
    for row in range(mask.shape[0]):
        last_real = max(np.flatnonzero(mask[row]))
        keep[row, 0] = True
        for p in range(mask.shape[1]):
            if mask[row, p] and type_ids[row, p] == 1 and p != last_real:
                keep[row, p] = True
    return keep


def test_only_cls_and_context_tokens_keep_their_logits():
    rng = np.random.default_rng(0)
    # [CLS] q q [SEP] c c c [SEP] pad pad, and [CLS] q [SEP] c [SEP] pad ...
    mask = np.array([[1] * 8 + [0] * 2, [1] * 5 + [0] * 5], np.int32)
    type_ids = np.array([[0, 0, 0, 0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 0, 0, 0, 0, 0]], np.int32)
    logits = rng.normal(size=(2, 10, 2)).astype(np.float32)
    start, end = SpanLogitMask()(logits, mask, type_ids)
    keep = expected_keep(mask, type_ids)
    np.testing.assert_array_equal(start.numpy(), np.where(keep, logits[..., 0], MASKED_LOGIT))
    np.testing.assert_array_equal(end.numpy(), np.where(keep, logits[..., 1], MASKED_LOGIT))


def test_the_model_gives_float32_start_and_end_logits(tiny_hub_bert):
    model = build_bert_question_answerer(str(tiny_hub_bert.encoder))
    inputs = {
        "input_word_ids": np.array([[2, 5, 3, 6, 7, 3, 0]], np.int32),
        "input_mask": np.array([[1, 1, 1, 1, 1, 1, 0]], np.int32),
        "input_type_ids": np.array([[0, 0, 0, 1, 1, 1, 0]], np.int32),
    }
    outputs = model(inputs)
    assert set(outputs) == {"start_logits", "end_logits"}
    for logits in outputs.values():
        assert logits.shape == (1, 7) and logits.dtype == "float32"
        kept = logits.numpy()[0] > MASKED_LOGIT
        np.testing.assert_array_equal(kept, [True, False, False, True, True, False, False])
    assert model.output_names == ["start_logits", "end_logits"] or set(model.output_names) == {
        "start_logits",
        "end_logits",
    }
