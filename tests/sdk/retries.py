"""bem-sdk spends no retry on an answer a retry cannot change (canon says `x-should-retry`).

Run by the Rust test `sdk::the_python_sdk_does_not_retry_a_conflict` with BEM_BASE_URL and
BEM_API_KEY set. Without the header the SDK sends a 409 twice more (~1.25 s lost).
"""
import time

import bem
import httpx

sent = []
http = httpx.Client(event_hooks={"request": [lambda request: sent.append(request.url.path)]})
client = bem.Bem(http_client=http)  # default max_retries=2

client.buckets.create(name="sdk-retry-probe")
sent.clear()
started = time.monotonic()
try:
    client.buckets.create(name="sdk-retry-probe")
    raise AssertionError("duplicate name accepted")
except bem.ConflictError as err:
    assert err.response.headers.get("x-should-retry") == "false", err.response.headers
elapsed = time.monotonic() - started
assert sent == ["/v3/buckets"], f"a 409 name collision was sent {len(sent)} times: {sent}"
assert elapsed < 0.5, f"a 409 took {elapsed:.2f} s"
print(f"retries: a 409 name collision is sent once ({elapsed * 1000:.0f} ms)")

sent.clear()
try:
    client.buckets.retrieve("bkt_doesnotexist")
    raise AssertionError("unknown bucket found")
except bem.NotFoundError:
    pass
assert len(sent) == 1, sent
print("retries: a 404 is sent once")
print("bem-sdk: all checks passed")
