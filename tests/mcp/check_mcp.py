"""The MCP endpoint of a running job-listings server, driven by the official MCP Python SDK.

    python3 tests/mcp/check_mcp.py --base http://127.0.0.1:8080 \
        --developer-key jl_live_... --agent-pro-key jl_live_... --server-binary target/debug/job-listings

Over streamable HTTP (`/mcp`): initialize, list the tools (a developer key is shown all but
the webhook tools, an agent_pro key every tool), call every tool with valid and invalid
arguments, compare the structured results with the REST answers to the same calls (same ids,
same totals), check that N answered calls raise /usage by N and refused ones not at all,
that a webhook tool refuses a developer key with REST's code, that /mcp without a key is
REST's 401, and that a JSON-RPC batch is a JSON-RPC error. Then the same client launches
`job-listings mcp --url BASE` as a subprocess (the key from JOB_LISTINGS_API_KEY) and checks
the stdio bridge answers the same.

Every wait is bounded; the script exits non-zero on the first failed check and prints
"N passed, 0 failed" when all pass.
"""

import argparse
import asyncio
import json
import os
import sys
import urllib.error
import urllib.request
import uuid

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

# What a developer key is shown; agent_pro and enterprise keys are shown the webhook tools too.
DEVELOPER_TOOLS = [
    "search_jobs",
    "get_job",
    "similar_jobs",
    "list_companies",
    "get_company",
    "follow_changes",
    "get_usage",
]
TOOLS = DEVELOPER_TOOLS + [
    "create_webhook",
    "list_webhooks",
    "delete_webhook",
]
# The longest any one step may take.
STEP_TIMEOUT = 60

passed = 0


def check(condition, what):
    global passed
    if not condition:
        print(f"FAILED: {what}")
        print(f"{passed} passed, 1 failed")
        sys.exit(1)
    passed += 1
    print(f"ok: {what}")


def rest(base, key, path, method="GET", body=None):
    """A REST call: status and JSON body (None when there is none)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + "/api/v1" + path, data=data, method=method)
    if key:
        request.add_header("X-API-Key", key)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
            return answer.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def raw_mcp(base, key, message):
    """A POST to /mcp outside the SDK: status and JSON body."""
    request = urllib.request.Request(
        base + "/mcp", data=json.dumps(message).encode(), method="POST"
    )
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if key:
        request.add_header("X-API-Key", key)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def calls_used(base, key):
    status, usage = rest(base, key, "/usage")
    assert status == 200, usage
    return usage["calls_used"]


async def call(session, tool, arguments):
    return await asyncio.wait_for(session.call_tool(tool, arguments), STEP_TIMEOUT)


def structured(result):
    return result.structured_content if hasattr(result, "structured_content") else result.structuredContent


def is_error(result):
    return bool(result.is_error if hasattr(result, "is_error") else result.isError)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def refused_with(result, code):
    return is_error(result) and (structured(result) or {}).get("code") == code


async def check_tools(session, base, dev_key, pro_key, label, pro_session=None):
    """Every tool, valid and invalid, against REST; `label` names the transport."""
    listed = await asyncio.wait_for(session.list_tools(), STEP_TIMEOUT)
    names = [t.name for t in listed.tools]
    check(names == DEVELOPER_TOOLS, f"{label}: a developer key is shown its plan's tools, in order ({names})")
    tools = list(listed.tools)
    if pro_session is not None:
        pro_listed = await asyncio.wait_for(pro_session.list_tools(), STEP_TIMEOUT)
        pro_names = [t.name for t in pro_listed.tools]
        check(pro_names == TOOLS, f"{label}: an agent_pro key is shown every tool, in order ({pro_names})")
        tools = list(pro_listed.tools)
    for tool in tools:
        output = tool.output_schema if hasattr(tool, "output_schema") else tool.outputSchema
        inputs = tool.input_schema if hasattr(tool, "input_schema") else tool.inputSchema
        check(
            output and output.get("type") == "object" and inputs.get("type") == "object",
            f"{label}: {tool.name} has input and output schemas",
        )

    search = await call(
        session,
        "search_jobs",
        {"domain": ["engineering", "ai"], "remote_only": True, "per_page": 5, "facets": ["domain"]},
    )
    # In the order MCP writes the arguments: that of the parameters.
    status, page = rest(base, dev_key, "/jobs?domain=engineering,ai&remote_only=true&facets=domain&per_page=5")
    check(not is_error(search) and status == 200, f"{label}: search_jobs answers")
    got = structured(search)
    check(
        [j["id"] for j in got["data"]] == [j["id"] for j in page["data"]]
        and got["pagination"]["total"] == page["pagination"]["total"],
        f"{label}: search_jobs has GET /jobs's ids and total ({page['pagination']['total']})",
    )
    check(got == page, f"{label}: search_jobs's structured content is GET /jobs's answer")
    first = page["data"][0]
    check(first["id"] in text_of(search), f"{label}: the text names each job's id")

    job = await call(session, "get_job", {"id": first["id"]})
    check(structured(job) == rest(base, dev_key, f"/jobs/{first['id']}")[1], f"{label}: get_job is GET /jobs/{{id}}")
    similar = await call(session, "similar_jobs", {"id": first["id"], "per_page": 3})
    check(
        structured(similar) == rest(base, dev_key, f"/jobs/{first['id']}/similar?per_page=3")[1],
        f"{label}: similar_jobs is GET /jobs/{{id}}/similar",
    )
    check(
        first["id"] not in [j["id"] for j in structured(similar)["data"]],
        f"{label}: similar_jobs never lists the job itself",
    )
    companies = await call(session, "list_companies", {"per_page": 4})
    check(structured(companies) == rest(base, dev_key, "/companies?per_page=4")[1], f"{label}: list_companies is GET /companies")
    company = await call(session, "get_company", {"id": first["company_id"]})
    check(
        structured(company) == rest(base, dev_key, f"/companies/{first['company_id']}")[1],
        f"{label}: get_company is GET /companies/{{id}}",
    )
    start = await call(session, "follow_changes", {"after": "now", "domain": ["ai"]})
    check(
        structured(start) == rest(base, dev_key, "/changes?after=now&domain=ai")[1],
        f"{label}: follow_changes is GET /changes",
    )
    check(structured(start)["next_cursor"] in text_of(start), f"{label}: the text names the cursor to go on from")
    usage = await call(session, "get_usage", {})
    check(structured(usage) == rest(base, dev_key, "/usage")[1], f"{label}: get_usage is GET /usage")

    # Refused calls: REST's codes, not counted.
    for tool, arguments, code in [
        ("search_jobs", {"per_page": 51}, "invalid_parameter"),
        ("search_jobs", {"domains": ["ai"]}, "unknown_parameter"),
        ("search_jobs", {"posted_after": "yesterday"}, "invalid_parameter"),
        ("get_job", {"id": "not-a-uuid"}, "invalid_parameter"),
        ("get_job", {"id": str(uuid.uuid4())}, "not_found"),
        ("list_companies", {"page": 0}, "invalid_parameter"),
        ("get_company", {"id": str(uuid.uuid4())}, "not_found"),
        ("follow_changes", {"after": "not-a-cursor"}, "invalid_parameter"),
        ("get_usage", {"q": "x"}, "unknown_parameter"),
        ("create_webhook", {"callback_url": "https://hooks.example.com/x"}, "plan_upgrade_required"),
        ("delete_webhook", {"id": str(uuid.uuid4())}, "not_found"),
    ]:
        result = await call(session, tool, arguments)
        check(refused_with(result, code), f"{label}: {tool} {arguments} is refused with {code}")
    # As REST, a developer key's webhook list is empty (it cannot register any): answered.
    listed = await call(session, "list_webhooks", {})
    check(structured(listed) == rest(base, dev_key, "/webhooks")[1], f"{label}: list_webhooks is GET /webhooks")

    # Metering: N answered tool calls raise usage by N; refusals and get_usage by nothing.
    before = calls_used(base, dev_key)
    answered = 3
    for page in range(1, answered + 1):
        result = await call(session, "search_jobs", {"page": page, "per_page": 2})
        check(not is_error(result), f"{label}: search_jobs page {page} answers")
    for arguments in ({"per_page": 0}, {"bogus": 1}):
        check(is_error(await call(session, "search_jobs", arguments)), f"{label}: {arguments} is refused")
    await call(session, "get_usage", {})
    check(calls_used(base, dev_key) == before + answered,
          f"{label}: {answered} answered calls raised usage by {answered}, refusals and get_usage by 0")

    if pro_session is not None:
        created = await call(pro_session, "create_webhook", {"callback_url": "https://hooks.example.com/py", "domain_filters": ["ai"]})
        hook = structured(created)
        check(not is_error(created) and hook["secret"].startswith("whsec_"), f"{label}: create_webhook shows the secret once")
        listed = await call(pro_session, "list_webhooks", {})
        check(structured(listed) == rest(base, pro_key, "/webhooks")[1], f"{label}: list_webhooks is GET /webhooks")
        check(all("secret" not in h for h in structured(listed)["data"]), f"{label}: listed webhooks carry no secret")
        deleted = await call(pro_session, "delete_webhook", {"id": hook["id"]})
        check(structured(deleted) == {"id": hook["id"], "deleted": True}, f"{label}: delete_webhook deletes")
        again = await call(pro_session, "delete_webhook", {"id": hook["id"]})
        check(refused_with(again, "not_found"), f"{label}: a deleted webhook is not found")


def check_initialized(info, label):
    """The server names itself, offers tools and says how to use them."""
    check(
        info.server_info.name == "job-listings"
        and info.capabilities.tools is not None
        and bool(info.instructions and info.instructions.strip()),
        f"{label}: initialize names job-listings, offers tools and gives instructions",
    )


def http_session(base, key):
    client = create_mcp_http_client(headers={"X-API-Key": key})
    return streamable_http_client(base + "/mcp", http_client=client)


async def over_http(base, dev_key, pro_key):
    async with http_session(base, dev_key) as (read, write), ClientSession(read, write) as session:
        info = await asyncio.wait_for(session.initialize(), STEP_TIMEOUT)
        check_initialized(info, "http")
        async with http_session(base, pro_key) as (pread, pwrite), ClientSession(pread, pwrite) as pro:
            await asyncio.wait_for(pro.initialize(), STEP_TIMEOUT)
            await check_tools(session, base, dev_key, pro_key, "http", pro)

    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "py", "version": "1"}},
    }
    status, headers, body = raw_mcp(base, None, initialize)
    problem = json.loads(body)
    check(status == 401 and problem["code"] == "missing_api_key" and "mcp-session-id" not in headers,
          "http: /mcp without a key is REST's 401, no session")
    status, _, body = raw_mcp(base, "jl_live_0000000000000000000000000000000000000000", initialize)
    check(status == 401 and json.loads(body)["code"] == "invalid_api_key", "http: a bad key is REST's 401")
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    status, headers, body = raw_mcp(base, dev_key, [ping, ping])
    error = json.loads(body)
    check(
        status == 400
        and headers.get("Content-Type") == "application/json"
        and error["error"]["code"] == -32600
        and "batch" in error["error"]["message"],
        "http: a JSON-RPC batch is a JSON-RPC -32600 error, not plain text",
    )


async def over_stdio(base, dev_key, binary):
    server = StdioServerParameters(command=binary, args=["mcp", "--url", base], env={"JOB_LISTINGS_API_KEY": dev_key})
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        info = await asyncio.wait_for(session.initialize(), STEP_TIMEOUT)
        check_initialized(info, "stdio")
        await check_tools(session, base, dev_key, None, "stdio")


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--developer-key", required=True)
    parser.add_argument("--agent-pro-key", required=True)
    parser.add_argument("--server-binary", required=True)
    args = parser.parse_args()
    await asyncio.wait_for(over_http(args.base, args.developer_key, args.agent_pro_key), 300)
    await asyncio.wait_for(over_stdio(args.base, args.developer_key, args.server_binary), 300)
    print(f"{passed} passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main())
