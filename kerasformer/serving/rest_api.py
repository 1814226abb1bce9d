"""TF Serving's REST API over a `ModelServer`, as a Starlette app, and the try-it page.

    GET  /v1/models/NAME[/versions/N]             the versions' status
    GET  /v1/models/NAME[/versions/N]/metadata    the signatures
    POST /v1/models/NAME[/versions/N]:predict     {"instances": [...]} or {"inputs": ...}

Every error is JSON, ``{"error": "..."}``: 400 for a request that cannot be read, 404
for a model or version not served (naming what is), 503 for a model with no version
loaded. The page at ``/`` (`kerasformer.serving.try_page`) reads ``/kerasformer/models``
for what is served and ``/kerasformer/models/NAME/attention`` for its heatmap.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from kerasformer.serving.model_server import ModelServer, NotFound
from kerasformer.serving.rest_format import BadRequest, predict_response, read_predict_request

LOG = logging.getLogger("kerasformer.serving")
# The page loads nothing from another host: scripts, requests and pictures alike.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:"
)


class ServingJSON(JSONResponse):
    """JSON as TF Serving writes it: UTF-8, and NaN or infinity as they are."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_response(error: BadRequest) -> Response:
    return ServingJSON({"error": error.message}, status_code=error.status)


def build_app(server: ModelServer) -> Starlette:
    """The Starlette app serving ``server``'s models; `start` and `stop` follow the app's life.

    Args:
        server: The models and options to serve.

    Returns:
        An ASGI app for uvicorn (or any ASGI server).

    Examples:
        >>> from kerasformer.serving import ModelServer
        >>> app = build_app(ModelServer({"bbc_news": "saved_models/bbc_news-transformer"}))
        >>> sorted(route.path for route in app.routes)[:2]
        ['/', '/kerasformer/models']
    """

    async def model_status(request: Request) -> Response:
        name, version = request.path_params["name"], request.path_params.get("version")
        model = server.model(name)
        if version is not None:
            server.servable(name, version)  # 404 for a version not loaded
        states = model.status(None if version is None else int(version))
        if model.problem and not states:
            return ServingJSON({"model_version_status": [{
                "version": "0", "state": "END",
                "status": {"error_code": "NOT_FOUND", "error_message": model.problem},
            }]})  # fmt: skip
        return ServingJSON({"model_version_status": [state.status_json() for state in states]})

    async def metadata(request: Request) -> Response:
        servable = server.servable(request.path_params["name"], request.path_params.get("version"))
        return ServingJSON(servable.metadata())

    async def predict(request: Request, name: str, version: str | None) -> Response:
        servable = server.servable(name, version)
        body = await read_body(request, server.options.max_body_bytes)
        parsed = read_predict_request(body, servable.signatures, server.options.max_instances)
        outputs = await server.predict(servable, parsed)
        return ServingJSON(predict_response(outputs, parsed.signature, parsed.row_format))

    async def model_verb(request: Request) -> Response:
        """``/v1/models/NAME`` (status) and ``/v1/models/NAME:predict``."""
        name, verb = split_verb(request.path_params["name_verb"])
        if verb is None:
            request.path_params["name"] = name
            return await model_status(request)
        return await verb_response(request, name, None, verb)

    async def version_verb(request: Request) -> Response:
        """``/v1/models/NAME/versions/N`` (status) and ``.../versions/N:predict``."""
        version, verb = split_verb(request.path_params["version_verb"])
        if verb is None:
            request.path_params["version"] = version
            return await model_status(request)
        return await verb_response(request, request.path_params["name"], version, verb)

    async def verb_response(request: Request, name: str, version: str | None, verb: str):
        if verb != "predict":
            server.model(name)
            raise BadRequest(
                f"':{verb}' is not served here; this server answers ':predict' (TF Serving's "
                "':classify' and ':regress' take tf.Example protos, which these exports do not)."
            )
        if request.method != "POST":
            raise BadRequest(f"':predict' takes a POST with a JSON body, not a {request.method}.",
                             status=405)  # fmt: skip
        return await predict(request, name, version)

    async def models(request: Request) -> Response:
        return ServingJSON({"models": server.describe()})

    async def attention(request: Request) -> Response:
        from kerasformer.serving.try_page import attention_json

        model = server.model(request.path_params["name"])
        body = await read_body(request, server.options.max_body_bytes)
        return ServingJSON(await attention_json(model, body, server.executor))

    async def page(request: Request) -> Response:
        from kerasformer.serving.try_page import page_html

        # As the page's own meta tag says, sent where it also covers what the page loads.
        return HTMLResponse(page_html(), headers={"Content-Security-Policy": PAGE_POLICY})

    async def plotly_js(request: Request) -> Response:
        from kerasformer.serving.try_page import plotly_js_path

        return FileResponse(plotly_js_path(), media_type="text/javascript")

    async def bad_request(request: Request, error: BadRequest) -> Response:
        return error_response(error)

    async def not_found(request: Request, error: Exception) -> Response:
        return error_response(NotFound(
            f"no such address: {request.url.path}; this server serves "
            f"{', '.join(sorted(server.models))} at /v1/models/NAME (see GET / for a page)."
        ))  # fmt: skip

    async def internal_error(request: Request, error: Exception) -> Response:
        LOG.exception("%s %s failed", request.method, request.url.path)
        return ServingJSON({"error": f"internal error: {type(error).__name__}: {error}"},
                           status_code=500)  # fmt: skip

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/kerasformer/models", models, methods=["GET"]),
        Route("/kerasformer/models/{name}/attention", attention, methods=["POST"]),
        Route("/kerasformer/plotly.min.js", plotly_js, methods=["GET"]),
        Route("/v1/models/{name}/metadata", metadata, methods=["GET"]),
        Route("/v1/models/{name}/versions/{version}/metadata", metadata, methods=["GET"]),
        Route("/v1/models/{name}/versions/{version_verb}", version_verb, methods=["GET", "POST"]),
        Route("/v1/models/{name_verb}", model_verb, methods=["GET", "POST"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={
            BadRequest: bad_request,
            404: not_found,
            405: not_found,
            Exception: internal_error,
        },  # fmt: skip
        lifespan=lambda app: serving_lifespan(server),
    )


@contextlib.asynccontextmanager
async def serving_lifespan(server: ModelServer):
    """Load the models before the first request is read; stop polling at shutdown."""
    server.start()
    try:
        yield
    finally:
        server.stop()


def split_verb(part: str) -> tuple[str, str | None]:
    """``"bbc_news:predict"`` -> ``("bbc_news", "predict")``; no colon -> ``(part, None)``."""
    name, colon, verb = part.rpartition(":")
    return (name, verb) if colon else (part, None)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused as soon as it is longer than ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise body_too_large(int(declared), limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise body_too_large(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def body_too_large(size: int, limit: int) -> BadRequest:
    return BadRequest(
        f"the request body is {size} bytes or more, over this server's limit of {limit} "
        "(--max-body-bytes); send fewer examples per request."
    )
