"""The multi-round executor's policy, pure (no I/O): what each round asks, when another round
runs, how the rounds' lists become the final ranking.

* :mod:`.rounds`: the gate (does the query get the executor), the relaxation ladder, the
  stopping rule, the final ranking and the evidence pack.
* :mod:`.queries`: round 1's queries (the plan as planned, plus HyDE) and what every round
  shares (the dense aspect, the base text, written queries).
* :mod:`.later_rounds`: rounds 2+ (missing targets, RM3 feedback, the bridge round).
* :mod:`.entity_rounds`: entity lookups by id, walks of the entity graph, pins and bridges.
* :mod:`.subqueries`: a round's plan split into the Map's items, one per source.

The pipeline's steps (``agentic_search.pipeline``) use only what this package exports; the
modules import each other in one direction (rounds -> later_rounds -> queries,
entity_rounds; subqueries stands alone).
"""

from agentic_search.logic.executor.entity_rounds import bridges_from, with_pins_and_bridges
from agentic_search.logic.executor.later_rounds import (
    WRITTEN_PREFIX,
    planned_dense_text,
    writer_inputs,
)
from agentic_search.logic.executor.queries import dense_aspect, hyde_status, with_written_queries
from agentic_search.logic.executor.rounds import (
    executor_gate,
    final_order,
    final_placement,
    final_ranking,
    finalize_evidence_pack,
    prepare_round_queries,
    ranked_rounds,
    relax_step,
    rerank_order,
    should_continue,
)
from agentic_search.logic.executor.subqueries import split_plan

__all__ = [
    "WRITTEN_PREFIX",
    "bridges_from",
    "dense_aspect",
    "executor_gate",
    "final_order",
    "final_placement",
    "final_ranking",
    "finalize_evidence_pack",
    "hyde_status",
    "planned_dense_text",
    "prepare_round_queries",
    "ranked_rounds",
    "relax_step",
    "rerank_order",
    "should_continue",
    "split_plan",
    "with_pins_and_bridges",
    "with_written_queries",
    "writer_inputs",
]
