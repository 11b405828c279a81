-- wrk script for the answer round trip, run by scripts/bench-roundtrip.sh,
-- which logs every annotator in and starts the study beforehand, so neither
-- a login nor a start is timed here.
--
--   wrk -t N -c N -d 10s -s scripts/bench/roundtrip.lua URL -- STUDY MODE COOKIE1 … COOKIEN
--
-- MODE "pair": a round trip is `GET next`, then `POST answer` (the issue's
-- definition: two HTTP exchanges per item). MODE "combined": `GET next`
-- once, then `POST answer?next=true`, whose response carries the next task
-- (docs/api.md): a round trip is one exchange per item, as the survey page
-- makes it.
--
-- One connection per thread (-t = -c): wrk's callbacks do not say which
-- connection a response came on, so each thread is one annotator with its
-- own session cookie. A round trip is timed from sending its first request
-- to the answer's response (LuaJIT's ffi reads the monotonic clock); wrk's
-- own latency figures are per request and are not used. A thread stops when
-- its annotator has nothing left to answer (`next` gives 204, or `next` is
-- null in a combined answer).
local ffi = require("ffi")
ffi.cdef([[
typedef struct { long tv_sec; long tv_nsec; } hn_timespec;
int clock_gettime(int clock, hn_timespec *ts);
]])
local ts = ffi.new("hn_timespec")
local function now_us()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
end

-- Main state: number the threads so each picks its own cookie.
local threads = {}
local made = 0
function setup(thread)
  made = made + 1
  thread:set("index", made)
  table.insert(threads, thread)
end

-- Thread state.
local study, mode, cookie, task
local sending_next = true
local started = 0
latencies = {}
failures = 0
finished = false

function init(args)
  study = args[1]
  mode = args[2]
  cookie = args[index + 2]
  if study == nil or cookie == nil or (mode ~= "pair" and mode ~= "combined") then
    error("usage: wrk -t N -c N ... -- STUDY pair|combined COOKIE1 ... COOKIEN (one cookie per thread)")
  end
end

function request()
  if sending_next then
    started = now_us()
    return wrk.format("GET", "/api/v1/studies/" .. study .. "/next", { Cookie = cookie })
  end
  if mode == "combined" then
    started = now_us()
    return wrk.format("POST", "/api/v1/tasks/" .. task .. "/answer?next=true",
      { Cookie = cookie, ["Content-Type"] = "application/json" },
      '{"option":"A","elapsed_ms":900}')
  end
  return wrk.format("POST", "/api/v1/tasks/" .. task .. "/answer",
    { Cookie = cookie, ["Content-Type"] = "application/json" },
    '{"option":"A","elapsed_ms":900}')
end

local function stop()
  finished = true
  wrk.thread:stop()
end

function response(status, headers, body)
  if sending_next then
    task = status == 200 and body:match('"task_id":(%d+)')
    if not task then
      -- 204: this annotator answered everything; anything else is a failure.
      if status ~= 204 then failures = failures + 1 end
      stop()
      return
    end
    sending_next = false
  elseif mode == "combined" then
    if status ~= 200 then
      failures = failures + 1
      sending_next = true -- ask `next` again
      return
    end
    latencies[#latencies + 1] = now_us() - started
    -- The next task's id is the first "task_id" after "next"; null: done.
    task = body:match('"next":{"task_id":(%d+)')
    if not task then stop() end
  else
    if status == 200 then
      latencies[#latencies + 1] = now_us() - started
    else
      failures = failures + 1
    end
    sending_next = true
  end
end

function done(summary, latency, requests)
  local all, failed, ran_out = {}, 0, 0
  for _, t in ipairs(threads) do
    for _, v in ipairs(t:get("latencies")) do all[#all + 1] = v end
    failed = failed + t:get("failures")
    if t:get("finished") then ran_out = ran_out + 1 end
  end
  table.sort(all)
  local function pct(p)
    if #all == 0 then return 0 end
    return all[math.min(#all, math.floor(#all * p) + 1)] / 1000
  end
  local secs = summary.duration / 1e6
  io.write(string.format("round_trips %d\n", #all))
  io.write(string.format("seconds %.3f\n", secs))
  io.write(string.format("round_trips_per_s %.0f\n", #all / secs))
  io.write(string.format("p50_ms %.2f\np99_ms %.2f\nmax_ms %.2f\n", pct(0.50), pct(0.99), pct(1.0)))
  io.write(string.format("failures %d\nannotators_finished %d\n", failed, ran_out))
end
