"""A user's domain through the command line and the HTTP API: registered when ingested, served
by ``serve`` (by name, or ``--domain FILE``), evaluated by ``eval --domain`` against the
baselines on its own judged queries, and calibrated by ``calibrate``."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from support.cli import run_cli, serving_process
from support.http import post_search_error
from support.own_domain import write


@pytest.fixture()
def own_home(indexed_home: Path, tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(home with tools indexed and the pkgs domain ingested from its YAML, YAML, catalog,
    judged queries folder)."""
    yaml_path, catalog, queries = write(tmp_path / "data")
    done = run_cli(indexed_home, "ingest", str(catalog), "--domain", str(yaml_path))
    assert done.returncode == 0, done.stderr
    assert "registered domain 'pkgs'" in done.stderr
    return indexed_home, yaml_path, catalog, queries


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return json.loads(resp.read())


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())


def test_an_ingested_domain_is_searched_by_name(own_home) -> None:
    home, *_ = own_home
    done = run_cli(home, "search", "parse yaml files", "--domain", "pkgs", "--json")
    assert done.returncode == 0, done.stderr
    ids = [c["id"] for c in json.loads(done.stdout)["candidates"]]
    assert {"js-yaml", "yaml"} <= set(ids[:3])


def test_serve_serves_the_registered_domain_on_every_route(own_home) -> None:
    home, *_ = own_home
    with serving_process(home, "--workers", "0") as (_, url):
        found = _post(f"{url}/search", {"query": "parse yaml files", "domain": "pkgs"})
        assert {"js-yaml", "yaml"} <= {c["id"] for c in found["candidates"][:3]}
        names = [d["name"] for d in _get(f"{url}/domains")["domains"]]
        assert names[0] == "tools" and "pkgs" in names
        listed = next(d for d in _get(f"{url}/domains")["domains"] if d["name"] == "pkgs")
        assert listed["temporalField"] == "released" and listed["version"] == "1"
        status = _get(f"{url}/sync/status?domain=pkgs")
        assert status["domain"] == "pkgs" and status["counts"]["synced"] == 24
        assert _get(f"{url}/health?deep=true")["domains"]["pkgs"] == "ok"
        code, body = post_search_error(url, {"query": "x", "domain": "nope"})
        assert code == 422 and "pkgs" in body["detail"][0]["message"]


def test_serve_domain_file_serves_a_domain_given_by_path(indexed_home, tmp_path) -> None:
    yaml_path, *_ = write(tmp_path / "data")
    with serving_process(indexed_home, "--workers", "0", "--domain", str(yaml_path)) as (p, url):
        assert "pkgs" in [d["name"] for d in _get(f"{url}/domains")["domains"]]
        assert _get(f"{url}/health?deep=true")["domains"]["pkgs"] == "empty"
        assert any("domains: documents, tools, pkgs" in line for line in p.stderr_lines)


def test_serve_refuses_a_domain_file_that_is_not_a_schema(indexed_home, tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: pkgs\n")
    done = run_cli(indexed_home, "serve", "--port", "0", "--domain", str(bad), timeout=60)
    assert done.returncode == 2
    assert "invalid domain schema" in done.stderr and str(bad) in done.stderr


def test_eval_domain_compares_every_system_on_the_users_judged_queries(
    own_home, tmp_path: Path
) -> None:
    home, _, _, queries = own_home
    out = tmp_path / "out"
    done = run_cli(
        home, "eval", "--domain", "pkgs", "--dataset", str(queries), "--split", "heldout",
        "--json", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    systems = json.loads(done.stdout)["systems"]
    assert set(systems) == {
        "bm25",
        "dense",
        "dense-record",
        "hybrid-rrf",
        "executor-1round",
        "executor",
    }
    for name, s in systems.items():
        assert 0.0 < s["ndcg@10"] <= 1.0, name
    # the domain's own index, searched as it is: nothing ingested
    results = json.loads((out / "results.json").read_text())
    assert results["corpus"]["documents"] == 24 and not results["corpus"]["ingested"]
    assert results["settings"]["collection"] == "pkgs"


def test_eval_domain_with_a_catalog_builds_its_own_collection(own_home) -> None:
    home, yaml_path, catalog, queries = own_home
    done = run_cli(
        home,
        "eval",
        "--domain",
        str(yaml_path),
        "--catalog",
        str(catalog),
        "--dataset",
        str(queries),
        "--split",
        "tuning",
        "--systems",
        "bm25,executor",
        "--json",
        "--out",
        str(catalog.parent / "out"),
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((catalog.parent / "out" / "results.json").read_text())
    assert results["corpus"]["ingested"] and results["corpus"]["inserted"] == 24
    assert results["settings"]["collection"] == "eval-queries-pkgs"


def test_eval_domain_without_an_index_says_how_to_make_one(indexed_home, tmp_path) -> None:
    yaml_path, _, queries = write(tmp_path / "data")
    done = run_cli(
        indexed_home, "eval", "--domain", str(yaml_path), "--dataset", str(queries), "--split",
        "tuning",
    )  # fmt: skip
    assert done.returncode == 2
    assert "has no index" in done.stderr and "--catalog FILE" in done.stderr


def test_calibrate_proposes_thresholds_that_answer_no_good_match(own_home) -> None:
    # GIVEN a domain without quality: (it never abstains) and tuning queries, two of them
    # about nothing the catalog holds
    home, yaml_path, _, queries = own_home
    done = run_cli(home, "calibrate", "--domain", "pkgs", "--dataset", str(queries), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # THEN without abstention both unanswerable queries are padded; the proposal pads fewer,
    # leaves no answerable query empty and keeps hybrid-rrf's nDCG@10
    assert out["without_abstention"]["padded"] == 2
    chosen = out["chosen"]
    assert chosen["padded"] < 2 and chosen["left_empty"] == 0
    assert chosen["ndcg@10"] >= out["baseline_ndcg@10"]
    quality = out["quality"]
    assert quality["candidate_relevance"] == chosen["candidate_relevance"] > -1.0
    # AND pasted into the YAML, a held-out query about nothing gets "no good match"
    block = "quality: " + json.dumps(quality) + "\n"
    yaml_path.write_text(yaml_path.read_text() + block)
    searched = run_cli(
        home, "search", "repair a bicycle chain", "--domain", str(yaml_path), "--json"
    )
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)["answerQuality"]["verdict"] == "none"


def _run_ids(out: Path, system: str) -> dict[str, list[str]]:
    """``runs/<system>.run`` (TREC run format) as query id -> ranked record ids."""
    ranked: dict[str, list[str]] = {}
    for line in (out / "runs" / f"{system}.run").read_text().splitlines():
        qid, _, rid, *_ = line.split()
        ranked.setdefault(qid, []).append(rid)
    return ranked


def test_eval_as_a_principal_scores_only_what_it_may_read(tmp_path: Path, indexed_home) -> None:
    """GIVEN the pkgs domain with an access field (esbuild and dotenv readable by ``ops`` only,
    the rest by ``eng``) WHEN ``eval --as eng`` THEN no system's ranking holds a record eng
    cannot read and their queries score 0, and ``--as eng --as ops`` finds them (issue 44:
    evaluation runs as a principal)."""
    yaml_path, catalog, queries = write(tmp_path / "data")
    only_ops = {"esbuild", "dotenv"}
    text = (
        yaml_path.read_text().replace("  released:", "  acl: {type: list}\n  released:")
        + "access: {field: acl, default: deny}\n"
    )
    yaml_path.write_text(text)
    rows = [json.loads(line) for line in catalog.read_text().splitlines()]
    for r in rows:
        r["acl"] = ["ops"] if r["id"] in only_ops else ["eng"]
    catalog.write_text("".join(json.dumps(r) + "\n" for r in rows))
    systems = "bm25,dense,hybrid-rrf,executor"

    def evaluate(*principals: str) -> tuple[dict, Path]:
        out = tmp_path / ("out-" + "-".join(principals))
        done = run_cli(
            indexed_home, "eval", "--domain", str(yaml_path), "--catalog", str(catalog),
            "--dataset", str(queries), "--split", "heldout", "--systems", systems, "--json",
            "--out", str(out), *[a for p in principals for a in ("--as", p)],
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads((out / "results.json").read_text()), out

    eng, eng_out = evaluate("eng")
    both, both_out = evaluate("eng", "ops")
    for system in systems.split(","):
        seen = {rid for ids in _run_ids(eng_out, system).values() for rid in ids}
        assert seen and not seen & only_ops, system
        assert only_ops <= {rid for ids in _run_ids(both_out, system).values() for rid in ids}
        for qid in ("h1", "h2"):  # esbuild's and dotenv's queries
            assert eng["systems"][system]["per_query"][qid]["ndcg@10"] == 0.0, (system, qid)
        assert both["systems"][system]["ndcg@10"] > eng["systems"][system]["ndcg@10"], system
