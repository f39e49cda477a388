-- search_jobs over MCP (streamable HTTP) for wrk: the same ten searches as jobs_queries.lua,
-- as JSON-RPC tools/call POSTs to /mcp, spread over the sessions in JL_SESSIONS (comma
-- separated ids, all opened with JL_KEY), one per request in turn.
--   JL_KEY=jl_live_... JL_SESSIONS=id1,id2 wrk -t1 -c32 -d10s -s benches/load/mcp_search.lua http://127.0.0.1:8080
-- Every call is authenticated and metered as in production; answers are server-sent events.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local key = os.getenv("JL_KEY") or ""
local sessions = {}
for id in string.gmatch(os.getenv("JL_SESSIONS") or "", "[^,]+") do table.insert(sessions, id) end
-- jobs_queries.lua, as search_jobs arguments.
local arguments = {
  '{}',
  '{"q":"rust"}',
  '{"domain":["engineering","ai"],"remote_only":true}',
  '{"seniority":["senior","staff"],"min_confidence":0.8}',
  '{"q":"python","domain":["data"]}',
  '{"company":"nimbus"}',
  '{"posted_after":"2026-10-15","per_page":50}',
  '{"domain":["design"],"page":3}',
  '{"q":"kubernetes aws","seniority":["lead"]}',
  '{"remote_only":true,"page":20}',
}
local i = 0
request = function()
  i = i + 1
  local headers = {
    ["X-API-Key"] = key,
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Protocol-Version"] = "2025-06-18",
  }
  if #sessions > 0 then headers["Mcp-Session-Id"] = sessions[(i % #sessions) + 1] end
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_jobs","arguments":%s}}',
    i, arguments[(i % #arguments) + 1])
  return wrk.format("POST", "/mcp", headers, body)
end
require("answers")
