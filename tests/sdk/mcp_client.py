"""The official Python MCP client against canon's /mcp: lists the tools and calls each one
over a tenant with two parsed documents (tests/api/mcp.rs seeds them: agreement-1 names Acme
Corporation selling to Initech, order-7 ACME Corp. selling to Umbrella Ltd).

Run by the integration test with PYTHONPATH=vendor/mcp, CANON_MCP_URL and CANON_API_KEY.
"""

import asyncio
import os

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

TOOLS = {
    "fs_ls", "fs_cat", "fs_grep", "fs_head", "fs_stat", "fs_find", "fs_open", "fs_xref",
    "entity_relations", "entity_neighbors", "search_entities", "entity_timeline",
    "entity_synonyms",
    "validate_entities", "reject_entities", "merge_entities",
}


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def main():
    url, key = os.environ["CANON_MCP_URL"], os.environ["CANON_API_KEY"]
    async with httpx2.AsyncClient(headers={"x-api-key": key}, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await exercise(session)
    print("mcp: all checks passed")


async def exercise(session):
    listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    check(names == TOOLS, f"tools: {sorted(names)}")
    for tool in listed.tools:
        check(tool.description, f"{tool.name} has a description")
        check(tool.input_schema.get("type") == "object", f"{tool.name} schema: {tool.input_schema}")

    async def call(name, arguments):
        result = await session.call_tool(name, arguments)
        check(not result.is_error, f"{name}({arguments}) failed: {result.content}")
        return result.structured_content

    async def refused(name, arguments):
        result = await session.call_tool(name, arguments)
        check(result.is_error, f"{name}({arguments}) should fail: {result.structured_content}")
        return result.structured_content

    # Documents.
    ls = await call("fs_ls", {"limit": 1})
    check((ls["op"], ls["count"], ls["hasMore"]) == ("ls", 1, True), f"ls: {ls}")
    rest = await call("fs_ls", {"cursor": ls["nextCursor"]})
    check([d["referenceID"] for d in ls["data"] + rest["data"]] == ["agreement-1", "order-7"], f"ls: {rest}")
    cat = await call("fs_cat", {"path": "agreement-1", "select": ["sections.label"]})
    check({"label": "Payment Terms › table 1"} in cat["data"]["sections"], f"cat: {cat}")
    head = await call("fs_head", {"path": "agreement-1", "n": 2})
    check([s["type"] for s in head["data"]] == ["heading", "paragraph"], f"head: {head}")
    stat = await call("fs_stat", {"path": "agreement-1"})
    check((stat["data"]["kind"], stat["data"]["sectionCount"]) == ("document", 7), f"stat: {stat}")
    grep = await call("fs_grep", {"pattern": "acme corp", "scope": "sections"})
    check(grep["count"] == 4, f"grep: {grep}")
    invoice = await call("fs_grep", {"pattern": r"INV-\d{4}", "regex": True})
    check([h["match"] for h in invoice["data"]] == ["INV-0042"], f"grep regex: {invoice}")

    # The entity memory.
    acme = await call("fs_find", {"filter": {"search": "acme"}})
    check(acme["count"] == 1, f"find: {acme}")
    acme_id = acme["data"][0]["entityID"]
    opened = await call("fs_open", {"path": acme_id})
    check(len(opened["data"]["mentions"]) == 2, f"open: {opened}")
    xref = await call("fs_xref", {"path": acme_id})
    check([h["referenceID"] for h in xref["data"]] == ["agreement-1", "order-7"], f"xref: {xref}")

    # The graph around Acme, and search by name.
    found = await call("search_entities", {"text": "INITECH"})
    check([e["canonical"] for e in found["entities"]] == ["Initech"], f"search: {found}")
    initech_id = found["entities"][0]["entityID"]
    umbrella_id = (await call("search_entities", {"text": "umbrella"}))["entities"][0]["entityID"]
    relations = await call("entity_relations", {"entityID": acme_id, "direction": "outbound"})
    buyers = sorted(e["targetEntity"]["canonical"] for e in relations["outbound"])
    check(buyers == ["Initech", "Umbrella Ltd"], f"relations: {relations}")
    check({e["relationType"] for e in relations["outbound"]} == {"SELLS_TO"}, f"relations: {relations}")
    near = await call("entity_neighbors", {"entityID": acme_id})
    check(sorted(n["canonical"] for n in near["neighbors"]) == ["Initech", "Umbrella Ltd"], f"neighbors: {near}")

    # Review: approve Acme, merge Initech into Umbrella, reject Umbrella.
    validated = await call("validate_entities", {"entityIDs": [acme_id]})
    check(validated["summary"]["validated"] == 1, f"validate: {validated}")
    check((await call("fs_stat", {"path": acme_id}))["data"]["status"] == "approved", "acme approved")
    merged = await call("merge_entities", {"entityID": umbrella_id, "entityIDs": [initech_id]})
    check(merged, f"merge: {merged}")
    survivor = await call("fs_open", {"path": initech_id})
    check(survivor["data"]["entityID"] == umbrella_id, f"merged-away ID opens its survivor: {survivor}")
    rejected = await call("reject_entities", {"entityIDs": [umbrella_id]})
    check(rejected["summary"]["validated"] == 1, f"reject: {rejected}")
    check((await call("fs_stat", {"path": umbrella_id}))["data"]["status"] == "rejected", "umbrella rejected")

    # Umbrella's synonyms: none (canonical names, its own and the merged one's, are not
    # synonyms; tests/api/mcp.rs checks a list with entries against REST's).
    names = await call("entity_synonyms", {"entityID": umbrella_id})
    check(names == {"synonyms": []}, f"synonyms: {names}")

    # What happened to Umbrella, newest first, a page of one at a time.
    kinds, cursor = [], None
    while True:
        page = await call("entity_timeline", {"entityID": umbrella_id, "limit": 1, **({"cursor": cursor} if cursor else {})})
        kinds += [item["kind"] for item in page["items"]]
        if not page["hasMore"]:
            break
        cursor = page["nextCursor"]
    check(kinds == ["status_changed", "merged"], f"timeline: {kinds}")

    # A service's refusal is a tool error with REST's body.
    missing = await refused("fs_cat", {"path": "nowhere"})
    check((missing["code"], missing["message"]) == (404, "parsed document nowhere not found"), f"{missing}")
    bad = await refused("fs_ls", {"limit": 0})
    check((bad["code"], bad["details"]["field"]) == (400, "limit"), f"{bad}")
    too_many = await refused("entity_timeline", {"entityID": umbrella_id, "limit": 500})
    check((too_many["code"], too_many["details"]["field"]) == (400, "limit"), f"{too_many}")


asyncio.run(main())
