-- Shared by the wrk scripts here: counts answers other than the expected status (200, or
-- JL_EXPECT_STATUS, e.g. 304 for a run that sends If-None-Match with the answer's own tag) in
-- every wrk thread (each thread has its own Lua state) and prints the sum when the run is
-- done, with the mean bytes read per answer (status line, headers and body).
local threads = {}
local expected = tonumber(os.getenv("JL_EXPECT_STATUS") or "") or 200

function setup(thread)
  table.insert(threads, thread)
end

errors = 0

function response(status, headers, body)
  if status ~= expected then errors = errors + 1 end
end

function done(summary, latency, requests)
  local other = 0
  for _, t in ipairs(threads) do other = other + t:get("errors") end
  local sock = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("non-%d answers: %d, socket errors: %d\n", expected, other, sock))
  io.write(string.format("bytes per answer: %.0f\n", summary.bytes / math.max(summary.requests, 1)))
end
