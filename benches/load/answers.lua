-- Shared by the wrk scripts here: counts answers other than 200 in every wrk thread (each
-- thread has its own Lua state) and prints the sum when the run is done, with the mean bytes
-- read per answer (status line, headers and body).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

errors = 0

function response(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end

function done(summary, latency, requests)
  local non200 = 0
  for _, t in ipairs(threads) do non200 = non200 + t:get("errors") end
  local sock = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("non-200 answers: %d, socket errors: %d\n", non200, sock))
  io.write(string.format("bytes per answer: %.0f\n", summary.bytes / math.max(summary.requests, 1)))
end
