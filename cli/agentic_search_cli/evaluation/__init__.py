"""BEIR-layout relevance evaluation: several systems on the same index and queries, one run.

The package, by job:

* :mod:`.datasets`: reading a BEIR folder (corpus, queries, ``qrels/<split>.tsv``);
* :mod:`.corpus`: making the evaluation collection hold exactly the corpus;
* :mod:`.systems`: the systems compared (``bm25``, ``dense``, ``dense-record``, ``hybrid-rrf``,
  the executor in one and several rounds, optionally Qdrant's own RRF);
* :mod:`.metrics`: nDCG@10, Recall@10/100 and MRR@10 from ``pytrec_eval``, Recall@5, both@k,
  abstention counts (unanswerable queries answered with nothing, answerable ones left empty),
  latency percentiles;
* :mod:`.run`: :func:`evaluate`, every system over the judged queries of one split;
* :mod:`.outputs`: ``results.json`` and the plots.

The names below are the package's public surface (``from agentic_search_cli import
evaluation as ev``; ``ev.evaluate(...)``).
"""

from agentic_search_cli.evaluation.corpus import CorpusSync, ensure_corpus, indexed_ids
from agentic_search_cli.evaluation.datasets import (
    BeirDataset,
    DatasetError,
    available_splits,
    check_dataset,
    dataset_domain,
    load_beir,
    read_qrels,
    read_queries,
)
from agentic_search_cli.evaluation.metrics import (
    METRICS,
    Abstention,
    abstention,
    evaluate_rankings,
    latency_percentiles,
    mean_metrics,
)
from agentic_search_cli.evaluation.outputs import (
    LATENCY_PLOT,
    METRICS_PLOT,
    QUALITY_PLOT,
    RESULTS_FILE,
    metric_grid,
    record_last,
    write_outputs,
)
from agentic_search_cli.evaluation.run import (
    DEFAULT_WARMUP,
    EvaluationResult,
    QueryGroups,
    SystemResult,
    evaluate,
)
from agentic_search_cli.evaluation.systems import (
    COLD,
    DENSE_ASPECT,
    OPTIONAL_SYSTEMS,
    RRF_K,
    RUNNERS,
    SYSTEMS,
    TOP_K,
    UNAVAILABLE,
    Answer,
    bm25_ranking,
    cold_start,
    dense_aspect,
    dense_ranking,
    dense_record_ranking,
    hybrid_rrf_qdrant_ranking,
    hybrid_rrf_ranking,
    parse_systems,
    unavailable_reason,
)

__all__ = [
    "COLD",
    "DEFAULT_WARMUP",
    "DENSE_ASPECT",
    "LATENCY_PLOT",
    "METRICS",
    "METRICS_PLOT",
    "OPTIONAL_SYSTEMS",
    "QUALITY_PLOT",
    "RESULTS_FILE",
    "RRF_K",
    "RUNNERS",
    "SYSTEMS",
    "TOP_K",
    "UNAVAILABLE",
    "Abstention",
    "Answer",
    "BeirDataset",
    "CorpusSync",
    "DatasetError",
    "EvaluationResult",
    "QueryGroups",
    "SystemResult",
    "abstention",
    "available_splits",
    "bm25_ranking",
    "check_dataset",
    "cold_start",
    "dataset_domain",
    "dense_aspect",
    "dense_ranking",
    "dense_record_ranking",
    "ensure_corpus",
    "evaluate",
    "evaluate_rankings",
    "hybrid_rrf_qdrant_ranking",
    "hybrid_rrf_ranking",
    "indexed_ids",
    "latency_percentiles",
    "load_beir",
    "mean_metrics",
    "metric_grid",
    "parse_systems",
    "read_qrels",
    "read_queries",
    "record_last",
    "unavailable_reason",
    "write_outputs",
]
