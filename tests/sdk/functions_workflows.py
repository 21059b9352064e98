"""The official Python SDK (bem-sdk), unchanged, against a running canon: functions and workflows.

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_functions_and_workflows` with
BEM_BASE_URL and BEM_API_KEY set; prints one line per check and exits non-zero on the first
failure.
"""
import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

schema = {"type": "object", "properties": {"total": {"type": "number"}}}
created = client.functions.create(
    function_name="sdk-invoice",
    type="extract",
    output_schema=schema,
    output_schema_name="Invoice",
    display_name="Invoices",
    tags=["finance"],
    extra_config={"enable_bounding_boxes": True},
).function
assert created.function_id.startswith("fn_") and created.version_num == 1, created
assert created.type == "extract" and created.output_schema == schema, created
assert created.audit.function_created_by.api_key_name == "test", created.audit
for name in ["sdk-router", "sdk-sender"]:
    if name == "sdk-router":
        client.functions.create(function_name=name, type="classify", classifications=[{"name": "invoice"}])
    else:
        client.functions.create(function_name=name, type="send")
try:
    client.functions.create(function_name="sdk-invoice", type="extract")
    raise AssertionError("duplicate name accepted")
except bem.ConflictError as err:
    assert "function name already exists" in str(err), err
try:
    client.functions.create(function_name="sdk-bad", type="extract", output_schema={"type": "nope"})
    raise AssertionError("bad schema accepted")
except bem.BadRequestError as err:
    assert "outputSchema" in str(err), err
print("functions: create, duplicate name, malformed schema")

got = client.functions.retrieve("sdk-invoice")
assert got.function.function_id == created.function_id and "extraConfig" not in got.function.to_dict(), got
got = client.functions.retrieve("sdk-invoice", include_extra_settings=True)
assert got.function.to_dict()["extraConfig"] == {"enableBoundingBoxes": True}, got
updated = client.functions.update("sdk-invoice", type="extract", display_name="Bills").function
assert updated.version_num == 2 and updated.display_name == "Bills" and updated.output_schema == schema, updated
v1 = client.functions.versions.retrieve(1, function_name="sdk-invoice").function
assert v1.version_num == 1 and v1.display_name == "Invoices" and v1.created_at is not None, v1
versions = client.functions.versions.list("sdk-invoice")
assert versions.total_count == 2 and [v.version_num for v in versions.versions] == [1, 2], versions
print("functions: retrieve, includeExtraSettings, update into a new version, versions")

every = [f.function_name for f in client.functions.list(limit=1)]  # auto-pagination by cursor
assert every == ["sdk-invoice", "sdk-router", "sdk-sender"], every
tagged = [f.function_name for f in client.functions.list(tags=["finance"], types=["extract", "send"])]
assert tagged == ["sdk-invoice"], tagged
backwards = client.functions.list(sort_order="desc", limit=2)
assert [f.function_name for f in backwards.functions] == ["sdk-sender", "sdk-router"], backwards
print("functions: list with filters and auto-pagination")

workflow = client.workflows.create(
    name="sdk-intake",
    main_node_name="sdk-router",
    nodes=[
        {"function": {"name": "sdk-router"}},
        {"name": "extract", "function": {"id": created.function_id, "version_num": 1}, "metadata": {"x": 1}},
    ],
    edges=[{"source_node_name": "sdk-router", "destination_node_name": "extract", "destination_name": "invoice"}],
    tags=["mail"],
)
assert workflow.id.startswith("wf_") and workflow.version_num == 1, workflow
assert [n.name for n in workflow.nodes] == ["sdk-router", "extract"], workflow.nodes
assert workflow.nodes[1].function.version_num == 1 and workflow.nodes[1].metadata == {"x": 1}, workflow.nodes
assert workflow.edges[0].destination_name == "invoice", workflow.edges
try:
    client.workflows.create(name="sdk-bad", main_node_name="nope", nodes=[{"function": {"name": "sdk-router"}}])
    raise AssertionError("bad mainNodeName accepted")
except bem.UnprocessableEntityError as err:
    assert "workflow mainNodeName must be one of nodes[].name" in str(err), err
try:
    client.workflows.create(name="sdk-intake", main_node_name="sdk-router", nodes=[{"function": {"name": "sdk-router"}}])
    raise AssertionError("duplicate workflow accepted")
except bem.ConflictError:
    pass
print("workflows: create with pinned nodes, 422 on mainNodeName, 409 on a taken name")

got = client.workflows.retrieve("sdk-intake").workflow
assert got.id == workflow.id and got.main_node_name == "sdk-router", got
changed = client.workflows.update("sdk-intake", display_name="Intake")
assert changed.workflow.version_num == 2 and changed.workflow.display_name == "Intake", changed
assert not changed.connector_errors, changed
old = client.workflows.versions.retrieve(1, workflow_name="sdk-intake").workflow
assert old.version_num == 1 and old.display_name is None, old
versions = [v.version_num for v in client.workflows.versions.list("sdk-intake", limit=1)]
assert versions == [1, 2], versions
client.workflows.create(name="sdk-other", main_node_name="sdk-sender", nodes=[{"function": {"name": "sdk-sender"}}])
names = [w.name for w in client.workflows.list(limit=1)]
assert names == ["sdk-intake", "sdk-other"], names
names = [w.name for w in client.workflows.list(function_names=["sdk-invoice"], tags=["mail"])]
assert names == ["sdk-intake"], names
names = [w.name for w in client.workflows.list(function_name_version_nums=["sdk-sender.1"])]
assert names == ["sdk-other"], names
used = client.functions.versions.retrieve(1, function_name="sdk-invoice").function.used_in_workflows
assert [(u.workflow_name, u.used_in_workflow_version_nums) for u in used] == [("sdk-intake", [1, 2])], used
print("workflows: retrieve, update, versions, list with filters and auto-pagination, usedInWorkflows")

try:
    client.functions.delete("sdk-invoice")
    raise AssertionError("deleted a function a workflow runs")
except bem.ConflictError as err:
    assert "sdk-intake" in str(err), err
deleted = client.workflows.delete("sdk-intake")
assert deleted.workflow.id == workflow.id and deleted.workflow.version_num == 2, deleted
assert not deleted.connector_errors, deleted
client.functions.delete("sdk-invoice")
try:
    client.functions.retrieve("sdk-invoice")
    raise AssertionError("deleted function still readable")
except bem.NotFoundError:
    pass
print("delete: 409 while a workflow runs the function, workflow then function")

print("bem-sdk: all checks passed")
