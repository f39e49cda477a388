"""Opens N MCP sessions on a running server and prints their ids, one a line.

    python3 benches/load/mcp_sessions.py http://127.0.0.1:8080 jl_live_... 1000

Each session is an `initialize` POST to /mcp (protocol 2025-06-18, which has sessions) and the
`notifications/initialized` that completes it; the sessions are then left idle. Standard
library only; every request has a 30 s timeout.
"""

import json
import sys
import urllib.request


def post(base, key, message, session=None):
    request = urllib.request.Request(base + "/mcp", data=json.dumps(message).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    request.add_header("X-API-Key", key)
    if session:
        request.add_header("Mcp-Session-Id", session)
        request.add_header("Mcp-Protocol-Version", "2025-06-18")
    with urllib.request.urlopen(request, timeout=30) as answer:
        answer.read()
        return answer.headers.get("Mcp-Session-Id")


def main():
    base, key, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}},
    }
    for _ in range(count):
        session = post(base, key, initialize)
        if not session:
            sys.exit("initialize answered no session id")
        post(base, key, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        print(session, flush=True)


if __name__ == "__main__":
    main()
