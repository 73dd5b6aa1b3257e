"""The HTTP/GraphQL service, its settings and the `almanac` command."""

from __future__ import annotations

from api.app import app_from_env, create_app
from api.cli import main
from api.embedded import Embedded
from api.schema import build_schema
from api.settings import Limits, Settings
from api.types.time import Order

__all__ = [
    "Embedded",
    "Limits",
    "Order",
    "Settings",
    "app_from_env",
    "build_schema",
    "create_app",
    "main",
]
