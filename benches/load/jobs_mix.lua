-- A rotating, realistic GET /api/v1/jobs mix for wrk.
--   JL_KEY=jl_live_... wrk -t1 -c32 -d10s -s benches/load/jobs_mix.lua http://127.0.0.1:8080
-- Every request is authenticated and metered as in production.
-- The query list (jobs_queries.lua) and the counting of non-200 answers (answers.lua) live
-- beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local queries = require("jobs_queries")
local key = os.getenv("JL_KEY") or ""
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", queries[(i % #queries) + 1], { ["X-API-Key"] = key })
end
require("answers")
