-- harnessweaver state (issue 30): one counter, atomically. Byte-identical copies in
-- python/harnessweaver/state/lua/ and ts-runner/src/state/lua/ (a test checks it).
-- The shared prelude of the counter scripts (reserve, commit, release, total): the loaders
-- (state/redis.py, ts-runner/src/state/redis.ts) put it before each one's text.
-- Time is the server's own (TIME), in milliseconds; a hold or mark whose expires_at <= now is gone. {K}:held is the running sum of
-- the live holds' amounts, adjusted on every change of {K}:live (absent while it is empty), so
-- no call reads all the holds of a key.
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local function num(x)
  return string.format("%.17g", x)
end
local function held()
  return tonumber(redis.call("GET", KEYS[5]) or "0")
end
local function adjust(delta)
  if redis.call("EXISTS", KEYS[2]) == 0 then
    redis.call("DEL", KEYS[5])
  else
    redis.call("SET", KEYS[5], num(held() + delta), "KEEPTTL")
  end
end
local function purge()
  local gone = redis.call("ZRANGEBYSCORE", KEYS[3], "-inf", num(now))
  if #gone > 0 then
    local delta = 0
    for i = 1, #gone, 1000 do
      local chunk = {unpack(gone, i, math.min(i + 999, #gone))}
      local amounts = redis.call("HMGET", KEYS[2], unpack(chunk))
      for j = 1, #amounts do
        if amounts[j] then
          delta = delta - tonumber(amounts[j])
        end
      end
      redis.call("HDEL", KEYS[2], unpack(chunk))
    end
    redis.call("ZREMRANGEBYSCORE", KEYS[3], "-inf", num(now))
    adjust(delta)
  end
  redis.call("ZREMRANGEBYSCORE", KEYS[4], "-inf", num(now))
end
local function total()
  return tonumber(redis.call("GET", KEYS[1]) or "0") + held()
end
local function touch(life)
  for i = 1, 5 do
    if life == "" then
      redis.call("PERSIST", KEYS[i])
    else
      redis.call("PEXPIRE", KEYS[i], math.ceil(tonumber(life) * 1000))
    end
  end
end
