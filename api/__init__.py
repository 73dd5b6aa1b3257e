"""The HTTP/GraphQL service, its settings and the `almanac` command."""

from __future__ import annotations

from almanac.api.app import app_from_env, create_app
from almanac.api.cli import main
from almanac.api.embedded import Embedded
from almanac.api.schema import build_schema
from almanac.api.settings import Limits, Settings
from almanac.api.types.time import Order

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
