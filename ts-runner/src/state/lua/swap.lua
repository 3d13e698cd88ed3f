-- harnessweaver state (issue 30): a small JSON record. Byte-identical copies in
-- python/harnessweaver/state/lua/ and ts-runner/src/state/lua/ (a test checks it).
-- swap (compare-and-set). KEYS: {K}:rec. ARGV: expected version (0: none), JSON, life seconds
-- ("" = kept). Returns 1 when the version matched (the record then has version + 1), else 0.
local current = tonumber(redis.call("HGET", KEYS[1], "v") or "0")
if current ~= tonumber(ARGV[1]) then
  return 0
end
redis.call("HSET", KEYS[1], "v", current + 1, "d", ARGV[2])
if ARGV[3] == "" then
  redis.call("PERSIST", KEYS[1])
else
  redis.call("PEXPIRE", KEYS[1], math.ceil(tonumber(ARGV[3]) * 1000))
end
return 1
