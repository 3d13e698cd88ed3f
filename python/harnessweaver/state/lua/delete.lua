-- harnessweaver state (issue 30). Byte-identical copies in python/harnessweaver/state/lua/ and
-- ts-runner/src/state/lua/ (a test checks it).
-- delete. KEYS: the counter's and the record's keys of one state key ({K}:base, {K}:live,
-- {K}:exp, {K}:done, {K}:held, {K}:rec). Drops them all.
redis.call("DEL", unpack(KEYS))
return 1
