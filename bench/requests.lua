-- wrk script: replays pre-generated requests, each at most once per thread (tokens are single use).
-- The file (first script argument) holds one request per line:
--   METHOD \t PATH \t Header: value \x1f Header: value ... \t BODY
-- Thread i of n takes lines i, i+n, i+2n, ...; when its lines run out it starts over, and the
-- summary counts the non-2xx answers that follow (and, of those, the 503s: load shed). With a second argument, the
-- ztoken ("z") of each 2xx answer is appended to <argument 2>.<thread> (ztokens for the
-- risk-query run). A fourth argument names the one status every answer must have instead of a 2xx (a
-- refusal's step), and non2xx then counts the answers without it. done() prints one JSON line with the
-- rate and latency percentiles.
local threads = {}
local counter = 0

function setup(thread)
   thread:set("id", counter)
   table.insert(threads, thread)
   counter = counter + 1
end

local function split(text, separator)
   local parts, start = {}, 1
   while true do
      local at = string.find(text, separator, start, true)
      if not at then
         table.insert(parts, string.sub(text, start))
         return parts
      end
      table.insert(parts, string.sub(text, start, at - 1))
      start = at + 1
   end
end

local function format(line)
   local fields = split(line, "\t")
   local headers = {}
   for _, header in ipairs(split(fields[3] or "", "\31")) do
      local name, value = string.match(header, "^([^:]+):%s*(.*)$")
      if name then headers[name] = value end
   end
   return wrk.format(fields[1], fields[2], headers, fields[4] ~= "" and fields[4] or nil)
end

function init(args)
   local file = assert(io.open(args[1], "r"))
   local lines = {}
   for line in file:lines() do table.insert(lines, line) end
   file:close()
   requests = {}
   local total = #lines
   local step = tonumber(args[3] or "1")
   for index = id + 1, total, step do table.insert(requests, format(lines[index])) end
   -- A file with fewer lines than threads holds reusable requests (the floor, the gate, the flood):
   -- every thread sends them. Left without lines, a thread's connections sent nothing, so the
   -- plain-text floor ran on half its connections and the flood on 1,000 of its 2,000, whose other
   -- 1,000 idled until the server's idle timeout closed them (the "1,000 read errors").
   if #requests == 0 then
      for index = 1, total do table.insert(requests, format(lines[index])) end
   end
   position = 0
   failures = 0
   shed = 0
   capture = args[2] ~= "" and args[2] or nil
   expected = tonumber(args[4] or "")
   if capture then
      captured = assert(io.open(capture .. "." .. id, "w"))
      captured:setvbuf("line")
   end
end

function request()
   position = position + 1
   if position > #requests then position = 1 end
   return requests[position]
end

function response(status, headers, body)
   if expected then
      if status ~= expected then failures = failures + 1 end
      return
   end
   if status < 200 or status > 299 then
      failures = failures + 1
      if status == 503 then shed = shed + 1 end
   elseif captured then
      local value = string.match(body, '"z"%s*:%s*"([^"]+)"')
      if value then captured:write(value, "\n") end
   end
end

function done(summary, latency, requests)
   local failed, shed = 0, 0
   for _, thread in ipairs(threads) do
      failed = failed + (thread:get("failures") or 0)
      shed = shed + (thread:get("shed") or 0)
   end
   io.write(string.format(
      '{"requests":%d,"seconds":%.3f,"rate":%.1f,"non2xx":%d,"shed":%d,"errors":%d,"connect":%d,"read":%d,"write":%d,"timeouts":%d,"p50_ms":%.3f,"p99_ms":%.3f,"p999_ms":%.3f,"max_ms":%.3f}\n',
      summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6), failed, shed,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
      summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000))
end
