"""The official Python SDK (bem-sdk), unchanged, against a running canon: collections.

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_collections` with BEM_BASE_URL
and BEM_API_KEY set; prints one line per check and exits non-zero on the first failure.
"""
import time

import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

created = client.collections.create(collection_name="sdk_catalog")
assert created.collection_id.startswith("col_") and created.item_count == 0, created
for name in ["sdk_catalog.shoes", "sdk_catalog.shoes.running", "other"]:
    client.collections.create(collection_name=name)
try:
    client.collections.create(collection_name="product-catalog")
    raise AssertionError("bad name accepted")
except bem.BadRequestError as err:
    assert "not allowed" in str(err), err
under = [c.collection_name for c in client.collections.list(parent_collection_name="sdk_catalog")]
assert under == ["sdk_catalog", "sdk_catalog.shoes", "sdk_catalog.shoes.running"], under
every = [c.collection_name for c in client.collections.list(limit=1)]  # auto-pagination by page
assert len(every) == 4, every
print("collections: create, bad name, list under a parent, auto-pagination")

added = client.collections.items.add(
    collection_name="sdk_catalog.shoes",
    items=[{"data": "Trail running shoe with a grippy sole"}, {"data": {"name": "Wool sock", "size": 42}}],
)
assert added.status == "pending" and added.event_id and added.message, added
deadline = time.time() + 120
while True:
    got = client.collections.items.retrieve(collection_name="sdk_catalog", include_subcollections=True)
    if all(getattr(i, "status", None) != "pending" for i in got.items) or time.time() > deadline:
        break
    time.sleep(0.2)
assert got.item_count == 2 and len(got.items) == 2, got
sock = next(i for i in got.items if isinstance(i.data, dict))
assert sock.data["name"] == "Wool sock"
updated = client.collections.items.update(
    collection_name="sdk_catalog.shoes",
    items=[{"collection_item_id": sock.collection_item_id, "data": {"name": "Wool sock", "size": 43}}],
)
assert updated.status == "pending" and updated.event_id != added.event_id, updated
client.collections.items.delete(collection_name="sdk_catalog.shoes", collection_item_id=sock.collection_item_id)
left = client.collections.items.retrieve(collection_name="sdk_catalog.shoes")
assert [i.collection_item_id for i in left.items] != [sock.collection_item_id] and left.item_count == 1, left
print("items: add, retrieve with subcollections, update, delete")

counts = client.collections.count_tokens(texts=["Hello world", "word " * 9000])
assert counts.max_token_limit == 8192 and counts.texts_exceeding_limit == 1, counts
assert counts.token_counts[0].token_count == 2 and counts.token_counts[1].exceeds_limit, counts
print("token count")

client.collections.delete(collection_name="sdk_catalog")
remaining = [c.collection_name for c in client.collections.list()]
assert remaining == ["other"], remaining
try:
    client.collections.items.retrieve(collection_name="sdk_catalog.shoes")
    raise AssertionError("deleted subtree still readable")
except bem.NotFoundError:
    pass
print("collections: delete takes the subtree")
print("bem-sdk: all checks passed")
