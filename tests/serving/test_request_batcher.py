"""Concurrent requests gathered into calls: sizes, waiting, splitting back, failures.

The reference is the call run on each request alone: a NumPy function, so each
request's answer can be told from any other's.
"""

import asyncio

import numpy as np
import pytest

from kerasformer.serving.request_batcher import RequestBatcher


def recording_call(calls: list):
    def call(columns):
        calls.append(len(columns["x"]))
        return {"double": columns["x"] * 2, "first": np.full(len(columns["x"]), columns["x"][0])}

    return call


def split(outputs, start, stop):
    return {name: value[start:stop] for name, value in outputs.items()}


def run_requests(batcher: RequestBatcher, sizes: list[int], stagger: float = 0.0):
    async def one(index, size):
        await asyncio.sleep(stagger * index)
        return await batcher.submit({"x": np.arange(size) + 100 * index}, size)

    async def all_of_them():
        return await asyncio.gather(*(one(i, size) for i, size in enumerate(sizes)))

    return asyncio.run(all_of_them())


def test_concurrent_requests_share_one_call_and_each_gets_its_own_rows():
    calls = []
    batcher = RequestBatcher(recording_call(calls), split, max_batch_size=64, timeout=0.05)
    answers = run_requests(batcher, [1, 3, 2, 1])
    assert calls == [7]
    for index, (size, answer) in enumerate(zip([1, 3, 2, 1], answers, strict=True)):
        np.testing.assert_array_equal(answer["double"], (np.arange(size) + 100 * index) * 2)
    # Each answer came from the same call: its first row is the first request's.
    assert {int(answer["first"][0]) for answer in answers} == {0}


def test_a_batch_never_holds_more_than_max_batch_size_examples():
    calls = []
    batcher = RequestBatcher(recording_call(calls), split, max_batch_size=4, timeout=0.05)
    answers = run_requests(batcher, [2, 2, 3, 1, 1])
    assert sum(calls) == 9 and max(calls) <= 4
    assert [len(answer["double"]) for answer in answers] == [2, 2, 3, 1, 1]


def test_a_request_larger_than_the_batch_runs_alone():
    calls = []
    batcher = RequestBatcher(recording_call(calls), split, max_batch_size=4, timeout=0.01)
    (answer,) = run_requests(batcher, [10])
    assert calls == [10] and len(answer["double"]) == 10


def test_without_waiting_requests_that_arrive_apart_run_apart():
    calls = []
    batcher = RequestBatcher(recording_call(calls), split, max_batch_size=64, timeout=0.0)
    run_requests(batcher, [1, 1, 1], stagger=0.05)
    assert calls == [1, 1, 1]


def test_a_failing_call_fails_every_request_in_it_and_the_next_batch_still_runs():
    state = {"fail": True}

    def call(columns):
        if state.pop("fail", False):
            raise ValueError("boom")
        return {"double": columns["x"] * 2}

    batcher = RequestBatcher(call, split, max_batch_size=8, timeout=0.05)

    async def scenario():
        first = await asyncio.gather(
            batcher.submit({"x": np.arange(2)}, 2), batcher.submit({"x": np.arange(1)}, 1),
            return_exceptions=True,
        )  # fmt: skip
        second = await batcher.submit({"x": np.arange(3)}, 3)
        return first, second

    first, second = asyncio.run(scenario())
    assert all(isinstance(error, ValueError) for error in first)
    np.testing.assert_array_equal(second["double"], [0, 2, 4])


def test_scalar_inputs_are_passed_once_not_stacked():
    seen = []

    def call(columns):
        seen.append(columns["temperature"])
        return {"y": columns["x"]}

    batcher = RequestBatcher(call, split, max_batch_size=8, timeout=0.05)

    async def scenario():
        columns = {"x": np.arange(2), "temperature": np.array(np.float32(0.5))}
        return await asyncio.gather(*(batcher.submit(dict(columns), 2) for _ in range(3)))

    asyncio.run(scenario())
    assert len(seen) == 1 and np.ndim(seen[0]) == 0 and float(seen[0]) == pytest.approx(0.5)


def test_a_request_that_finds_the_model_idle_does_not_wait_for_company():
    import time

    calls = []
    batcher = RequestBatcher(recording_call(calls), split, max_batch_size=64, timeout=5.0)
    started = time.perf_counter()
    run_requests(batcher, [1])
    assert calls == [1] and time.perf_counter() - started < 2.5


def test_requests_arriving_while_a_batch_computes_form_the_next_batch():
    import time

    calls = []

    def slow_call(columns):
        time.sleep(0.5)
        return recording_call(calls)(columns)

    # The three later requests come 20, 40 and 60 ms after the first; the batch they make
    # waits 400 ms from the first of them (a wide margin on a busy machine).
    batcher = RequestBatcher(slow_call, split, max_batch_size=64, timeout=0.4)
    answers = run_requests(batcher, [1, 1, 1, 1], stagger=0.02)
    # The first ran at once; the three that came while it computed were gathered.
    assert calls == [1, 3]
    assert [int(answer["double"][0]) for answer in answers] == [0, 200, 400, 600]


def test_an_idle_batcher_keeps_no_task_alive_and_starts_again_on_the_next_request():
    # A task left waiting would hold the batcher, its call and so its model version.
    calls = []
    batcher = RequestBatcher(recording_call(calls), split, max_batch_size=8, timeout=0.01)

    async def scenario():
        await batcher.submit({"x": np.arange(2)}, 2)
        for _ in range(5):
            await asyncio.sleep(0)
        idle = batcher.worker.done()
        again = await batcher.submit({"x": np.arange(3)}, 3)
        return idle, again

    idle, again = asyncio.run(scenario())
    assert idle and calls == [2, 3]
    np.testing.assert_array_equal(again["double"], [0, 2, 4])
