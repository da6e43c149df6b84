"""``agentic-search migrate``: move a qdrant-client local-mode store (the embedded default of
earlier versions, ``$AGENTIC_SEARCH_HOME/qdrant``) into Qdrant Edge, the embedded default now.

Every other command does it on first use; this one does it on demand, for a custom domain
(``--domain FILE.yaml``), or replaces an Edge shard that already holds points (``--force``).
"""

from __future__ import annotations

import argparse
from typing import Any

from agentic_search_cli.common import migrate_first, usage_error


def add_parser(sub: Any) -> None:
    """Register ``migrate``."""
    p = sub.add_parser(
        "migrate",
        help="move a local-mode store of an earlier version into Qdrant Edge",
        description=(
            "Copy every collection of the qdrant-client local-mode store in QDRANT_PATH "
            "(default $AGENTIC_SEARCH_HOME/qdrant) into its Qdrant Edge shard: payloads and "
            "vectors as stored (nothing re-embedded), the BM25 sparse vectors computed from "
            "the payloads. Each copy is checked (the same record ids) before its local "
            "folder is moved aside into QDRANT_PATH.migrated (delete it when satisfied). "
            "Other commands do this on first use; run this one for a custom domain or with "
            "--force."
        ),
        epilog=(
            "examples:\n"
            "  agentic-search migrate\n"
            "  agentic-search migrate --domain my-domain.yaml\n"
            "  agentic-search migrate --force   # replace Edge shards that already hold points"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--domain",
        action="append",
        default=[],
        help="a domain (name or schema YAML) to migrate besides the bundled ones; repeatable",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an Edge shard that already holds points with the local-mode collection",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``migrate``; returns the exit code (1 when a collection was left unmigrated)."""
    from agentic_search.config import Settings
    from agentic_search.logic.schema import SchemaError, load_schema
    from agentic_search.wiring import migrate_local_store

    settings = Settings()
    if settings.qdrant_url:
        usage_error("QDRANT_URL is set: there is no embedded store to migrate")
    if settings.vector_store != "edge":
        usage_error("VECTOR_STORE=local keeps the local-mode store: unset it to migrate")
    try:
        schemas = [load_schema(d) for d in args.domain]
    except SchemaError as exc:
        usage_error(str(exc))
    if args.force:
        from agentic_search.logic.schema import available_domains

        every = [*map(load_schema, available_domains()), *schemas]
        done = migrate_local_store(
            settings, every, force=True, say=lambda line: print(f"agentic-search: {line}")
        )
    else:
        done = migrate_first(settings, schemas)
    if not done:
        print(f"nothing to migrate: no local-mode collection in {settings.resolved_qdrant_path}")
        return 0
    return 1 if any(m.status == "skipped" for m in done) else 0
