-- harnessweaver state (issue 30): one counter, atomically. Byte-identical copies in
-- python/harnessweaver/state/lua/ and ts-runner/src/state/lua/ (a test checks it).
-- KEYS: {K}:base (string float), {K}:live (hash hold -> amount), {K}:exp (zset hold ->
--   expires_at ms), {K}:done (zset hold -> expires_at ms: committed marks), {K}:held
--   (string float: the sum of the live holds' amounts)
-- reserve. ARGV: hold, amount, limit ("" = none), ttl seconds, life seconds ("" = kept)
-- Returns {granted 0/1, total as a string, repeated 0/1}.
-- The shared prelude (counter.lua: TIME, purge, total, touch) is put before this text
-- when the script is loaded.
purge()
local hold, amount = ARGV[1], tonumber(ARGV[2])
local before = total()
if redis.call("HEXISTS", KEYS[2], hold) == 1 or redis.call("ZSCORE", KEYS[4], hold) then
  return {1, num(before), 1}
end
if ARGV[3] ~= "" and before + amount > tonumber(ARGV[3]) then
  return {0, num(before), 0}
end
redis.call("HSET", KEYS[2], hold, ARGV[2])
adjust(amount)
redis.call("ZADD", KEYS[3], num(now + tonumber(ARGV[4]) * 1000), hold)
touch(ARGV[5])
return {1, num(before + amount), 0}
