"""The settings reference, `docs/settings.md`, written from the settings class by `scholarloom settings reference`:
each setting's environment variable, type, default and description (the field's own), grouped as below.
`tests/scholarloom/test_settings_reference.py` fails when a setting has no description, belongs to no group, or the
page differs from what this writes."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

PREFIX, NESTED = "SCHOLARLOOM_", "__"  # `Settings.model_config`: env_prefix, env_nested_delimiter

# The page's sections, in order: a title and the settings' fields it lists (a group such as `mcp` lists its own).
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Storage", ("data_dir", "database_url", "shared_models_dir", "qdrant_url", "qdrant_api_key", "collection")),
    ("Embedding and the index", ("embed_threads", "embed_precision", "embed_device", "embed_workers",
                                 "index_vectors", "index_batch", "vector_book")),
    ("The language model", ("llm", "llm_api_base", "llm_api_key", "llm_tools", "llm_citations", "llm_process",
                            "llm_daily_tokens", "agent")),
    ("The web server and sign-in", ("host", "port", "public_url", "forwarded_allow_ips", "auth_secret", "demo",
                                    "session_hours", "oauth_signup")),
    ("Logs and metrics", ("log_format", "log_level", "metrics_token")),
    ("Limits per user and address", ("on_demand", "on_demand_daily", "upload_max_mb", "upload_max_pages",
                                     "upload_quota_mb", "public_rate", "token_rate", "user_jobs", "mcp")),
    ("A busy server: turns and lines", ("chat", "sign_in")),
    ("Jobs, updates and Zotero", ("update_every", "zotero_sync_files", "zotero_sync_minutes")),
    ("E-mail digests of saved questions", ("smtp_host", "smtp_port", "smtp_user", "smtp_password", "smtp_from",
                                           "smtp_starttls")),
    ("Harvested services", ("sources",)),
)  # fmt: skip

HEAD = """# Settings reference

<!-- Written by `scholarloom settings reference > docs/settings.md` from scholarloom/settings.py; do not edit. -->

ScholarLoom reads every setting from an environment variable: `SCHOLARLOOM_` and the setting's name in capitals; a
setting of a group joins the group's name with `__` (`SCHOLARLOOM_AGENT__MAX_TOOL_ROUNDS`). A list is written as
JSON (`SCHOLARLOOM_SOURCES__PRIVATE_HOSTS='["localhost:23119"]'`). Secrets are never logged nor kept in a backup.
How to choose them for a deployment: [the operator guide](operators.md).
"""


def _type(annotation) -> str:
    """A field's type as a reader writes it: `int8` | `float32`, int (at least 1), optional, secret."""
    if typing.get_origin(annotation) is typing.Literal:
        return " \\| ".join(f"`{value}`" for value in typing.get_args(annotation))
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " \\| ".join(_type(kind) for kind in kinds)
    if typing.get_origin(annotation) is list:
        return f"list of {_type(typing.get_args(annotation)[0])}"
    if annotation is SecretStr:
        return "secret"
    if annotation is Path:
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(field: FieldInfo) -> str:
    words = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    found = [f"{words[key]} {getattr(m, key):,}" for m in field.metadata for key in words if hasattr(m, key)]
    return f" ({', '.join(found)})" if found else ""


def _default(field: FieldInfo, group: BaseModel | None = None, name: str = "") -> str:
    """The setting's default: the field's own, or, in a group, the group's default value of it (the chat's turns and
    the MCP calls' are one class with different defaults)."""
    if group is not None:
        value = getattr(group, name)
    else:
        value = field.default_factory() if field.default_factory is not None else field.default
    if value is None or value == []:
        return "unset"
    if isinstance(value, bool | list):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def _escaped(text: str) -> str:
    """Markdown for a table cell: `|` escaped, and `<...>` outside code spans kept as text, not read as a tag."""
    spans = text.split("`")
    spans[::2] = [span.replace("<", "&lt;").replace(">", "&gt;") for span in spans[::2]]
    return "`".join(spans).replace("|", "\\|")


def rows(
    model: type[BaseModel], prefix: str = PREFIX, names: tuple[str, ...] | None = None, group: BaseModel | None = None
) -> Iterator[str]:
    """A table row per setting of `model` (of `names` only, when given); a group's settings in its place, with the
    group's defaults (`group`: its default value)."""
    for name in names or tuple(model.model_fields):
        field = model.model_fields[name]
        variable = f"{prefix}{name.upper()}"
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            value = field.default_factory() if field.default_factory is not None else field.default
            yield from rows(field.annotation, variable + NESTED, group=value if isinstance(value, BaseModel) else None)
            continue
        if not (field.description or "").strip():
            raise ValueError(f"{variable} has no description: give its field one (Field(description=...))")
        description = _escaped(" ".join(field.description.split()))
        default = _default(field, group, name)
        yield f"| `{variable}` | {_type(field.annotation)}{_bounds(field)} | {default} | {description} |"


def reference() -> str:
    """The whole page, as `docs/settings.md` holds it."""
    from scholarloom.settings import Settings

    listed = [name for _title, names in SECTIONS for name in names]
    unlisted = [name for name in Settings.model_fields if name not in listed]
    if unlisted or len(listed) != len(set(listed)):
        raise ValueError(f"each setting belongs to one section of scholarloom/settings_doc.py: {unlisted or listed}")
    parts = [HEAD]
    for title, names in SECTIONS:
        table = "\n".join(rows(Settings, names=names))
        parts.append(f"## {title}\n\n| variable | type | default | description |\n| --- | --- | --- | --- |\n{table}\n")
    return "\n".join(parts)
