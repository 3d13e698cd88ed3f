-- harnessweaver state (issue 30): one counter, atomically. Byte-identical copies in
-- python/harnessweaver/state/lua/ and ts-runner/src/state/lua/ (a test checks it).
-- KEYS: {K}:base (string float), {K}:live (hash hold -> amount), {K}:exp (zset hold ->
--   expires_at ms), {K}:done (zset hold -> expires_at ms: committed marks), {K}:held
--   (string float: the sum of the live holds' amounts)
-- commit. ARGV: hold, amount, ttl seconds ("" = a committed charge: base += amount and the hold
-- marked for MARK_TTL, 7 days; else the charge stays a live hold for ttl), life ("" = kept).
-- Returns the total as a string. A hold already marked: nothing changes.
-- The shared prelude (counter.lua: TIME, purge, total, touch) is put before this text
-- when the script is loaded.
purge()
local hold = ARGV[1]
if redis.call("ZSCORE", KEYS[4], hold) then
  return num(total())
end
local old = tonumber(redis.call("HGET", KEYS[2], hold) or "0")
if ARGV[3] ~= "" then
  redis.call("HSET", KEYS[2], hold, ARGV[2])
  adjust(tonumber(ARGV[2]) - old)
  redis.call("ZADD", KEYS[3], num(now + tonumber(ARGV[3]) * 1000), hold)
else
  if redis.call("HDEL", KEYS[2], hold) == 1 then
    adjust(-old)
  end
  redis.call("ZREM", KEYS[3], hold)
  local base = tonumber(redis.call("GET", KEYS[1]) or "0")
  redis.call("SET", KEYS[1], num(base + tonumber(ARGV[2])))
  redis.call("ZADD", KEYS[4], num(now + 604800000), hold)
end
touch(ARGV[4])
return num(total())
