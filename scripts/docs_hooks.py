"""mkdocs hooks (mkdocs.yml ``hooks:``): the reference pages are generated from their one source
each time the site is built, never copied by hand.

* ``reference/cli.md``: the help of ``agentic-search`` and of every subcommand, rendered by the
  CLI's own argparse parser (:func:`agentic_search_cli.main.build_parser`).
* ``reference/http-api.md`` (and ``reference/openapi.json``): the OpenAPI document the HTTP API
  serves at ``GET /openapi.json`` (:func:`agentic_search_lambda.api.openapi_document`).
* ``reference/configuration.md``: every field of :class:`agentic_search.config.Settings` and
  :class:`agentic_search_lambda.settings.LambdaSettings` (environment variable, type, bounds,
  default, description), and every key of a domain's ``tuning:`` block
  (:class:`agentic_search.logic.tuning.Tuning`).
* ``explanation/architecture.md``: ARCHITECTURE.md at the repository's root, as it is.

A page may link to any file of the repository by its relative path (right on GitHub); the
build sends a link to ARCHITECTURE.md to its page and any other to the file itself
(:func:`repository_links`), and a link to a file that does not exist still fails it.

The same functions render the pages for ``tests/unit/test_docs_reference.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GENERATED = "Generated when the site is built,"


@contextlib.contextmanager
def help_width(columns: int = 100) -> Iterator[None]:
    """argparse wraps help at the terminal's width (``COLUMNS``): one width for every page,
    whatever terminal builds the site; the environment is put back after."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def cli_page() -> str:
    """The CLI reference: ``--help`` of the program and of each subcommand, in parser order."""
    from agentic_search_cli import main

    with help_width():
        return _cli_page(main.build_parser())


def _cli_page(parser: argparse.ArgumentParser) -> str:
    out = [
        "# CLI reference",
        "",
        f"{GENERATED} from the command's own parser (`agentic_search_cli.main.build_parser`):",
        "what `agentic-search COMMAND --help` prints. Exit codes: 0 success, 1 a runtime failure",
        "(store, model, every source failing), 2 a usage error, always with a one-line reason.",
        "",
        "## agentic-search",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
    ]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += ["", f"## agentic-search {name}", "", "```text"]
                out += [sub.format_help().rstrip(), "```"]
    return "\n".join(out) + "\n"


def openapi_json() -> str:
    """The OpenAPI document of the HTTP API, as ``GET /openapi.json`` serves it."""
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # Powertools' clients at import
    from agentic_search_lambda.api import openapi_document

    return json.dumps(json.loads(openapi_document()), indent=2) + "\n"


def _schema_type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return " or ".join(_schema_type(s) for s in schema[key])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_schema_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    return str(kind)


#: JSON Schema keywords that bound a value, and how the page writes them.
LIMITS = {
    "minimum": "≥ {}",
    "exclusiveMinimum": "> {}",
    "maximum": "≤ {}",
    "exclusiveMaximum": "< {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "pattern": "matches `{}`",
    "default": "default `{}`",
}


def _number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _limits(schema: dict[str, Any]) -> str:
    """The bounds and default of a property (also inside ``anyOf``), e.g. ``≥ 1, ≤ 100``."""
    found = []
    for part in (schema, *schema.get("anyOf", [])):
        found += [fmt.format(_number(part[k])) for k, fmt in LIMITS.items() if k in part]
    return ", ".join(found)


def _anchor(name: str) -> str:
    return "schema-" + name.lower().replace("_", "-")


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _row(*cells: object) -> str:
    """One Markdown table row; text cells are put on one line with their pipes escaped."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _yes(flag: object) -> str:
    return "yes" if flag else "no"


def http_api_page(document: str) -> str:
    """The HTTP API reference: routes, parameters, bodies, responses and schemas of the
    OpenAPI document ``document`` (JSON)."""
    doc = json.loads(document)
    info = doc.get("info", {})
    out = [
        "# HTTP API reference",
        "",
        f"{GENERATED} from the OpenAPI document the API serves at `GET /openapi.json`",
        "(`agentic_search_lambda.api.openapi_document`); the document itself:",
        "[openapi.json](openapi.json). Deployed, every route sits behind the stack's authorizer;",
        "`agentic-search serve` answers the same routes on loopback without one.",
        "",
        f"**{info.get('title', 'API')}** {info.get('version', '')}".rstrip(),
    ]
    if info.get("description"):
        out += ["", info["description"]]
    schemes = doc.get("components", {}).get("securitySchemes", {})
    if schemes:
        out += ["", "## Security", "", "| scheme | type | description |", "|---|---|---|"]
        for name, scheme in schemes.items():
            kind = scheme.get("x-amazon-apigateway-authtype") or scheme.get("scheme") or ""
            desc = _cell(scheme.get("description", ""))
            out.append(_row(f"`{name}`", f"{scheme.get('type', '')} {kind}", desc))
    out += ["", "## Routes"]
    for path, operations in doc.get("paths", {}).items():
        for method, op in operations.items():
            out += ["", f"### {method.upper()} `{path}`", ""]
            if op.get("summary") and op["summary"] != f"{method.upper()} {path}":
                out.append(f"**{op['summary']}**")
                out.append("")
            if op.get("description"):
                out += [op["description"], ""]
            params = op.get("parameters", [])
            if params:
                out += [
                    "| parameter | in | required | type | description |",
                    "|---|---|---|---|---|",
                ]
                for p in params:
                    out.append(
                        _row(
                            f"`{p['name']}`",
                            p.get("in", ""),
                            _yes(p.get("required")),
                            _schema_type(p.get("schema", {})),
                            _cell(p.get("description", "")),
                        )
                    )
                out.append("")
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                out += [f"Request body (`{media}`): {_schema_type(content.get('schema', {}))}", ""]
            out += ["| status | description | body |", "|---|---|---|"]
            for status, response in op.get("responses", {}).items():
                bodies = ", ".join(
                    f"{_schema_type(c.get('schema', {}))} (`{m}`)"
                    for m, c in response.get("content", {}).items()
                )
                out.append(f"| {status} | {_cell(response.get('description', ''))} | {bodies} |")
    schemas = doc.get("components", {}).get("schemas", {})
    if schemas:
        out += ["", "## Schemas"]
    for name, schema in schemas.items():
        out += ["", f"### {name} {{ #{_anchor(name)} }}", ""]
        if schema.get("description"):
            out += [_cell(schema["description"]), ""]
        props = schema.get("properties", {})
        if props:
            required = set(schema.get("required", []))
            out += ["| field | type | required | bounds | description |", "|---|---|---|---|---|"]
            for field, sub in props.items():
                out.append(
                    _row(
                        f"`{field}`",
                        _schema_type(sub),
                        _yes(field in required),
                        _cell(_limits(sub)),
                        _cell(sub.get("description", "")),
                    )
                )
        elif "enum" in schema:
            out.append(f"One of: {_schema_type(schema)}")
        else:
            out.append(f"Type: {_schema_type(schema)}")
    return "\n".join(out) + "\n"


def _type_name(annotation: Any) -> str:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return " or ".join(_type_name(a) for a in rest)
    if args:
        return f"{getattr(annotation, '__origin__', annotation).__name__} of " + ", ".join(
            _type_name(a) for a in args
        )
    return getattr(annotation, "__name__", str(annotation))


def _bounds(field: Any) -> str:
    signs = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    found = []
    for meta in field.metadata:
        for attr, sign in signs.items():
            value = getattr(meta, attr, None)
            if value is not None:
                found.append(f"{sign} {value}")
    return ", ".join(found)


def _default(field: Any) -> str:
    from pydantic_core import PydanticUndefined

    value = field.default
    if value is PydanticUndefined and field.default_factory is not None:
        value = field.default_factory()
    if value is None or value == []:
        return "unset"
    if value == "":
        return "empty"
    return f"`{value}`"


def settings_table(model: type) -> list[str]:
    """One row per field of a pydantic-settings model: variable, type, bounds, default, text."""
    rows = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        kind = _type_name(field.annotation)
        bounds = _bounds(field)
        if bounds:
            kind += f" ({bounds})"
        rows.append(
            _row(f"`{name.upper()}`", kind, _default(field), _cell(field.description or ""))
        )
    return rows


CONFIGURATION_INTRO = f"""# Configuration reference

{GENERATED} from the settings models: every variable is read from the environment once
(case-insensitive, no prefix), and nothing needs setting for the embedded defaults.

## Core (`agentic_search.config.Settings`)
"""

LAMBDA_INTRO = """## Deployed functions (`agentic_search_lambda.settings.LambdaSettings`)

What the Lambda handlers read beside the core settings. Secrets never sit in the environment: a
`*_SECRET_ARN` names a Secrets Manager secret fetched once per container.
"""

CACHE_NOTE = """## The result cache

The cache is exact-match on the normalized query (NFKC, case, spaces), limit, rounds, domain,
schema version and catalog version; every ingest that changes the index bumps the catalog
version, so a cached answer never outlives the catalog it came from. Responses with source
errors, or answered by the rules after a transient LLM failure (timeout, throttling, missing
configuration), are not cached.
"""


TUNING_INTRO = """## Domain tuning (`agentic_search.logic.tuning.Tuning`) { #domain-tuning }

Not the environment's: the `tuning:` block of a domain's YAML, one group a mapping, naming only
the keys the domain changes ([Your own domain](../guides/own-domain.md#tuning)).
`agentic-search config --domain NAME` prints a domain's effective tuning. An unknown key or a
value out of its bounds fails the YAML's load with the key named.
"""


def tuning_tables() -> list[str]:
    """One table per group of a domain's tuning: key, type and bounds, default, meaning."""
    from agentic_search.logic.tuning import Tuning

    rows: list[str] = []
    for group, field in Tuning.model_fields.items():
        model = field.default_factory
        rows += ["", f"### `tuning.{group}`", "", _cell(field.description or ""), ""]
        rows += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for name, knob in model.model_fields.items():  # type: ignore[union-attr]
            kind = _type_name(knob.annotation)
            bounds = _bounds(knob)
            if bounds:
                kind += f" ({bounds})"
            rows.append(_row(f"`{name}`", kind, _default(knob), _cell(knob.description or "")))
    return rows


def configuration_page() -> str:
    """The configuration reference: the core's and the Lambda glue's settings models, and a
    domain's tuning."""
    from agentic_search.config import Settings
    from agentic_search_lambda.settings import LambdaSettings

    parts = [CONFIGURATION_INTRO, *settings_table(Settings), "", LAMBDA_INTRO]
    parts += [*settings_table(LambdaSettings), "", CACHE_NOTE, TUNING_INTRO, *tuning_tables()]
    return "\n".join(parts) + "\n"


def architecture_page() -> str:
    """ARCHITECTURE.md, the one copy of the architecture (tests/unit/test_architecture_doc.py
    checks every function its walks name)."""
    return (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")


PAGES = {
    "reference/cli.md": cli_page,
    "reference/configuration.md": configuration_page,
    "reference/openapi.json": openapi_json,
    "explanation/architecture.md": architecture_page,
}


#: A Markdown link or image: ``[text](target)``, target without spaces.
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
#: Repository files the site shows as pages of its own: a link to one goes to that page.
SHOWN_AS = {"ARCHITECTURE.md": "explanation/architecture.md"}


def repository_links(markdown: str, page_uri: str, docs_dir: Path, repo_url: str | None) -> str:
    """A page's links to files of the repository outside docs/ (``../../benchmarks/README.md``,
    right on GitHub) made right on the site too: ARCHITECTURE.md to its page, any other existing
    file to ``repo_url``'s copy (or its path in code when the site names no repository). A link
    to a file that does not exist is left as written, so the build's link check fails on it."""
    page_dir = (docs_dir / page_uri).parent

    def rewrite(m: re.Match[str]) -> str:
        bang, text, target = m.groups()
        if bang or re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        resolved = (page_dir / path).resolve()
        if resolved.is_relative_to(docs_dir.resolve()) or not resolved.is_relative_to(REPO):
            return m.group(0)
        if not resolved.exists():
            return m.group(0)
        rel = resolved.relative_to(REPO).as_posix()
        if rel in SHOWN_AS:
            shown = docs_dir / SHOWN_AS[rel]
            href = os.path.relpath(shown, page_dir).replace(os.sep, "/")
            return f"[{text}]({href}{'#' + anchor if anchor else ''})"
        if repo_url:
            kind = "tree" if resolved.is_dir() else "blob"
            href = f"{repo_url.rstrip('/')}/{kind}/main/{rel}"
            return f"[{text}]({href}{'#' + anchor if anchor else ''})"
        return text if f"`{rel}`" in text or text == rel else f"{text} (`{rel}`)"

    return LINK.sub(rewrite, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """mkdocs hook: links to repository files outside docs/ (see :func:`repository_links`)."""
    return repository_links(
        markdown, page.file.src_uri, Path(config["docs_dir"]), config.get("repo_url")
    )


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: add the generated pages to the site's files."""
    from mkdocs.structure.files import File

    rendered = {uri: make() for uri, make in PAGES.items()}
    rendered["reference/http-api.md"] = http_api_page(rendered["reference/openapi.json"])
    for uri, content in rendered.items():
        files.append(File.generated(config, uri, content=content))
    return files


def on_config(config: Any) -> Any:
    """mkdocs hook: ``mkdocs serve`` rebuilds when a source of a generated page changes."""
    config.watch.extend(
        str(REPO / p) for p in ("ARCHITECTURE.md", "cli/agentic_search_cli", "layers/core")
    )
    return config
