-- wrk: POST the benchmark's request on every connection, and count the
-- answers that are not a 200 ending with its ResponseCompleteEvent.
-- Headers (the bearer token) come from wrk -H; BENCH_BODY and
-- BENCH_TERMINAL, when set, replace the request and the terminal's mark.
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY") or '{"query":"why is the sky blue?","session_id":"bench"}'
wrk.headers["Content-Type"] = "application/json"
local terminal = os.getenv("BENCH_TERMINAL") or "event: ResponseCompleteEvent"

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  not_ok = 0
  incomplete = 0
end

function response(status, headers, body)
  if status ~= 200 then
    not_ok = not_ok + 1
  elseif not string.find(body, terminal, 1, true) then
    incomplete = incomplete + 1
  end
end

function done(summary, latency, requests)
  local bad, short = 0, 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("not_ok")
    short = short + thread:get("incomplete")
  end
  local e = summary.errors
  io.write(string.format("ANSWERS requests=%d not_ok=%d incomplete=%d socket_errors=%d\n",
    summary.requests, bad, short, e.connect + e.read + e.write + e.timeout))
end
