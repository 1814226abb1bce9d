"""Concurrent requests to one signature gathered into one call, as TF Serving's batching does.

The first request to arrive opens a batch; the batch closes when it holds
``max_batch_size`` examples or ``timeout`` seconds after it opened, whichever comes
first, and runs as one call (on a worker thread, so the server goes on reading
requests). Its outputs are split back, each request getting its own examples. One batch
runs at a time per signature; requests that arrive meanwhile make the next. A request
larger than ``max_batch_size`` runs alone, and a failing call fails every request in it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor

import numpy as np

# The call: columns of one gathered batch -> outputs.
# The split: (outputs, start, stop) -> the outputs of examples start:stop.


class RequestBatcher:
    """Gathers requests of one signature (and one set of scalar inputs) into calls.

    Args:
        call: Runs the signature on columns ``{input: array}``; returns ``{output: array}``.
        split: ``split(outputs, start, stop)``: one request's part of a call's outputs.
        max_batch_size: The most examples in one call.
        timeout: Seconds a batch waits, after its first request, for more.
        executor: Where calls run.
        concurrent_batches: How many calls may run at once.
    """

    def __init__(
        self,
        call: Callable[[dict], dict],
        split: Callable[[dict, int, int], dict],
        max_batch_size: int,
        timeout: float,
        executor: Executor | None = None,
        concurrent_batches: int = 2,
    ):
        self.call = call
        self.split = split
        self.max_batch_size = max_batch_size
        self.timeout = timeout
        self.executor = executor
        self.concurrent_batches = concurrent_batches
        self.pending: deque = deque()  # (columns, rows, answer) not yet in a batch
        self.arrived: asyncio.Event | None = None
        self.worker: asyncio.Task | None = None
        self.calls = 0  # how many calls ran, for the tests and the bench

    async def submit(self, columns: dict[str, np.ndarray], rows: int) -> dict[str, np.ndarray]:
        """The outputs of this request's ``rows`` examples, computed in a gathered call."""
        loop = asyncio.get_running_loop()
        if self.worker is None or self.worker.done():
            self.arrived = asyncio.Event()
            self.worker = loop.create_task(self.run())
        answer = loop.create_future()
        self.pending.append((columns, rows, answer))
        self.arrived.set()
        return await answer

    async def run(self) -> None:
        """Form and start batches until none is waiting or running, then end: an idle
        batcher holds no task, so a model version swapped out is freed with it."""
        loop = asyncio.get_running_loop()
        running: set[asyncio.Task] = set()
        while self.pending or running:
            if not self.pending or len(running) >= self.concurrent_batches:
                await self.next_change(running)
                continue
            batch = self.next_batch()
            size = sum(rows for _, rows, _ in batch)
            deadline = loop.time() + self.timeout
            # Wait for more only while the model is busy: a request that finds it idle
            # and no other waiting runs at once, as it would without batching.
            while size < self.max_batch_size and running:
                left = deadline - loop.time()
                if left <= 0:
                    break
                self.arrived.clear()
                try:
                    await asyncio.wait_for(self.arrived.wait(), left)
                except TimeoutError:
                    break
                batch += self.next_batch(self.max_batch_size - size)
                size = sum(rows for _, rows, _ in batch)
            task = loop.create_task(self.run_batch(batch))
            running.add(task)
            task.add_done_callback(running.discard)

    async def next_change(self, running: set) -> None:
        """Until a request arrives or a running batch finishes."""
        # An event, not a queue: a wait that ends otherwise can never swallow a request.
        self.arrived.clear()
        arrival = asyncio.ensure_future(self.arrived.wait())
        await asyncio.wait({arrival, *running}, return_when=asyncio.FIRST_COMPLETED)
        arrival.cancel()

    def next_batch(self, room: int | None = None) -> list:
        """Pending requests, oldest first, up to ``room`` examples (at least one request
        where ``room`` is None: a request larger than a batch runs alone)."""
        room = self.max_batch_size if room is None else room
        batch = []
        while self.pending and (not batch and room == self.max_batch_size
                                or self.pending[0][1] <= room):  # fmt: skip
            item = self.pending.popleft()
            batch.append(item)
            room -= item[1]
        return batch

    async def run_batch(self, batch: list) -> None:
        requests = [columns for columns, _, _ in batch]
        # Scalar inputs (a sampling temperature) are the same in every request of a batch.
        columns = {
            name: np.concatenate([request[name] for request in requests])
            if np.ndim(value)
            else value
            for name, value in requests[0].items()
        }
        loop = asyncio.get_running_loop()
        self.calls += 1
        try:
            outputs = await loop.run_in_executor(self.executor, self.call, columns)
        except Exception as error:
            for _, _, answer in batch:
                if not answer.done():
                    answer.set_exception(error)
            return
        start = 0
        for _, rows, answer in batch:
            if not answer.done():  # a client that went away cancels its answer
                answer.set_result(self.split(outputs, start, start + rows))
            start += rows
