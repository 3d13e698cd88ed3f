-- harnessweaver state (issue 30): one counter, atomically. Byte-identical copies in
-- python/harnessweaver/state/lua/ and ts-runner/src/state/lua/ (a test checks it).
-- KEYS: {K}:base (string float), {K}:live (hash hold -> amount), {K}:exp (zset hold ->
--   expires_at ms), {K}:done (zset hold -> expires_at ms: committed marks), {K}:held
--   (string float: the sum of the live holds' amounts)
-- total. No ARGV. Returns base + the live holds as a string (a missing key: "0").
-- The shared prelude (counter.lua: TIME, purge, total, touch) is put before this text
-- when the script is loaded.
purge()
return num(total())
