"""The models a server holds, what it does with a request, and its polling of their versions.

`ModelServer` is everything but HTTP: `kerasformer.serving.rest_api` turns its answers
into TF Serving's URLs and JSON. A request never names a file: the model's name is
looked up among the names the server was started with, and a version is a number looked
up among the versions loaded.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerasformer.serving.model_versions import ServedModel
from kerasformer.serving.request_batcher import RequestBatcher
from kerasformer.serving.rest_format import BadRequest, PredictRequest
from kerasformer.serving.servable import Servable

LOG = logging.getLogger("kerasformer.serving")


@dataclass(frozen=True)
class ServingOptions:
    """How `kerasformer serve` serves: batching, limits on a request, and polling.

    Args:
        batching: Gather concurrent requests to one signature into one call.
        max_batch_size: The most examples in one gathered call.
        batch_timeout_ms: How long a batch waits for more requests after its first.
        max_instances: The most examples one request may hold.
        max_body_bytes: The largest request body read.
        poll_seconds: How often each model's folder is looked at for new versions.

    Raises:
        ValueError: a size or time that is not positive.

    Examples:
        >>> ServingOptions(max_batch_size=32).batch_timeout_ms
        2.0
    """

    batching: bool = True
    max_batch_size: int = 64
    batch_timeout_ms: float = 2.0
    max_instances: int = 1024
    max_body_bytes: int = 8 * 2**20
    poll_seconds: float = 1.0

    def __post_init__(self):
        for name in ("max_batch_size", "max_instances", "max_body_bytes", "poll_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be above 0, got {getattr(self, name)!r}.")
        if not self.batch_timeout_ms >= 0:
            raise ValueError(f"batch_timeout_ms must be 0 or more, got {self.batch_timeout_ms!r}.")


class NotFound(BadRequest):
    """An unknown model or version: HTTP 404, naming what is served."""

    def __init__(self, message: str):
        super().__init__(message, status=404)


class ModelServer:
    """The models a server holds, and what it does with a request, HTTP aside.

    `start` loads every version there is (a model that fails is reported, the others
    serve) and starts polling for new ones; `stop` ends the polling. `build_app` puts
    it behind TF Serving's REST API.

    Args:
        models: ``{name: folder}``: a kerasformer export, or a TF Serving model base path
            of numbered version folders, for each name served.
        options: Batching, limits and polling (None: `ServingOptions` ' defaults).

    Examples:
        >>> server = ModelServer({"news": "saved_models/bbc_news-transformer"})
        >>> server.start()
        >>> server.model("news").latest.version
        1
        >>> server.stop()
    """

    def __init__(self, models: dict[str, str | Path], options: ServingOptions | None = None):
        self.options = options or ServingOptions()
        self.models = {name: ServedModel(name, path) for name, path in models.items()}
        # TensorFlow releases the GIL in its kernels: calls run on threads of their own.
        self.executor = ThreadPoolExecutor(max_workers=max(4, 2 * (os.cpu_count() or 1)),
                                           thread_name_prefix="kerasformer-serve")  # fmt: skip
        self._stopping = threading.Event()
        self._poller: threading.Thread | None = None

    def start(self) -> None:
        for model in self.models.values():
            model.poll(wait_until_stable=False)
        self._poller = threading.Thread(target=self._poll, name="kerasformer-poll", daemon=True)
        self._poller.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._poller is not None:
            self._poller.join(timeout=30)
        self.executor.shutdown(wait=False, cancel_futures=False)

    def _poll(self) -> None:
        while not self._stopping.wait(self.options.poll_seconds):
            for model in self.models.values():
                try:
                    model.poll()
                except Exception:  # polling must outlive anything a folder does
                    LOG.exception("%s: polling its folder failed", model.name)

    def model(self, name: str) -> ServedModel:
        if name not in self.models:
            raise NotFound(
                f"no model {name!r} is served here; this server serves "
                f"{', '.join(sorted(self.models))}."
            )
        return self.models[name]

    def servable(self, name: str, version: str | None) -> Servable:
        """The version asked for (the latest where None) of a served model."""
        model = self.model(name)
        available = model.available
        if version is None:
            if not available:
                raise BadRequest(self.unavailable(model), status=503)
            return available[max(available)]
        if not (version.isascii() and version.isdigit()) or int(version) not in available:
            served = ", ".join(str(number) for number in sorted(available)) or "none"
            raise NotFound(f"model {name!r} has no version {version!r} loaded; versions: {served}.")
        return available[int(version)]

    def unavailable(self, model: ServedModel) -> str:
        reasons = [state.error for state in model.status() if state.error]
        reason = model.problem or (reasons[0] if reasons else "its versions are still loading")
        return f"model {model.name!r} has no version to serve: {reason}."

    async def predict(self, servable: Servable, request: PredictRequest) -> dict[str, np.ndarray]:
        """The request's outputs: from a gathered call where batching is on and can split."""
        signature = request.signature.name
        if (
            self.options.batching
            and request.rows
            and request.signature.batched_inputs
            and servable.can_batch(signature)
        ):
            return await self.batcher(servable, request).submit(request.columns, request.rows)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.executor, servable.predict, signature, request.columns
        )

    def batcher(self, servable: Servable, request: PredictRequest) -> RequestBatcher:
        key = (request.signature.name, request.scalars_key())
        if key not in servable.batchers:
            signature = request.signature.name
            servable.batchers[key] = RequestBatcher(
                lambda columns: servable.predict(signature, columns),
                lambda outputs, start, stop: servable.rows(signature, outputs, start, stop),
                self.options.max_batch_size,
                self.options.batch_timeout_ms / 1000,
                self.executor,
            )
        return servable.batchers[key]

    def describe(self) -> list[dict]:
        """Each model's name, kind, versions and signatures: what the try page shows."""
        described = []
        for name, model in sorted(self.models.items()):
            latest = model.latest
            described.append({
                "name": name,
                "kind": model.kind.name if model.kind else None,
                "version": latest.version if latest else None,
                "versions": [state.status_json() for state in model.status()],
                "problem": None if latest else self.unavailable(model),
                "signatures": {} if latest is None else {
                    signature: {"inputs": list(spec.inputs), "outputs": list(spec.outputs)}
                    for signature, spec in latest.signatures.items()
                    if not signature.startswith("__")
                },
            })  # fmt: skip
        return described
