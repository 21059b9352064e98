"""The official Python SDK (bem-sdk), unchanged, against a running canon: workflow calls,
outputs, errors, calls and events.

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_calls` with BEM_BASE_URL and
BEM_API_KEY set; prints one line per check and exits non-zero on the first failure.
"""
import base64

import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

schema = {
    "type": "object",
    "properties": {"invoiceNumber": {"type": "string"}, "total": {"type": "number"}},
    "required": ["invoiceNumber", "total"],
}
client.functions.create(function_name="sdk-invoice", type="extract", output_schema_name="Invoice", output_schema=schema)
client.workflows.create(
    name="sdk-invoices", main_node_name="sdk-invoice", nodes=[{"name": "sdk-invoice", "function": {"name": "sdk-invoice"}}]
)
print("setup: a function and a workflow")


def file(text):
    return {"single_file": {"input_content": base64.b64encode(text.encode()).decode(), "input_type": "text"}}


done = client.workflows.call(
    "sdk-invoices", input=file("Invoice number: INV-7\nTotal: 99.00\n"), wait=True, call_reference_id="sdk-ref-1"
)
call = done.call
assert call.status == "completed", done
assert call.outputs and call.outputs[0].event_type == "extract", call.outputs
assert call.outputs[0].transformed_content["invoiceNumber"] == "INV-7", call.outputs[0]
again = client.workflows.call("sdk-invoices", input=file("other"), wait=True, call_reference_id="sdk-ref-1")
assert again.call.call_id == call.call_id, (again.call.call_id, call.call_id)
print("workflows.call: wait=true completes; callReferenceID deduplicates")

failed = client.workflows.call("sdk-invoices", input=file("no labels here"), wait=True).call
assert failed.status == "failed" and failed.errors, failed
assert "outputSchema constraint violation" in failed.errors[0].message, failed.errors[0]
print("workflows.call: a schema violation fails the call with an error event")

fetched = client.calls.retrieve(call.call_id).call
assert fetched.call_id == call.call_id and fetched.status == "completed", fetched
trace = client.calls.retrieve_trace(call.call_id).trace
assert len(trace.function_calls) == 1 and trace.function_calls[0].status == "completed", trace
listed = [c.call_id for c in client.calls.list(limit=1)]  # auto-pagination by page
assert sorted(listed) == sorted([call.call_id, failed.call_id]), listed
print("calls: retrieve, trace, list with auto-pagination")

output_id = call.outputs[0].event_id
assert client.outputs.retrieve(output_id).output.event_id == output_id
outputs = [o.event_id for o in client.outputs.list(limit=1)]
assert outputs == [output_id], outputs
errors = list(client.errors.list(call_ids=[failed.call_id]))
assert len(errors) == 1 and errors[0].event_id == failed.errors[0].event_id, errors
assert client.errors.retrieve(errors[0].event_id).error.message == errors[0].message
print("outputs and errors: list with filters and auto-pagination, retrieve")

print("bem-sdk: all checks passed")
