"""A loaded version's gathered calls split back into what each request alone gets.

The reference is the same signature called on each request's texts alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from kerasformer.files.export_kind import TAGGER
from kerasformer.serving.servable import Servable

pytestmark = pytest.mark.slow

# Requests of different lengths and entity counts, so a gathered call pads every list.
REQUESTS = [
    ["Angela Merkel visited Paris and Berlin with Emmanuel Macron last week .", ""],
    ["Hi"],
    ["The striker from Madrid scored twice in London .", "Paris", "EU leaders met in Rome ."],
]


def texts(request: list[str]) -> dict:
    return {"inputs": np.array([text.encode() for text in request], dtype=object)}


def assert_same_outputs(actual: dict, expected: dict) -> None:
    assert set(actual) == set(expected)
    for name, value in expected.items():
        assert actual[name].shape == value.shape, name
        if value.dtype.kind == "f":
            np.testing.assert_allclose(actual[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(actual[name], value, err_msg=name)


def test_a_taggers_gathered_call_is_cut_back_to_each_requests_own_lists(exports):
    servable = Servable.load("tagger", 1, exports["tagger"] / "1", TAGGER)
    assert servable.can_batch("serving_default")
    gathered = servable.predict("serving_default", {
        "inputs": np.concatenate([texts(request)["inputs"] for request in REQUESTS])
    })  # fmt: skip
    # The tiny tagger finds entities in some texts and none in others: lists of every length.
    assert len(set(gathered["entity_counts"].tolist())) > 1
    start = 0
    for request in REQUESTS:
        alone = servable.predict("serving_default", texts(request))
        part = servable.rows("serving_default", gathered, start, start + len(request))
        assert_same_outputs(part, alone)
        start += len(request)


def test_outputs_whose_shape_depends_on_the_batch_are_not_gathered_for_other_models(exports):
    servable = Servable.load("tagger", 1, exports["tagger"] / "1", kind=None)
    assert not servable.can_batch("serving_default")


def test_a_classifier_is_gathered_and_split_by_rows(exports):
    servable = Servable.load("news", 1, exports["classifier"], kind=None)
    assert servable.can_batch("serving_default")
    every = ["shares rose", "the team won the cup final", "", "rain"]
    gathered = servable.predict("serving_default", texts(every))
    for index in range(len(every)):
        alone = servable.predict("serving_default", texts(every[index : index + 1]))
        assert_same_outputs(servable.rows("serving_default", gathered, index, index + 1), alone)


def test_a_version_swapped_out_is_freed_with_its_batchers(exports, tmp_path):
    """Hot reloads do not pile up models: nothing keeps an old version once it is gone."""
    import asyncio
    import gc
    import shutil
    import weakref

    from kerasformer.serving import ModelServer, ServingOptions
    from kerasformer.serving.rest_format import read_predict_request

    base = tmp_path / "news"
    for version in ("1", "2"):
        skipped = shutil.ignore_patterns("model.keras", "*.json", "*.png")
        shutil.copytree(exports["classifier"], base / version, ignore=skipped)
    shutil.rmtree(base / "2")
    server = ModelServer({"news": base}, ServingOptions(poll_seconds=3600))
    server.start()
    model = server.model("news")

    async def ask_then_swap() -> weakref.ref:
        old = model.latest
        request = read_predict_request(b'{"instances": ["shares rose"]}', old.signatures, 8)
        await server.predict(old, request)
        assert old.batchers  # the request went through a batcher of its own version
        shutil.copytree(base / "1", base / "2")
        shutil.rmtree(base / "1")
        model.poll(wait_until_stable=False)
        assert model.latest.version == 2 and set(model.available) == {2}
        return weakref.ref(old)

    async def serving_on():
        # One event loop throughout, as in the server: its tasks live on between requests.
        gone = await ask_then_swap()
        for _ in range(5):
            await asyncio.sleep(0)
        gc.collect()
        return gone()

    try:
        assert asyncio.run(serving_on()) is None
    finally:
        server.stop()
