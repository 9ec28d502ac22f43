-- wrk script for the write benchmarks: every request writes a new value, so that no server can take
-- a write for a no-op, and the run ends with one JSON line of the figures writes.sh records.
-- WRITE_METHOD (PUT) and WRITE_TYPE (application/json) come from the environment.
local method = os.getenv("WRITE_METHOD") or "PUT"
local headers = { ["Content-Type"] = os.getenv("WRITE_TYPE") or "application/json" }
local counter = 0

request = function()
  counter = counter + 1
  return wrk.format(method, nil, headers, tostring(counter))
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRITES {"requests":%d,"duration_s":%.3f,"rps":%.1f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,' ..
    '"max_ms":%.3f,"mean_ms":%.3f,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3,
    latency.max / 1e3, latency.mean / 1e3, e.connect, e.read, e.write, e.status, e.timeout))
end
