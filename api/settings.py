from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import platformdirs

from almanac.temporal import VaultConfig
from almanac.vault import KNOWN_FIELDS, DailyNotes, StartupError, field_map
from almanac.vault.mounts import remote_mount

__all__ = ["DEMO_VAULT", "Limits", "Settings", "default_state_path"]

DEMO_VAULT = Path(__file__).parent / "demo_vault"


@dataclass(frozen=True, slots=True)
class Limits:
    """Protections of the HTTP and GraphQL layer."""

    max_body_bytes: int = 64 * 1024
    max_json_depth: int = 64
    max_tokens: int = 2000
    max_depth: int = 10
    max_aliases: int = 30
    max_fields: int = 1000  # fields a document selects, fragments expanded
    request_seconds: float = 10.0
    workers: int = 2  # GraphQL operations computed at once (threads; the rest wait their turn)
    max_connections: int = 100  # open WebSocket connections (per process)
    max_subscriptions: int = 10  # operations at once on one WebSocket connection
    send_queue: int = 16  # events queued for one subscription before its client is dropped
    send_seconds: float = 10.0  # one WebSocket message's send, before its client is dropped
    cache_bytes: int = 16 * 1024 * 1024  # answers to GET requests kept for their snapshot
    persisted_queries: int = 1000  # documents kept by hash (automatic persisted queries)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything `create_app` needs; built from CLI options, the environment and `--config`.

    Args:
        vault: The vault folder.
        db_path: The state database file.
        config: Scopes and type aliases (they shape the projections).
        tokens: SHA-256 hex of a bearer token -> the scopes it may read. Empty: no
            authentication, loopback clients only, every scope.
        graphiql: Serve GraphiQL at `/graphql` to browsers.
        introspection: Allow `__schema` / `__type` queries.
        watch: Use a file watcher so unchanged vaults cost nothing to check.
        watch_reason: Why the watcher is off, when it is (said at start-up).
    """

    vault: Path
    db_path: Path
    config: VaultConfig = field(default_factory=VaultConfig)
    tokens: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    limits: Limits = field(default_factory=Limits)
    graphiql: bool = True
    introspection: bool = True
    watch: bool = True
    watch_reason: str = ""

    @classmethod
    def build(
        cls,
        *,
        vault: str | os.PathLike[str] | None,
        state: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | None = None,
        watch: str | bool = "auto",
        environ: Mapping[str, str] | None = None,
        mountinfo: str | None = None,
    ) -> Settings:
        """Settings from explicit options; the bundled demo vault when `vault` is None.

        Args:
            watch: `auto` (a watcher unless the vault is on a network or FUSE mount, where
                changes made elsewhere raise no events), `on`, `off`; True and False are `on`
                and `off`.
            mountinfo: The mount table `auto` reads (this process's own when None).

        Raises:
            StartupError: the vault is not a folder, the config file is unusable, or `watch`
                is none of those.
        """
        environ = os.environ if environ is None else environ
        folder = Path(vault) if vault is not None else DEMO_VAULT
        if not folder.is_dir():
            raise StartupError(f"Vault {str(folder)!r} is not a folder")
        folder = folder.resolve()
        db_path = Path(state) if state is not None else default_state_path(folder)
        if db_path.resolve().is_relative_to(folder):
            raise StartupError(f"State file {str(db_path)!r} must live outside the vault")
        options = _read_config(Path(config), environ) if config is not None else {}
        watching, reason = _watch(watch, folder, mountinfo)
        return cls(
            vault=folder,
            db_path=db_path,
            watch=watching,
            watch_reason=reason,
            **options,  # type: ignore[arg-type]
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Settings from `ALMANAC_VAULT`, `ALMANAC_STATE`, `ALMANAC_CONFIG`, `ALMANAC_WATCH`
        (`auto`, `on`, `off`; `1` and `0` are `on` and `off`).

        Raises:
            StartupError: naming the bad variable.
        """
        watch = environ.get("ALMANAC_WATCH", "auto")
        watch = {"1": "on", "0": "off"}.get(watch, watch)
        if watch not in _WATCH_MODES:
            raise StartupError(f"ALMANAC_WATCH must be auto, on or off, not {watch!r}")
        return cls.build(
            vault=environ.get("ALMANAC_VAULT") or None,
            state=environ.get("ALMANAC_STATE") or None,
            config=environ.get("ALMANAC_CONFIG") or None,
            watch=watch,
            environ=environ,
        )


_WATCH_MODES = ("auto", "on", "off")


def _watch(mode: str | bool, vault: Path, mountinfo: str | None) -> tuple[bool, str]:
    """Whether to watch the vault, and why not when not."""
    if isinstance(mode, bool):
        mode = "on" if mode else "off"
    if mode not in _WATCH_MODES:
        raise StartupError(f"--watch must be auto, on or off, not {mode!r}")
    if mode == "off":
        return False, "the watcher is off (--watch off)"
    if mode == "on":
        return True, ""
    mount = remote_mount(str(vault), mountinfo)
    if mount is not None:
        return False, (
            f"the vault is on or holds a {mount.fstype} mount ({mount.source} at {mount.point}),"
            " where changes made on another machine raise no events (--watch on to watch it"
            " anyway)"
        )
    return True, ""


def default_state_path(vault: Path) -> Path:
    """A per-vault state file under the user's cache directory."""
    key = hashlib.sha256(str(vault.resolve()).encode()).hexdigest()[:16]
    return Path(platformdirs.user_cache_dir("almanac")) / f"{vault.name or 'vault'}-{key}.db"


def _read_config(path: Path, environ: Mapping[str, str]) -> dict[str, object]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise StartupError(f"Config {str(path)!r} is unusable: {exc}") from exc
    scopes = _str_map(data.get("scopes", {}), "scopes")
    aliases = _str_map(data.get("type_aliases", {}), "type_aliases")
    fields = field_map(data.get("fields", {}), known=KNOWN_FIELDS)
    daily = _daily_notes(data.get("daily_notes"))
    limits = Limits(**_limits(data.get("limits", {})))
    tokens: dict[str, tuple[str, ...]] = {}
    for entry in data.get("tokens", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("scopes"), list):
            raise StartupError("Each [[tokens]] entry needs 'scopes' and 'sha256' or 'env'")
        if "sha256" in entry:
            digest = str(entry["sha256"]).lower()
        elif "env" in entry and environ.get(str(entry["env"])):
            digest = hashlib.sha256(environ[str(entry["env"])].encode()).hexdigest()
        else:
            raise StartupError(f"Token entry {entry!r} has no 'sha256' and no set 'env' variable")
        tokens[digest] = tuple(str(s) for s in entry["scopes"])
    graphql = data.get("graphql", {})
    return {
        "config": VaultConfig(
            MappingProxyType(scopes), MappingProxyType(aliases), MappingProxyType(fields), daily
        ),
        "tokens": MappingProxyType(tokens),
        "limits": limits,
        "graphiql": bool(graphql.get("graphiql", True)),
        "introspection": bool(graphql.get("introspection", True)),
    }


def _str_map(value: object, name: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise StartupError(f"Config [{name}] must map names to strings")
    return dict(value)


def _daily_notes(value: object) -> DailyNotes | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not set(value) <= {"folder", "format"}:
        raise StartupError("Config [daily_notes] accepts only folder and format")
    folder, format = value.get("folder"), value.get("format", "YYYY-MM-DD")
    if not isinstance(folder, str) or not isinstance(format, str):
        raise StartupError("Config [daily_notes] needs folder (a string); format is a string")
    return DailyNotes.of(folder, format)


def _limits(value: object) -> dict[str, Any]:  # Any: int or float, as Limits declares
    allowed = set(Limits.__dataclass_fields__)
    if not isinstance(value, dict) or not set(value) <= allowed:
        raise StartupError(f"Config [limits] accepts only {', '.join(sorted(allowed))}")
    return {k: v for k, v in value.items() if isinstance(v, int | float) and v > 0}
