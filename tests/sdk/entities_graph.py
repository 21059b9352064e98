"""The official Python SDK (bem-sdk), unchanged, against a running canon: the `entities`
resource (seed, update, synonyms, bulk validation, relations, seed jobs) and
`knowledge_graph`, with strict response validation so every answer satisfies the SDK's own
response model.

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_entities_and_the_graph` with
BEM_BASE_URL and BEM_API_KEY set; prints one line per check and exits non-zero on the first
failure.
"""
import json
import os
import time
import urllib.request

import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

seeded = client.entities.bulk_create(entities=[
    {"canonical": "Acme Corporation", "type": "Company", "synonyms": ["ACME"]},
    {"canonical": "Globex", "type": "Company"},
])
assert (seeded.summary.created, seeded.summary.merged) == (2, 0), seeded
acme, globex = (row.entity_id for row in seeded.results)
print("entities.bulk_create: two rows created")

updated = client.entities.update(acme, add_synonyms=["Acme Co", "Acme Holdings"])
assert "Acme Holdings" in updated.surface_forms, updated
not_added = (updated.model_extra or {}).get("synonymsNotAdded")
assert [s["text"] for s in not_added] == ["Acme Co"], updated
print("entities.update: a synonym added, a form of the canonical name reported as not added")

synonym = client.entities.synonyms.add(acme, text="Acme Group")
assert synonym.text == "Acme Group" and synonym.source == "customer_defined", synonym
client.entities.synonyms.remove(synonym.synonym_id, id=acme)
assert "Acme Group" not in client.entities.update(acme).surface_forms
print("entities.synonyms: added then removed")

# A relation has no SDK method: made over plain HTTP, read back through the SDK.
request = urllib.request.Request(
    os.environ["BEM_BASE_URL"].rstrip("/") + "/v3/relations",
    data=json.dumps({"sourceEntityID": acme, "targetEntityID": globex, "relationType": "SUPPLIES"}).encode(),
    headers={"x-api-key": os.environ["BEM_API_KEY"], "content-type": "application/json"},
    method="POST",
)
urllib.request.urlopen(request).read()
relations = client.entities.retrieve_relations(acme, direction="outbound")
assert [r.relation_type for r in relations.outbound] == ["SUPPLIES"], relations
assert relations.outbound[0].target_entity.id == globex, relations
print("entities.retrieve_relations: the relation is there")

graph = client.knowledge_graph.retrieve(limit=10)
assert {n.id for n in graph.nodes} >= {acme, globex}, graph
assert [(e.source_id, e.target_id) for e in graph.edges] == [(acme, globex)], graph
print("knowledge_graph.retrieve: both entities and their edge")

validated = client.entities.bulk_validate(entity_ids=[acme, globex], status="approved")
assert validated.summary.validated == 2, validated
print("entities.bulk_validate: both approved")

# 100 rows or more are a seed job: 202 with its ID (the SDK models only the 200 answer, so
# the raw answer is read), then its progress through the SDK.
raw = client.entities.with_raw_response.bulk_create(
    entities=[{"canonical": f"Supplier {i}", "type": "Company"} for i in range(120)])
assert raw.status_code == 202, raw.status_code
job = json.loads(raw.text())["seedJobID"]
for _ in range(300):
    status = client.entities.retrieve_seed_status(job)
    if status.status in ("completed", "failed"):
        break
    time.sleep(0.1)
assert status.status == "completed" and status.created_count == 120, status
assert len(status.results) == 120, status
print("entities.retrieve_seed_status: the job completed with its rows")

print("bem-sdk: all checks passed")
