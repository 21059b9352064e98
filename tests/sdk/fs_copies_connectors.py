"""The official Python SDK (bem-sdk), unchanged, against a running canon: fs, function and
workflow copies, connectors. (infer_schema.create is not here: SDK 0.36 sends a broken
multipart body, see the README; tests/api/infer_schema.rs covers the endpoint.)

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_fs_copies_and_connectors` with
BEM_BASE_URL and BEM_API_KEY set; prints one line per check and exits non-zero on the first
failure.
"""
import base64

import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

schema = {
    "type": "object",
    "properties": {"vendor": {"type": "string", "x-entityType": "Company"}},
}
client.functions.create(function_name="sdk-parse", type="parse", parse_config={"schema": schema})
client.workflows.create(
    name="sdk-parsing", main_node_name="sdk-parse", nodes=[{"name": "sdk-parse", "function": {"name": "sdk-parse"}}]
)
text = "AGREEMENT\n\nVendor: Acme Corporation\n\nPayment Terms\n- Net 30 days\n"
content = base64.b64encode(text.encode()).decode()
call = client.workflows.call(
    "sdk-parsing", input={"single_file": {"input_content": content, "input_type": "text"}}, wait=True,
    call_reference_id="sdk-doc-1",
).call
assert call.status == "completed", call
print("setup: a parse function, a workflow, one parsed document")

listed = client.fs.navigate(op="ls")
assert listed.op == "ls" and listed.data[0]["referenceID"] == "sdk-doc-1", listed
assert listed.has_more is False and listed.count == 1, listed
cat = client.fs.navigate(op="cat", path="sdk-doc-1", select=["sections.label", "sections.type"])
assert cat.data["sections"][0] == {"label": "AGREEMENT", "type": "heading"}, cat.data
tables = client.fs.navigate(op="cat", path="sdk-doc-1", range={"section_types": ["list"]})
assert [s["type"] for s in tables.data["sections"]] == ["list"], tables.data
head = client.fs.navigate(op="head", path="sdk-doc-1", n=1)
assert len(head.data) == 1 and head.has_more, head
stat = client.fs.navigate(op="stat", path="sdk-doc-1")
assert stat.data["sectionCount"] == 4, stat.data
grep = client.fs.navigate(op="grep", pattern="net \\d+", regex=True, scope="sections")
assert grep.data[0]["match"] == "Net 30", grep.data
count = client.fs.navigate(op="grep", pattern="ACME", ignore_case=False, count_only=True)
assert count.count == 0, count
found = client.fs.navigate(op="find", filter={"search": "acme", "type": "Company"})
entity_id = found.data[0]["entityID"]
opened = client.fs.navigate(op="open", path=entity_id)
assert opened.data["mentions"][0]["sectionLabel"] == "AGREEMENT › paragraph 1", opened.data
xref = client.fs.navigate(op="xref", path=entity_id, limit=5)
assert xref.data[0]["section"]["text"] == "Vendor: Acme Corporation", xref.data
try:
    client.fs.navigate(op="ls", pattern="x")
    raise AssertionError("a grep field on ls accepted")
except bem.BadRequestError as err:
    assert "pattern" in str(err), err
print("fs: ls, cat (select, range), head, stat, grep (regex, countOnly), find, open, xref, wrong field")

copy = client.functions.copy.create(source_function_name="sdk-parse", target_function_name="sdk-parse-2").function
assert copy.function_name == "sdk-parse-2" and copy.version_num == 1, copy
workflow_copy = client.workflows.copy(
    source_workflow_name="sdk-parsing", target_workflow_name="sdk-parsing", target_environment="production"
)
assert workflow_copy.environment == "production", workflow_copy
assert workflow_copy.copied_functions[0].source_function_name == "sdk-parse", workflow_copy
assert workflow_copy.workflow.version_num == 1, workflow_copy
print("copies: functions.copy.create, workflows.copy to another environment")

connector = client.connectors.create(
    name="sdk-box", type="box", workflow_name="sdk-parsing", box_client_id="c", box_client_secret="s",
    box_enterprise_id="e", box_folder_id="1",
)
assert connector.connector_id and connector.workflow_name == "sdk-parsing", connector
assert [c.connector_id for c in client.connectors.list(workflow_name="sdk-parsing").connectors] == [connector.connector_id]
try:
    client.connectors.create(name="sdk-paragon", type="paragon", workflow_name="sdk-parsing")
    raise AssertionError("paragon accepted")
except bem.UnprocessableEntityError as err:
    assert "Paragon" in str(err), err
deleted = client.connectors.delete(connector.connector_id)
assert connector.connector_id in deleted, deleted
assert client.connectors.list().connectors == []
print("connectors: create, list, paragon refused, delete")

print("bem-sdk: all checks passed")
