"""A response read back from its wire form (a cached answer): the parts a cache hit's table
does not show (intent, plan, evidence pack) are parsed when first read, not up front.

GIVEN the cached response of the recorded Finalize event (``events/finalize/cache_hit.json``)
WHEN a fresh process parses it and reads what the table shows THEN neither the evidence pack's
nor the plan's validator was built; AND reading every part gives the response parsed whole:
the same wire form, and equal to it.
"""

from __future__ import annotations

import json
import subprocess
import sys

from support.paths import REPO

from agentic_search.wire import EvidencePack, IntentState, QueryExecutorOutput, QueryPlan
from agentic_search.wire.response import PATH_KEYS, SearchResponse

WIRE = json.loads((REPO / "events/finalize/cache_hit.json").read_text("utf-8"))["response"]


def test_what_a_table_reads_builds_no_validator_of_the_parts_it_does_not_show():
    code = f"""
import json
from agentic_search.wire import EvidencePack, QueryPlan
from agentic_search.wire.response import SearchResponse
wire = json.loads({json.dumps(json.dumps(WIRE))})
resp = SearchResponse.from_wire(wire)
print(len(resp.output.candidates), resp.query, resp.comparison)
print(json.dumps([EvidencePack.__pydantic_complete__, QueryPlan.__pydantic_complete__]))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.splitlines()[0].startswith(f"{len(WIRE['candidates'])} ")
    assert json.loads(done.stdout.splitlines()[-1]) == [False, False]


def test_every_part_read_on_use_equals_the_response_parsed_whole():
    lazy = SearchResponse.from_wire(WIRE)
    keys = {f.alias or n for n, f in QueryExecutorOutput.model_fields.items()}
    whole = SearchResponse(
        query=WIRE["query"],
        domain=WIRE["domain"],
        intent=IntentState.model_validate(WIRE["intent"]),
        plan=QueryPlan.model_validate(WIRE["plan"]),
        output=QueryExecutorOutput.model_validate({k: v for k, v in WIRE.items() if k in keys}),
        evidence=EvidencePack.model_validate(
            {**WIRE["evidencePack"], "report": WIRE["retrievalReport"]}
        ),
        paths={k: WIRE[k] for k in PATH_KEYS if k in WIRE},
    )
    assert lazy.wire() == whole.wire()
    assert lazy == whole and whole == lazy
    assert lazy.evidence is not None and lazy.evidence.report.rounds
