-- The GET /api/v1/jobs mix of jobs_mix.lua, rotating over many keys: one key per request in
-- turn (round-robin), read from a file of keys, one per line.
--   JL_KEYS_FILE=keys.txt wrk -t1 -c32 -d10s -s benches/load/jobs_mix_keys.lua http://127.0.0.1:8080
-- A file with one key sends exactly what jobs_mix.lua sends. Every request is authenticated and
-- metered as in production. The query list (jobs_queries.lua) and the counting of non-200
-- answers (answers.lua) live beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local queries = require("jobs_queries")
local keys = {}
local path = os.getenv("JL_KEYS_FILE") or error("set JL_KEYS_FILE to a file of keys, one per line")
for line in io.lines(path) do
  local key = line:match("^%s*(%S+)%s*$")
  if key then table.insert(keys, key) end
end
if #keys == 0 then error(path .. " holds no key") end
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", queries[(i % #queries) + 1], { ["X-API-Key"] = keys[(i % #keys) + 1] })
end
require("answers")
