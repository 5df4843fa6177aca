-- wrk script: each request books a random window on a random pool and kind.
-- Tokens and pool ids come from files the bench script writes; every answer
-- is counted by status so the summary shows admitted vs refused vs errors.
-- BENCH_VIA=mcp books through MCP's `book` tool instead (a JSON-RPC call to
-- /mcp, always HTTP 200: a done call counts as 201, a refused one as its
-- REST status); BENCH_TOOL=find_free asks what is free in the window
-- (REST's GET /api/v1/free, or MCP's `find_free`).

local tokens, pools = {}, {}
local kinds = { "nvidia.com/gpu", "nvidia.com/mig-1g.24gb" }
local threads = {}

local function lines(path)
  local out = {}
  for line in io.lines(path) do if #line > 0 then out[#out + 1] = line end end
  return out
end

function setup(thread)
  thread:set("id", #threads + 1)
  threads[#threads + 1] = thread
end

function init(args)
  tokens = lines(os.getenv("BENCH_TOKENS"))
  pools = lines(os.getenv("BENCH_POOLS"))
  math.randomseed(os.time() + id * 7919)
  counts = {} -- global on purpose: done() reads it from each thread with thread:get
end

local via, tool = os.getenv("BENCH_VIA") or "rest", os.getenv("BENCH_TOOL") or "book"

local function mcp(name, arguments)
  return string.format('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}',
    name, arguments)
end

function request()
  local slot = 900
  local base = (math.floor(os.time() / slot) + 1) * slot
  local start = base + math.random(0, 26 * 96) * slot      -- anywhere in the next 26 days
  local finish = start + math.random(1, 32) * slot          -- 15 min to 8 h
  local body = string.format(
    '{"pool_id":"%s","kind":"%s","quantity":%d,"start":"%s","end":"%s","mode":"interactive"}',
    pools[math.random(#pools)], kinds[math.random(#kinds)], math.random(1, 2),
    os.date("!%Y-%m-%dT%H:%M:%SZ", start), os.date("!%Y-%m-%dT%H:%M:%SZ", finish))
  local auth = "Bearer " .. tokens[math.random(#tokens)]
  local from, to = os.date("!%Y-%m-%dT%H:%M:%SZ", start), os.date("!%Y-%m-%dT%H:%M:%SZ", finish)
  if via == "rest" and tool == "find_free" then
    return wrk.format("GET", "/api/v1/free?from=" .. from .. "&to=" .. to, { ["Authorization"] = auth })
  end
  if via == "mcp" then
    if tool == "find_free" then body = string.format('{"from":"%s","to":"%s"}', from, to) end
    return wrk.format("POST", "/mcp", {
      ["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream",
      ["Authorization"] = auth,
    }, mcp(tool, body))
  end
  return wrk.format("POST", "/api/v1/bookings", {
    ["Content-Type"] = "application/json",
    ["Authorization"] = auth,
  }, body)
end

function response(status, headers, body)
  if via == "mcp" and status == 200 then
    -- The tool's own answer: done, or refused with the REST status it names.
    if string.find(body, '"isError":false', 1, true) then
      status = tool == "book" and 201 or 200
    else
      status = tonumber(string.match(body, '"status":(%d+)')) or 500
    end
  end
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("counts")) do total[status] = (total[status] or 0) + n end
  end
  for status, n in pairs(total) do io.write(string.format("STATUS %d %d\n", status, n)) end
  for _, p in ipairs({ 50, 90, 99 }) do
    io.write(string.format("LATENCY_P%d_MS %.2f\n", p, latency:percentile(p) / 1000))
  end
  io.write(string.format("REQUESTS_PER_S %.1f\n", summary.requests / (summary.duration / 1e6)))
end
