"""``agentic-search config``: print a domain's effective tuning, the defaults with its YAML's
``tuning:`` block (:class:`agentic_search.logic.tuning.Tuning`), marking what the domain sets."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agentic_search_cli.common import usage_error

DESCRIPTION = """\
Print the tuning a domain searches with: every number the rules are tuned with, the
defaults merged with the tuning: block of the domain's YAML, in groups:

  coverage  the coverage confidence and the weight of each kind of target
  intent    the rule-based intent's and plan's confidence
  linking   the fuzzy entity linker's thresholds
  graph     the fetch of named records, the alternative-to walk, the bridge round
  depth     how many hits each kind of source reads per result asked for, and at least
  executor  the executor's knobs that are the domain's (evidence per round, token budget,
            stopping threshold, selection pool, MMR, feedback, snippet length)

The keys the domain's block sets are marked. To change one, add a partial block to the
domain's YAML, only the keys you change (the rest keep their defaults):

  tuning:
    coverage: {term_weight: 2}
    executor: {max_docs: 12, confidence_threshold: 0.9}

The block is checked when the YAML is loaded: an unknown key or a value out of its bounds
is a one-line error naming the key. A changed value changes the schema's fingerprint, so
no cached answer of the old tuning is served. Choose values on a tuning split and report
a held-out one (agentic-search eval --split heldout). Each key's meaning and bounds:
docs/reference/configuration.md (Domain tuning).

exit codes: 0 printed; 2 an unknown domain or an invalid YAML (one line saying why)."""


def add_parser(sub: Any) -> None:
    """Register ``config``."""
    p = sub.add_parser(
        "config",
        help="print a domain's effective tuning (the defaults with its YAML's tuning: block)",
        description=DESCRIPTION,
        epilog=(
            "examples:\n"
            "  agentic-search config                        # the tools domain\n"
            "  agentic-search config --domain recipes.yaml  # a YAML file, or a registered name\n"
            "  agentic-search config --domain recipes --json\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--domain",
        default="tools",
        metavar="NAME|FILE.yaml",
        help="a built-in or registered domain's name, or a schema YAML path (default tools)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"domain", "source", "tuning", "overrides"} as JSON: the effective tuning '
        "and the keys the domain's block sets",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``config``; returns the exit code."""
    from agentic_search.config import Settings
    from agentic_search.logic.schema import SchemaError, load_domain

    settings = Settings()  # (no index is opened: the home is only read for its domains)
    try:
        schema = load_domain(args.domain, settings.agentic_search_home, settings.domain_files)
    except SchemaError as exc:
        usage_error(str(exc))
    tuning = schema.tuning
    effective = tuning.model_dump(mode="json")
    overrides = tuning.overrides()
    source = str(schema.source) if schema.source is not None else None
    if args.json:
        body = {
            "domain": schema.name,
            "source": source,
            "tuning": effective,
            "overrides": overrides,
        }
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
        return 0
    sys.stdout.write(tuning_yaml(schema.name, source, effective, overrides, defaults()))
    return 0


def defaults() -> dict[str, dict[str, Any]]:
    """The tuning's defaults, by group (JSON values)."""
    from agentic_search.logic.tuning import Tuning

    return Tuning().model_dump(mode="json")


def tuning_yaml(
    name: str,
    source: str | None,
    effective: dict[str, dict[str, Any]],
    overrides: dict[str, dict[str, Any]],
    default: dict[str, dict[str, Any]],
) -> str:
    """The effective tuning as a YAML ``tuning:`` block (valid YAML, pasteable into a domain
    file), each key the domain sets marked with a comment giving the default."""
    where = source or "built in"
    count = sum(len(keys) for keys in overrides.values())
    lines = [
        f"# the effective tuning of domain {name!r} ({where}): the defaults, "
        + (f"{count} key(s) set by its tuning: block (marked)" if count else "none overridden"),
        "tuning:",
    ]
    for group, knobs in effective.items():
        lines.append(f"  {group}:")
        for key, value in knobs.items():
            line = f"    {key}: {_scalar(value)}"
            if key in overrides.get(group, {}):
                line += f"  # set by the domain (default {_scalar(default[group][key])})"
            lines.append(line)
    return "\n".join(lines) + "\n"


def _scalar(value: Any) -> str:
    """``value`` as a YAML scalar (``0.85``, ``3``, ``none``: a plain string)."""
    import yaml

    return str(yaml.safe_dump([value], default_flow_style=True).strip()[1:-1])
