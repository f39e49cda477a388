-- Counts answers other than 304 for wrk, as answers.lua counts those other than 200: for a
-- run that sends If-None-Match with the answer's own tag (benches/load/encodings.sh).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

errors = 0

function response(status, headers, body)
  if status ~= 304 then errors = errors + 1 end
end

function done(summary, latency, requests)
  local other = 0
  for _, t in ipairs(threads) do other = other + t:get("errors") end
  local sock = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("non-304 answers: %d, socket errors: %d\n", other, sock))
  io.write(string.format("bytes per answer: %.0f\n", summary.bytes / math.max(summary.requests, 1)))
end
