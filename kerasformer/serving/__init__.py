"""Serving exports over HTTP: TF Serving's REST API, batching, versions and a try-it page.

``kerasformer serve`` runs it; in Python, `ModelServer` holds the models, `build_app`
makes the ASGI app and `run_server` serves it with uvicorn. It needs the ``serve`` extra
(Starlette and uvicorn). Names are imported on first use (PEP 562).
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "model_server": ["ModelServer", "ServingOptions"],
        "rest_api": ["build_app"],
        "uvicorn_server": ["run_server"],
    },
)
