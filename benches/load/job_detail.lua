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
local threads = {}
setup = function(thread)
  table.insert(threads, thread)
end
errors = 0
response = function(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end
done = function(summary, latency, requests)
  local non200 = 0
  for _, t in ipairs(threads) do non200 = non200 + t:get("errors") end
  local sock = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("non-200 answers: %d, socket errors: %d\n", non200, sock))
end
