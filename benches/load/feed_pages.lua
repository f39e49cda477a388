-- GET /api/v1/changes with a filter, always from the oldest event (the most a page can read),
-- for wrk; counts the answers by status and prints them, a second, when the run is done.
-- JL_FEED_DELAY_MS paces each connection (400 on 4 connections: 10 requests a second).
--   JL_KEY=jl_live_... JL_FEED_FILTER='q=zzzznomatch' JL_FEED_DELAY_MS=400 \
--     wrk -t1 -c4 -d20s -s benches/load/feed_pages.lua http://127.0.0.1:8080
local key = os.getenv("JL_KEY") or ""
local filter = os.getenv("JL_FEED_FILTER") or "q=zzzznomatch"
local pause = tonumber(os.getenv("JL_FEED_DELAY_MS") or "") or 0

if pause > 0 then
  delay = function() return pause end
end
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

ok, limited, other = 0, 0, 0

request = function()
  return wrk.format("GET", "/api/v1/changes?limit=500&" .. filter, { ["X-API-Key"] = key })
end

function response(status, headers, body)
  if status == 200 then ok = ok + 1
  elseif status == 429 then limited = limited + 1
  else other = other + 1 end
end

function done(summary, latency, requests)
  local totals = { ok = 0, limited = 0, other = 0 }
  for _, t in ipairs(threads) do
    for name, _ in pairs(totals) do totals[name] = totals[name] + t:get(name) end
  end
  local seconds = summary.duration / 1e6
  io.write(string.format("feed pages: %.1f/s answered (200), %.1f/s refused (429), %d other\n",
    totals.ok / seconds, totals.limited / seconds, totals.other))
  io.write(string.format("feed page latency (200 and 429 alike): p50 %.2f ms, p99 %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
