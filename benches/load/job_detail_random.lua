-- GET /api/v1/jobs/{id}, each request for a random id of a file of ids (one per line), for
-- a read load that touches more jobs than the caches hold.
--   JL_KEY=jl_live_... JL_IDS_FILE=ids.txt wrk -t1 -c32 -d10s -s benches/load/job_detail_random.lua http://127.0.0.1:8080
local key = os.getenv("JL_KEY") or ""
local ids = {}
for line in io.lines(os.getenv("JL_IDS_FILE") or "ids.txt") do
  if line ~= "" then ids[#ids + 1] = line end
end
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/api/v1/jobs/" .. ids[math.random(#ids)], { ["X-API-Key"] = key })
end
-- Counting of non-200 answers lives beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
require("answers")
