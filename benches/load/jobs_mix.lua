-- A rotating, realistic GET /api/v1/jobs mix for wrk.
--   JL_KEY=jl_live_... wrk -t1 -c32 -d10s -s benches/load/jobs_mix.lua http://127.0.0.1:8080
-- Every request is authenticated and metered as in production.
local key = os.getenv("JL_KEY") or ""
local queries = {
  "/api/v1/jobs",
  "/api/v1/jobs?q=rust",
  "/api/v1/jobs?domain=engineering,ai&remote_only=true",
  "/api/v1/jobs?seniority=senior,staff&min_confidence=0.8",
  "/api/v1/jobs?q=python&domain=data",
  "/api/v1/jobs?company=nimbus",
  "/api/v1/jobs?posted_after=2026-10-15&per_page=50",
  "/api/v1/jobs?domain=design&page=3",
  "/api/v1/jobs?q=kubernetes%20aws&seniority=lead",
  "/api/v1/jobs?remote_only=true&page=20",
}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", queries[(i % #queries) + 1], { ["X-API-Key"] = key })
end
-- Counting of non-200 answers lives beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
require("answers")
