"""The official Python SDK (bem-sdk), unchanged, against a running canon: subscriptions and
the webhook signing secret.

Run by the Rust test `sdk::the_python_sdk_works_unchanged_on_subscriptions` with BEM_BASE_URL
and BEM_API_KEY set; prints one line per check and exits non-zero on the first failure.
"""
import bem

# BEM_BASE_URL and BEM_API_KEY from the environment. Strict validation: every answer must
# satisfy the SDK's own response model (a required field missing fails the check).
client = bem.Bem(_strict_response_validation=True)

client.functions.create(function_name="sdk-shaper", type="transform")
client.functions.create(function_name="sdk-other", type="transform")

created = client.subscriptions.create(
    name="sdk-sub", type="transform", function_name="sdk-shaper", webhook_url="https://hooks.example.com/in"
)
assert created.subscription_id.startswith("sub_"), created
assert created.function_name == "sdk-shaper" and created.webhook_url == "https://hooks.example.com/in", created
print("create: a subscription")

other = client.subscriptions.create(
    name="sdk-errors", type="error", function_name="sdk-other", webhook_url="https://hooks.example.com/err"
)
got = client.subscriptions.retrieve(created.subscription_id)
assert got.name == "sdk-sub" and got.type == "transform", got
print("retrieve: the same subscription")

listed = client.subscriptions.list(function_names=["sdk-shaper"])
assert [s.subscription_id for s in listed] == [created.subscription_id], listed
both = client.subscriptions.list(function_names=["sdk-shaper", "sdk-other"], limit=10)
assert {s.subscription_id for s in both} == {created.subscription_id, other.subscription_id}, both
print("list: a bare array, filtered by comma-joined functionNames")

paused = client.subscriptions.update(created.subscription_id, disabled=True)
assert paused.disabled is True and paused.name == "sdk-sub", paused
print("update: only the fields sent change")

client.subscriptions.delete(other.subscription_id)
try:
    client.subscriptions.retrieve(other.subscription_id)
    raise AssertionError("deleted subscription still readable")
except bem.NotFoundError:
    pass
print("delete: gone")

secret = client.webhook_secret.create()
assert secret.secret.startswith("whsec_"), secret
shown = client.webhook_secret.retrieve()
assert shown.secret != secret.secret and shown.secret[-4:] == secret.secret[-4:], shown
rotated = client.webhook_secret.create()
assert rotated.secret != secret.secret
client.webhook_secret.revoke()
try:
    client.webhook_secret.retrieve()
    raise AssertionError("revoked secret still readable")
except bem.NotFoundError:
    pass
print("webhook secret: generated once in plaintext, masked when read, rotated, revoked")

print("bem-sdk: all checks passed")
