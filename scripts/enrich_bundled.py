"""Generate the bundled catalog's shipped enrichment (``make enrich``).

Asks the local GGUF model (``make llm``) the catalog prompt for every record of
``layers/core/agentic_search/data/tools.jsonl``, keeping each answer in
``$AGENTIC_SEARCH_HOME/enrichment.sqlite`` as it comes back (the cache every ingest reads: a
killed run resumes where it stopped and asks nothing twice). Once every record has an answer
it filters them (Doc2Query--, with the default embedder) and writes
``layers/core/agentic_search/data/tools.enrichment.jsonl``: a header with the model's name and
sha256, the prompt's version and sha256, the date, the filter's embedder and the body's
sha256, then one line per record (id, text sha256, answer with the kept needs). Until every
record has an answer no file is written.

Usage::

    python scripts/enrich_bundled.py              # ask what is missing, then write the file
    python scripts/enrich_bundled.py --limit 20   # ask at most 20 records this run
    python scripts/enrich_bundled.py --status     # how many records have an answer

Exit codes: 0 done (file written, or --status), 1 the model cannot start, 3 records are still
missing (the run stopped at --limit, a failure or the budget).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import statistics
import sys
import time
from pathlib import Path

from agentic_search.config import Settings
from agentic_search.logic.enrichment import CATALOG_PROMPT, enrichment_key, record_prompt_text
from agentic_search.logic.enrichment import text_sha256 as sha_text
from agentic_search.sync.enrich import filter_answers
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.sync.shipped_enrichment import render_shipped, shipped_path
from agentic_search.wiring import (
    build_embedder,
    build_enricher,
    build_enrichment_store,
    domain_schema,
)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="ask at most this many records (0: all)")
    ap.add_argument("--status", action="store_true", help="print progress and exit")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    settings = Settings(enrich="local")
    schema = domain_schema(settings, "tools")
    records = read_catalog(bundled_catalog_path(), schema).records
    store = build_enrichment_store(settings)
    model = settings.resolved_gguf_path.stem
    texts = {str(r["id"]): record_prompt_text(schema, r) for r in records}
    keys = {rid: enrichment_key(t, model, CATALOG_PROMPT.version) for rid, t in texts.items()}
    have = store.get_many(list(keys.values()))
    missing = [rid for rid, k in keys.items() if k not in have]
    print(f"{len(records) - len(missing)} of {len(records)} records answered", flush=True)
    if args.status:
        return 0
    if missing:
        enricher = build_enricher(settings)
        assert enricher is not None
        todo = missing[: args.limit] if args.limit else missing
        times: list[float] = []
        failed = 0
        for n, rid in enumerate(todo, 1):
            t0 = time.perf_counter()
            try:
                answer = enricher.enrich("catalog", texts[rid], settings.enrich_timeout_s)
            except Exception as exc:  # listed, asked again next run
                failed += 1
                print(f"  {rid}: {exc}", file=sys.stderr, flush=True)
                continue
            store.put(keys[rid], answer)
            times.append(time.perf_counter() - t0)
            median = statistics.median(times)
            left = (len(todo) - n) * median
            print(
                f"[{n}/{len(todo)}] {rid}: {times[-1]:.1f} s (median {median:.1f} s, "
                f"{60 / median:.2f} records/min, ETA {left / 60:.0f} min)",
                flush=True,
            )
        have = store.get_many(list(keys.values()))
        missing = [rid for rid, k in keys.items() if k not in have]
        if missing:
            print(f"{len(missing)} records still missing ({failed} failed): run again")
            return 3
    embedder = build_embedder(settings)
    items = [(rid, texts[rid], have[keys[rid]]) for rid in keys]
    filtered, _ = filter_answers(schema, embedder, records, items, None, True)
    gguf = settings.resolved_gguf_path
    header = {
        "format": 1,
        "domain": schema.name,
        "model": model,
        "model_sha256": file_sha256(gguf),
        "prompt_version": CATALOG_PROMPT.version,
        "prompt_sha256": CATALOG_PROMPT.sha256,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "filter": str(getattr(getattr(embedder, "identity", None), "model", None) or embedder.name),
        "temperature": 0,
    }
    entries = []
    for rid in keys:
        answer = dict(have[keys[rid]])
        answer["kept"] = filtered[rid].kept
        entries.append({"id": rid, "text_sha256": sha_text(texts[rid]), "answer": answer})
    out = shipped_path(schema.name)
    out.write_text(render_shipped(header, entries), encoding="utf-8")
    kept = sum(len(f.kept) for f in filtered.values())
    generated = sum(f.generated for f in filtered.values())
    print(f"wrote {out}: {len(entries)} records, {kept} of {generated} needs kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
