-- symfonic-lease-renew.lua: keep a running stream's leases alive
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  B1 L1 ... Bn Ln   budget scopes the lease was reserved in, then
--       Z1 ... Zm         stream-cap sets it holds a slot in;
--                         all in one hash slot
-- ARGV  1  lease id
--       2  new TTL from now, ms
--       3  n, the number of budget scopes (KEYS holds 2n + m keys)
-- Returns {renewed, lost}: of the n + m, how many were renewed, and how
-- many no longer knew the lease
--
-- A lease that expired before its renewal is not brought back, even
-- where no script has reclaimed it yet: whether a late holder keeps its
-- slot must not depend on whether anyone else happened to look.

local id = ARGV[1]
local ttl_us = tonumber (ARGV[2]) * 1000
local n = tonumber (ARGV[3])
local now = now_us ()
local renewed = 0

for i = 1, n do
  local b, l = KEYS[2 * i - 1], KEYS[2 * i]
  -- the window does not matter here: nothing is charged
  load_scope (b, l, now, math.huge)
  if redis.call ('ZSCORE', l, id) then
    redis.call ('ZADD', l, 'XX', now + ttl_us, id)
    renewed = renewed + 1
    keep_until (b, now, now + ttl_us)
    keep_until (l, now, now + ttl_us)
  end
end

for i = 2 * n + 1, #KEYS do
  local z = KEYS[i]
  prune_slots (z, now)
  if redis.call ('ZSCORE', z, id) then
    redis.call ('ZADD', z, 'XX', now + ttl_us, id)
    renewed = renewed + 1
    keep_until (z, now, now + ttl_us)
  end
end

return { renewed, #KEYS - n - renewed }
