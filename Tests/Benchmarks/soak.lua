-- The soak's wrk mix (Tests/Benchmarks/soak.sh), in two wrk processes so that misses waiting for
-- a render (a closed loop: a connection waits for its miss) do not park every connection:
--   "front" (most connections), one request per call:
--     74% memory hits on 20 hot grid-5 thumbnails    10% the same with If-None-Match (304)
--      6% the same hot ones as WebP (Accept)           6% bad requests
--      4% /assets pages by offset
--   "back" (a few connections), one request per call:
--     80% misses over 2,000 photos x grids 1/3/5 x JPEG/WebP
--     12% range prefetch starts, 8% stops (DELETE /prefetch), as one of 8 clients (Thumbd-Client-Id)
-- Arguments (after --): the mix ("front" or "back"), then the 20 hot thumbnails' ETags in order.
-- Counts every status, and each 5xx by status and JSON error code; done() writes {"requests",
-- "statuses", "fivexx", "errors"} as JSON to $SOAK_WRK_OUT.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  mix = args[1]
  etags = {}
  for i = 2, #args do etags[i - 1] = args[i] end
  statuses = {}
  fivexx = {}
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 1000003))
end

local bad = { "/thumbnails/3/..%2f..%2fetc%2fpasswd", "/thumbnails/9/s0001.jpg", "/thumbnails/3/%zz",
              "/thumbnails/3/missing.jpg", "/assets?limit=-1", "/assets?after=garbage" }
local grids, formats = { "1", "3", "5" }, { "jpeg", "webp" }

request = function()
  local r = math.random(100)
  local hot = math.random(0, 19)
  local hotPath = string.format("/thumbnails/5/s%04d.jpg", hot)
  local client = { ["Thumbd-Client-Id"] = "soak-" .. math.random(8) }
  if mix == "front" then
    if r <= 74 then
      return wrk.format("GET", hotPath)
    elseif r <= 84 then
      return wrk.format("GET", hotPath, { ["If-None-Match"] = etags[hot + 1] })
    elseif r <= 90 then
      return wrk.format("GET", hotPath, { ["Accept"] = "image/webp,image/*" })
    elseif r <= 96 then
      return wrk.format("GET", bad[math.random(#bad)])
    else
      return wrk.format("GET", string.format("/assets?offset=%d&limit=50", math.random(0, 1990)))
    end
  end
  if r <= 80 then
    return wrk.format("GET", string.format("/thumbnails/%s/s%04d.jpg?format=%s",
      grids[math.random(3)], math.random(20, 1999), formats[math.random(2)]))
  elseif r <= 92 then
    local s = math.random(0, 1900)
    client["Content-Type"] = "application/json"
    return wrk.format("POST", "/prefetch", client,
      string.format('{"grid": "%s", "start": %d, "end": %d}', grids[math.random(3)], s, s + 20))
  else
    return wrk.format("DELETE", "/prefetch", client)
  end
end

response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status >= 500 then
    local code = body and body:match('"error"%s*:%s*"([%w_]+)"') or "?"
    local key = status .. " " .. code
    fivexx[key] = (fivexx[key] or 0) + 1
  end
end

local function object(t)
  local parts = {}
  for k, v in pairs(t) do table.insert(parts, string.format('"%s": %d', tostring(k), v)) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

function done(summary, latency, requests)
  local st, fx = {}, {}
  for _, thread in ipairs(threads) do
    for k, v in pairs(thread:get("statuses")) do st[k] = (st[k] or 0) + v end
    for k, v in pairs(thread:get("fivexx")) do fx[k] = (fx[k] or 0) + v end
  end
  local e = summary.errors
  local f = assert(io.open(os.getenv("SOAK_WRK_OUT"), "w"))
  f:write(string.format('{"requests": %d, "statuses": %s, "fivexx": %s, "errors": %s}\n', summary.requests,
    object(st), object(fx), object({ connect = e.connect, read = e.read, write = e.write,
                                     status = e.status, timeout = e.timeout })))
  f:close()
end
