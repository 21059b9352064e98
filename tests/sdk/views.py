"""The official Python SDK (bem-sdk), unchanged, against a running canon: the views resource.

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_views` with BEM_BASE_URL and
BEM_API_KEY set; prints one line per check and exits non-zero on the first failure.
"""
import base64
import datetime

import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

schema = {"type": "object", "properties": {"invoiceNumber": {"type": "string"}, "total": {"type": "number"}}}
client.functions.create(function_name="sdk-invoices", type="extract", output_schema_name="Invoice", output_schema=schema)
client.workflows.create(name="sdk-flow", main_node_name="sdk-invoices",
                        nodes=[{"name": "sdk-invoices", "function": {"name": "sdk-invoices"}}])
text = "Invoice number: INV-42\nVendor: ACME Corp.\nTotal: $1,234.50\nDue date: 2026-01-31\n"
client.workflows.call("sdk-flow", input={"single_file": {"input_content": base64.b64encode(text.encode()).decode(),
                                                        "input_type": "text"}}, wait=True)

columns = [{"name": "number", "value_schema_path": ["invoiceNumber"], "display_order_index": 0},
           {"name": "total", "value_schema_path": ["total"], "display_order_index": 1}]
filters = [{"column_name": "total", "filter_type": "greater_than_number", "number": 1000}]
aggregations = [{"name": "sum", "function": "sum", "aggregate_column_name": "total", "display_type": "table"}]
functions = [{"name": "sdk-invoices"}]

view = client.views.create(name="sdk-view", columns=columns, filters=filters, aggregations=aggregations,
                           functions=functions, description="invoices over 1000")
assert view.view_id.startswith("vw_") and view.current_version_num == 1, view
assert view.columns[0].value_schema_path == ["invoiceNumber"], view
assert view.filters[0].filter_type == "greater_than_number" and view.aggregations[0].function == "sum", view
print("create: version 1")

got = client.views.retrieve(view.view_id)
assert got.name == "sdk-view" and got.functions[0].name == "sdk-invoices", got
print("retrieve: the current version")

updated = client.views.update(view.view_id, name="sdk-view-2", columns=columns, filters=[],
                              aggregations=aggregations, functions=functions)
assert updated.current_version_num == 2 and updated.name == "sdk-view-2", updated
print("update: a new version")

listed = list(client.views.list(function_names=["sdk-invoices"], limit=10))
assert [v.view_id for v in listed] == [view.view_id], listed
print("list: {views}, auto-paged")

now = datetime.datetime.now(datetime.timezone.utc)
window = {"start": (now - datetime.timedelta(hours=1)).isoformat(), "end": (now + datetime.timedelta(hours=1)).isoformat()}
table = client.views.generate_table_data(name="sdk-view", columns=columns, filters=filters, aggregations=[],
                                         functions=functions, time_window=window, limit=10, offset=0)
assert table.total_count == 1 and len(table.rows) == 1, table
values = {c.column_name: c.value for c in table.rows[0].columns}
assert values == {"number": "INV-42", "total": 1234.5}, values
print("table data: rows with eventID and column values")

data = client.views.generate_aggregation_data(name="sdk-view", columns=columns, filters=[],
                                              aggregations=aggregations, functions=functions, time_window=window)
assert data.aggregations[0].name == "sum" and data.aggregations[0].groups[0].group_name == "", data
assert abs(data.aggregations[0].groups[0].value - 1234.5) < 1e-9, data
print("aggregation data: one group for an ungrouped aggregation")

client.views.delete(view.view_id)
try:
    client.views.retrieve(view.view_id)
    raise AssertionError("deleted view still readable")
except bem.NotFoundError:
    pass
print("delete: every version gone")

print("bem-sdk: all checks passed")
