-- wrk script that seeds a history (Benchmarks/history.sh): SEED_SECONDS simulated seconds of a model
-- whose /sensor/temperature changes once a second among SEED_MEMBERS other members of /sensor.
-- Each simulated second is two JSON Patch writes to SEED_PATH (e.g. /models/plant):
--   1. the reading: /sensor/temperature (a new number) and 3 other members,
--   2. 4 other members (other devices of the same model),
-- so temperature is 1 change in 8 of the log. Every value written is new, so no write is a no-op.
-- Writes go out on wrk's connections as fast as the server answers them; once all are sent the
-- connections ask GET /healthz until every write has its answer, then the script ends the run by
-- sending wrk SIGINT (from a shell it starts), and `done` prints one JSON line:
--   SEED {"writes":N,"failed":N,"seconds":S}
-- Run with -t1 (one Lua state holds the counts).
local total = 2 * tonumber(os.getenv("SEED_SECONDS") or "86399")
local members = tonumber(os.getenv("SEED_MEMBERS") or "50")
local path = os.getenv("SEED_PATH") or "/models/plant"
local headers = { ["Content-Type"] = "application/json-patch+json" }
local calls, sent, other = 0, 0, 0
answered, failed, finished = 0, 0, nil  -- globals: `done` reads them with thread:get

local function replace(name, value)
  return string.format('{"op":"replace","path":"/sensor/%s","value":%s}', name, value)
end

local function others(count, ops)
  for _ = 1, count do
    other = other + 1
    ops[#ops + 1] = replace(string.format("m%02d", other % members), tostring(other))
  end
  return ops
end

request = function()
  calls = calls + 1
  -- wrk calls request() once before the run to size its pipeline and never sends that request.
  if calls == 1 or sent >= total then return wrk.format("GET", "/healthz") end
  sent = sent + 1
  local ops
  if sent % 2 == 1 then
    ops = others(3, { replace("temperature", string.format("%.5f", 20 + (sent + 1) / 2 / 100000)) })
  else
    ops = others(4, {})
  end
  return wrk.format("PATCH", path, headers, "[" .. table.concat(ops, ",") .. "]")
end

response = function(status, headers, body)
  if status ~= 200 then
    failed = failed + 1
  elseif body:sub(1, 6) ~= '{"id":' then
    return                                -- a /healthz answer
  end
  answered = answered + 1
  if answered == total then
    finished = os.time()
    -- wrk's main thread sleeps for -d; SIGINT ends the run now. The kernel may hand the signal to
    -- this thread instead (which then only stops), so a background shell sends it until wrk is gone.
    -- popen, not os.execute (system() ignores SIGINT in wrk while its shell runs), and the loop in
    -- the background, so that closing the handle does not wait for it.
    io.popen("(while kill -INT $PPID; do sleep 0.2; done) >/dev/null 2>&1 &")
  end
end

local threads = {}
setup = function(thread) threads[#threads + 1] = thread end

done = function(summary, latency, requests)
  local t = threads[1]
  io.write(string.format('SEED {"writes":%d,"failed":%d,"seconds":%.3f}\n',
    t:get("answered"), t:get("failed"), summary.duration / 1e6))
end
