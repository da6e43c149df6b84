"""template.yaml's index-time enrichment (EnrichProvider off|bedrock, EnrichModelId): Bedrock's
Converse grant (bedrock:InvokeModel) on that one model's foundation-model ARN, given only to the
three functions that write the index (CatalogSync, SyncRedrive, ReindexBatch) and only when
bedrock is chosen; the settings they get, read back by Settings."""

from __future__ import annotations

from typing import Any

from support.template import REQUIRED_PARAMETERS, as_list, sam_transform, statements

from agentic_search.config import Settings

WRITERS = {"CatalogSyncFunction", "SyncRedriveFunction", "ReindexBatchFunction"}
ARN = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${EnrichModelId}"


def _enrich_grants(deployed: dict[str, Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for where, statement in statements(deployed):
        resources = as_list(statement["Resource"])
        if any("EnrichModelId" in str(r) for r in resources):
            assert as_list(statement["Action"]) == ["bedrock:InvokeModel"], statement
            out.setdefault(where.split("/")[0], []).extend(resources)
    return out


def _env(deployed: dict[str, Any], function: str) -> dict[str, Any]:
    return deployed["Resources"][function]["Properties"]["Environment"]["Variables"]


def test_bedrock_enrichment_grants_the_one_model_to_the_index_writers_only(template, region):
    deployed = sam_transform(template, {**REQUIRED_PARAMETERS, "EnrichProvider": "bedrock"})
    grants = _enrich_grants(deployed)
    assert set(grants) == {f"{f}Role" for f in WRITERS}
    for resources in grants.values():
        [arn] = resources  # one model, no wildcard
        assert arn == {"Fn::Sub": ARN}
    for function in WRITERS:
        env = _env(deployed, function)
        assert env["ENRICH"] == {"Ref": "EnrichProvider"}
        assert env["ENRICH_MODEL"] == {"Ref": "EnrichModelId"}
        timeout = deployed["Resources"][function]["Properties"]["Timeout"]
        budget = float(env["ENRICH_BUDGET_S"])
        assert 0 < budget < timeout  # the write and the publish still fit
        settings = Settings(
            enrich="bedrock",
            enrich_model="amazon.nova-micro-v1:0",
            enrich_budget_s=budget,
            enrich_timeout_s=float(env["ENRICH_TIMEOUT_S"]),
        )
        assert settings.enrich_timeout_s < budget


def test_enrichment_off_grants_nothing(template, region):
    deployed = sam_transform(template, REQUIRED_PARAMETERS)
    assert _enrich_grants(deployed) == {}
    assert "EnrichModelId" not in str(_env(deployed, "CatalogSyncFunction").get("ENRICH_MODEL"))
