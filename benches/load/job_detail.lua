-- GET /api/v1/jobs/{id} over a rotating set of ids for wrk.
--   JL_KEY=jl_live_... JL_IDS=id1,id2,... wrk -t1 -c32 -d10s -s benches/load/job_detail.lua http://127.0.0.1:8080
local key = os.getenv("JL_KEY") or ""
local ids = {}
for id in string.gmatch(os.getenv("JL_IDS") or "", "[^,]+") do table.insert(ids, id) end
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/api/v1/jobs/" .. ids[(i % #ids) + 1], { ["X-API-Key"] = key })
end
-- Counting of non-200 answers lives beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
require("answers")
