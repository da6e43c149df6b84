"""Where things are in the repository."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EVENTS = REPO / "events"
FUNCTIONS = REPO / "functions"
SCRIPTS = REPO / "scripts"
STATEMACHINE = REPO / "statemachine"
SEARCH_ASL = REPO / "layers" / "core" / "agentic_search" / "statemachine" / "search.asl.json"
