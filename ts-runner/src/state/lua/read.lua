-- harnessweaver state (issue 30): a small JSON record. Byte-identical copies in
-- python/harnessweaver/state/lua/ and ts-runner/src/state/lua/ (a test checks it).
-- read. KEYS: {K}:rec (hash v = version, d = JSON). Returns {version, JSON}: {0, ""} for none.
local got = redis.call("HMGET", KEYS[1], "v", "d")
if not got[1] then
  return {0, ""}
end
return {tonumber(got[1]), got[2]}
