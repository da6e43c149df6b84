"""A small multi-hop corpus (HotpotQA-like: bridge and comparison questions over named
paragraphs) for the entity graph and bridge-round tests, and its BEIR folder for eval."""

from __future__ import annotations

import json
from pathlib import Path

DOCS = {
    "m1": (
        "Kiss and Tell (1945 film)",
        "Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple "
        "as Corliss Archer. In the film, two teenage girls cause their respective parents much "
        "concern when they start to become interested in boys.",
    ),
    "m2": (
        "Shirley Temple",
        "Shirley Temple Black was an American actress, singer, dancer, businesswoman, and "
        "diplomat who was Hollywood's number one box-office draw as a child actress. As an "
        "adult, she was named United States ambassador to Ghana and to Czechoslovakia and "
        "also served as Chief of Protocol of the United States.",
    ),
    "m3": (
        "Meet Corliss Archer",
        "Meet Corliss Archer, a program from radio's Golden Age, ran from January 7, 1943 to "
        "September 30, 1956. It was CBS's answer to NBC's popular A Date with Judy.",
    ),
    "m4": (
        "Arthur's Magazine",
        "Arthur's Magazine (1844-1846) was an American literary periodical published in "
        "Philadelphia in the 19th century. Edited by Timothy Shay Arthur, it featured work by "
        "Edgar A. Poe, J.H. Ingraham, Sarah Josepha Hale, Thomas G. Spear, and others.",
    ),
    "m5": (
        "First for Women",
        "First for Women is a woman's magazine published by Bauer Media Group in the USA. The "
        "magazine was started in 1989. It is based in Englewood Cliffs, New Jersey.",
    ),
    "m6": (
        "A Date with Judy",
        "A Date with Judy was an American radio comedy program aimed at a teenage audience, "
        "broadcast on NBC and ABC from 1941 to 1950.",
    ),
    "m7": (
        "Janet Waldo",
        "Janet Marie Waldo was an American radio and voice actress, the voice of Corliss "
        "Archer on the radio program Meet Corliss Archer.",
    ),
    "m8": (
        "Protocol (diplomacy)",
        "In international politics, protocol is the etiquette of diplomacy and affairs of "
        "state; the chief of protocol advises on government ceremony.",
    ),
    "m9": (
        "Bauer Media Group",
        "Bauer Media Group is a German multinational media conglomerate headquartered in "
        "Hamburg, publishing magazines in Europe, the USA and Australia.",
    ),
    "m10": (
        "Philadelphia",
        "Philadelphia is the largest city in the U.S. state of Pennsylvania, home of many "
        "literary periodicals in the 19th century.",
    ),
}
BRIDGE = (
    "q1",
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?",
    ("m1", "m2"),
)
COMPARISON = (
    "q2",
    "Which magazine was started first, Arthur's Magazine or First for Women?",
    ("m4", "m5"),
)


def records() -> list[dict[str, str]]:
    """The corpus as ``documents`` records."""
    return [{"id": i, "title": t, "text": x} for i, (t, x) in DOCS.items()]


def make_multihop_dataset(root: Path) -> Path:
    """Write the corpus, its two typed questions and their qrels (BEIR layout) under
    ``root/multihop`` and return the folder."""
    ds = root / "multihop"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, (t, x) in DOCS.items())
    )
    queries = [(*BRIDGE, "bridge"), (*COMPARISON, "comparison")]
    (ds / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t, "type": typ}) + "\n" for q, t, _, typ in queries)
    )
    rows = [f"{q}\t{d}\t1\n" for q, _, rel, _ in queries for d in rel]
    (ds / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(rows))
    return ds
