-- One key's flood of one kind of request for wrk, counting the answers by status: REST
-- `GET /api/v1/jobs?per_page=1`, or an MCP `tools/list` or `ping` POSTed to /mcp in a session.
--   JL_FLOOD=tools/list JL_KEY=jl_live_... JL_SESSION=... wrk -t1 -c8 -d5s -s benches/load/mcp_flood.lua http://127.0.0.1:8080
-- JL_FLOOD is `rest`, `tools/list` or `ping`; JL_SESSION is needed for the MCP ones. When the
-- run is done, prints `200: N, 429: N, other: N, socket errors: N` summed over wrk's threads.
local kind = os.getenv("JL_FLOOD") or "rest"
local key = os.getenv("JL_KEY") or ""
local session = os.getenv("JL_SESSION") or ""
local threads = {}
local i = 0

function setup(thread)
  table.insert(threads, thread)
end

ok, limited, other = 0, 0, 0

request = function()
  i = i + 1
  if kind == "rest" then
    return wrk.format("GET", "/api/v1/jobs?per_page=1", { ["X-API-Key"] = key })
  end
  local headers = {
    ["X-API-Key"] = key,
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = session,
    ["Mcp-Protocol-Version"] = "2025-06-18",
  }
  local body = string.format('{"jsonrpc":"2.0","id":%d,"method":"%s"}', i, kind)
  return wrk.format("POST", "/mcp", headers, body)
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
  elseif status == 429 then
    limited = limited + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local sums = { ok = 0, limited = 0, other = 0 }
  for _, t in ipairs(threads) do
    for name, _ in pairs(sums) do sums[name] = sums[name] + t:get(name) end
  end
  local sock = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("200: %d, 429: %d, other: %d, socket errors: %d\n",
    sums.ok, sums.limited, sums.other, sock))
end
