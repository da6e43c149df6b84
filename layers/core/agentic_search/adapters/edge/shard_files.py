"""What an Edge folder says about a domain's shard without the engine: whether the shard
exists (the ``edge_config.json`` Edge writes when it creates one) and which embedder built
it (the ``<shard>.embedder.json`` sidecar beside it; Edge has no collection metadata).

:class:`ShardFiles` reads and writes only these files and imports neither ``qdrant_edge`` nor
numpy, so the result-cache gate (:meth:`agentic_search.service.SearchService.cached`) can
check a collection before anything opens the engine; :class:`~.store.EdgeStore` is one, with
the engine on top.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_search.ports import VectorStoreError
from agentic_search.wire.identity import EmbedderIdentity

if TYPE_CHECKING:
    from agentic_search.config import Settings
    from agentic_search.logic.schema import DomainSchema

#: Written by Edge itself when it creates a shard: its presence is the shard's existence.
CONFIG_FILE = "edge_config.json"


class ShardFiles:
    """The shard directories under ``root`` (default ``QDRANT_EDGE_PATH``) and the files kept
    beside them; nothing is created or opened when made.

    Raises (``embedder_identity``):
        VectorStoreError: when the identity sidecar cannot be read or parsed.
    """

    def __init__(self, settings: Settings, root: Path | None = None) -> None:
        self.settings = settings
        self.root = root or settings.resolved_edge_path
        #: sidecar path -> (its stat stamp, the identity read from it)
        self._identities: dict[Path, tuple[tuple[int, int, int], EmbedderIdentity]] = {}

    def collection(self, schema: DomainSchema) -> str:
        """Collection (shard directory) name of a domain."""
        return self.settings.collection_name(schema.name)

    def shard_dir(self, schema: DomainSchema) -> Path:
        """The domain's shard directory."""
        return self.root / self.collection(schema)

    def exists(self, schema: DomainSchema) -> bool:
        """Whether the domain's shard exists (Edge wrote its config there)."""
        return (self.shard_dir(schema) / CONFIG_FILE).is_file()

    def writing(self, schema: DomainSchema) -> bool:
        """Whether another process holds the domain's shard for writing now: a write
        journaled meanwhile is its own, not an interrupted one (this process's own lock is
        not counted)."""
        from agentic_search.adapters.edge.lock import ReadGate, holder_pid

        gate = ReadGate(self.root / self.collection(schema))
        return gate.writer_at_work() and holder_pid(gate.writer_file) != str(os.getpid())

    # The embedder identity: a sidecar ``<shard>.embedder.json`` beside the shard, written
    # atomically (a temporary file, then os.replace) and removed with the shard by
    # EdgeStore.drop() (it is one of the ``<shard>.*.json`` files).

    def _identity_file(self, schema: DomainSchema) -> Path:
        shard = self.shard_dir(schema)  # a reader's copy keeps its own beside it
        return shard.with_name(shard.name + ".embedder.json")

    def embedder_identity(self, schema: DomainSchema) -> EmbedderIdentity | None:
        """The identity in the shard's ``.embedder.json`` sidecar (None when absent).

        Raises:
            VectorStoreError: when the sidecar cannot be read or parsed.
        """
        path = self._identity_file(schema)
        try:
            # read again only when the file changed (every search checks it, twice in this
            # process: before the walk and before its query embedding); a rewrite is an
            # os.replace, a new inode
            st = path.stat()
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
            known = self._identities.get(path)
            if known is not None and known[0] == stamp:
                return known[1]
            identity = EmbedderIdentity.model_validate_json(path.read_bytes())
            self._identities[path] = (stamp, identity)
            return identity
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise VectorStoreError(
                f"unreadable embedder identity {path}: {exc}. Delete it (it is written again "
                "on the next ingest) or rebuild (`agentic-search ingest --rebuild`)."
            ) from exc

    def record_embedder_identity(self, schema: DomainSchema, identity: EmbedderIdentity) -> None:
        """Write the shard's ``.embedder.json`` sidecar atomically."""
        path = self._identity_file(schema)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(identity.to_json_dict()))
        os.replace(tmp, path)


__all__ = ["CONFIG_FILE", "ShardFiles"]
