-- harnessweaver state (issue 30): one counter, atomically. Byte-identical copies in
-- python/harnessweaver/state/lua/ and ts-runner/src/state/lua/ (a test checks it).
-- KEYS: {K}:base (string float), {K}:live (hash hold -> amount), {K}:exp (zset hold ->
--   expires_at ms), {K}:done (zset hold -> expires_at ms: committed marks), {K}:held
--   (string float: the sum of the live holds' amounts)
-- release. ARGV: hold. Drops the live hold (a committed, marked hold stays charged).
-- Returns the total as a string.
-- The shared prelude (counter.lua: TIME, purge, total, touch) is put before this text
-- when the script is loaded.
purge()
local old = redis.call("HGET", KEYS[2], ARGV[1])
if old then
  redis.call("HDEL", KEYS[2], ARGV[1])
  adjust(-tonumber(old))
end
redis.call("ZREM", KEYS[3], ARGV[1])
return num(total())
