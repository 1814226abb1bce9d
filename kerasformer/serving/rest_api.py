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
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from kerasformer.serving.model_server import ModelServer, NotFound
from kerasformer.serving.rest_format import BadRequest, predict_response, read_predict_request

try:  # the serve extra's fast JSON; the standard library's where it is missing
    import orjson
except ImportError:
    orjson = None

LOG = logging.getLogger("kerasformer.serving")
MODELS_PREFIX, PREDICT_SUFFIX = "/v1/models/", ":predict"
# The page loads nothing from another host: scripts, requests and pictures alike.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:"
)


class ServingJSON(JSONResponse):
    """JSON as TF Serving writes it: UTF-8, and NaN or infinity as they are."""

    def render(self, content: Any) -> bytes:
        return render_json(content)


def render_json(content: Any) -> bytes:
    """UTF-8 JSON, by orjson where it is installed (the ``serve`` extra), which writes it
    faster than the standard library (orjson writes a NaN as null, TF Serving as NaN)."""
    if orjson is not None:
        return orjson.dumps(content)
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
        if version is not None and not (version.isdigit() and model.status(int(version))):
            server.servable(name, version)  # the 404 naming the versions served
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
        # `PredictRoute` answers every POST .../:predict before the routes see it.
        raise BadRequest(f"':predict' takes a POST with a JSON body, not a {request.method}.",
                         status=405)  # fmt: skip

    async def models(request: Request) -> Response:
        return ServingJSON({"models": server.describe()})

    async def attention(request: Request) -> Response:
        from kerasformer.serving.try_page import attention_json

        model = server.model(request.path_params["name"])
        body = await receive_body(request.scope, request.receive, server.options.max_body_bytes)
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
        middleware=[Middleware(PredictRoute, server=server)],
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


class PredictRoute:
    """``POST .../:predict`` answered from ASGI directly, every other request by the app.

    The hot path of a server under load: Starlette's routing, request and response
    objects took a quarter of the event loop's time per prediction (bench/serving.py,
    profiled with py-spy), time the loop then could not spend reading the next requests.
    """

    def __init__(self, app, server: ModelServer):
        self.app = app
        self.server = server

    async def __call__(self, scope, receive, send) -> None:
        target = predict_target(scope)
        if target is None:
            await self.app(scope, receive, send)
            return
        status, content = await predict_answer(self.server, *target, scope, receive)
        body = render_json(content)
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode("ascii"))]  # fmt: skip
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def predict_target(scope) -> tuple[str, str | None] | None:
    """``(name, version)`` of a ``POST /v1/models/NAME[/versions/N]:predict``, else None."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    path = scope["path"]
    if not (path.startswith(MODELS_PREFIX) and path.endswith(PREDICT_SUFFIX)):
        return None
    # Any name or version, however odd, is looked up, never followed: what is not served
    # is a 404 naming what is.
    name, versions, version = path[len(MODELS_PREFIX) : -len(PREDICT_SUFFIX)].partition(
        "/versions/"
    )
    return name, version if versions else None


async def predict_answer(
    server: ModelServer, name: str, version: str | None, scope, receive
) -> tuple[int, dict]:
    """``(status, JSON)`` of a prediction: 200 and TF Serving's answer, or an error."""
    try:
        servable = server.servable(name, version)
        body = await receive_body(scope, receive, server.options.max_body_bytes)
        parsed = read_predict_request(body, servable.signatures, server.options.max_instances)
        outputs = await server.predict(servable, parsed)
        return 200, predict_response(outputs, parsed.signature, parsed.row_format)
    except BadRequest as error:
        return error.status, {"error": error.message}
    except Exception as error:
        LOG.exception("predicting with %s failed", name)
        return 500, {"error": f"internal error: {type(error).__name__}: {error}"}


async def receive_body(scope, receive, limit: int) -> bytes:
    """The request's body from ASGI messages, refused once longer than ``limit`` bytes."""
    for key, value in scope["headers"]:
        if key == b"content-length" and value.isdigit() and int(value) > limit:
            raise body_too_large(int(value), limit)
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BadRequest("the client went away before sending its whole request.")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise body_too_large(size, limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def split_verb(part: str) -> tuple[str, str | None]:
    """``"bbc_news:predict"`` -> ``("bbc_news", "predict")``; no colon -> ``(part, None)``."""
    name, colon, verb = part.rpartition(":")
    return (name, verb) if colon else (part, None)


def body_too_large(size: int, limit: int) -> BadRequest:
    return BadRequest(
        f"the request body is {size} bytes or more, over this server's limit of {limit} "
        "(--max-body-bytes); send fewer examples per request."
    )
