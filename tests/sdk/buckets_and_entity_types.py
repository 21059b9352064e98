"""The official Python SDK (bem-sdk), unchanged, against a running canon.

Run by the Rust test `sdk::the_python_sdk_works_unchanged` with BEM_BASE_URL and BEM_API_KEY
set; prints one line per check and exits non-zero on the first failure.
"""
import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

created = client.buckets.create(name="sdk-bucket", description="made by bem-sdk")
assert created.bucket_id.startswith("bkt_"), created
assert client.buckets.retrieve(created.bucket_id).name == "sdk-bucket"
renamed = client.buckets.update(created.bucket_id, name="sdk-bucket-renamed")
assert renamed.name == "sdk-bucket-renamed" and renamed.description == "made by bem-sdk", renamed
print("buckets: create, retrieve, update")

for i in range(5):
    client.buckets.create(name=f"sdk-page-{i}")
first_page = client.buckets.list(limit=2)
assert len(first_page.buckets) == 2
every = [b.bucket_id for b in client.buckets.list(limit=2)]  # auto-pagination follows startingAfter
assert len(every) == 7 and every == sorted(every), every
assert len(set(every)) == 7
print("buckets: list with auto-pagination")

try:
    client.buckets.create(name="sdk-bucket-renamed")
    raise AssertionError("duplicate name accepted")
except bem.ConflictError as err:
    assert err.status_code == 409
client.buckets.delete(created.bucket_id, cascade=True)
try:
    client.buckets.retrieve(created.bucket_id)
    raise AssertionError("deleted bucket still readable")
except bem.NotFoundError:
    pass
print("buckets: conflict, delete, not found")

parent = client.entity_types.create(name="SDK Organisation", attribute_schema={"country": "string"})
child = client.entity_types.create(name="SDK Company", parent_type_id=parent.type_id, description="d")
assert child.parent_type_id == parent.type_id
fetched = client.entity_types.retrieve(child.type_id)
assert fetched.name == "SDK Company" and fetched.description == "d"
updated = client.entity_types.update(child.type_id, description="d2", parent_type_id="")
assert updated.parent_type_id == "" and updated.description == "d2", updated
try:
    client.entity_types.update(parent.type_id, parent_type_id=parent.type_id)
    raise AssertionError("cycle accepted")
except bem.UnprocessableEntityError:
    pass
client.entity_types.delete(child.type_id)
client.entity_types.delete(parent.type_id)
print("entity types: create, retrieve, update, cycle refused, delete")
print("bem-sdk: all checks passed")
