"""The local stack's HTTP app: each room's routes in the order Starlette tries them, ending with the
API Gateway emulation, which takes every other path and every method
(docs/adr/0046-local-api-gateway-every-method-and-a-bounded-queue.md)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from phoneid_dev.admin import AdminRoutes
from phoneid_dev.admission import Admission
from phoneid_dev.background import BackgroundTasks
from phoneid_dev.console_page.routes import ConsoleRoutes
from phoneid_dev.console_page.wiring import console_of
from phoneid_dev.demo import demo_routes
from phoneid_dev.devstack import DevStack
from phoneid_dev.gateway_route import GatewayRoute
from phoneid_dev.pages import page_routes
from phoneid_dev.static import web_client
from phoneid_dev.websocket_api import WebSocketApi


def build_app(dev: DevStack, *, max_in_flight: int = 32, queue_seconds: float = 1.0) -> Starlette:
    """The API takes ``max_in_flight`` requests at once and lets others wait ``queue_seconds`` for a
    place before shedding them with 429 (``phoneid_dev.admission``)."""
    console = console_of(dev)
    gateway = GatewayRoute(dev.gateway, Admission(max_in_flight, queue_seconds), console.feed)
    return Starlette(
        routes=[
            *AdminRoutes(dev).routes(),
            *ConsoleRoutes(console).routes(),
            *WebSocketApi(dev.stack).routes(),
            Mount("/sdk", app=StaticFiles(directory=web_client(), check_dir=False), name="sdk"),
            *page_routes(dev),
            *demo_routes(dev),
            Route("/{path:path}", gateway),  # every method, as API Gateway receives them all
        ],
        lifespan=BackgroundTasks(dev).lifespan,
    )
