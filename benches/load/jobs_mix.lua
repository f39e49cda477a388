-- A rotating, realistic GET /api/v1/jobs mix for wrk.
--   JL_KEY=jl_live_... wrk -t1 -c32 -d10s -s benches/load/jobs_mix.lua http://127.0.0.1:8080
-- Every request is authenticated and metered as in production.
-- The query list (jobs_queries.lua, or the one JL_QUERIES names) and the counting of non-200
-- answers (answers.lua) live beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
-- JL_QUERIES names another list beside it (jobs_queries_relevance, jobs_queries_fields).
local queries = require(os.getenv("JL_QUERIES") or "jobs_queries")
local key = os.getenv("JL_KEY") or ""
-- Optional: the Accept-Encoding to send (benches/load/encodings.sh), none when unset.
local accept_encoding = os.getenv("JL_ACCEPT_ENCODING")
local i = 0
request = function()
  i = i + 1
  local headers = { ["X-API-Key"] = key }
  if accept_encoding and accept_encoding ~= "" then headers["Accept-Encoding"] = accept_encoding end
  return wrk.format("GET", queries[(i % #queries) + 1], headers)
end
require("answers")
