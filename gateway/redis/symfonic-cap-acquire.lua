-- symfonic-cap-acquire.lua: take a slot under a cluster-wide stream cap
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  Z1 ... Zn   stream-cap sets (a route's, a tenant's), all in one
--                   hash slot; a cap in another slot is acquired by a
--                   call of its own
-- ARGV  1  lease id
--       2  lease TTL, ms
--       then per set, in KEYS' order: its cap (streams)
-- Returns
--   {1, 0}   a slot in every set (a set that held the id already keeps
--            it, renewed)
--   {0, i}   the i-th set (from 1) is full: no slot taken anywhere
--
-- Expired slots are pruned first, so a dead instance's streams stop
-- counting once their leases run out.

local id = ARGV[1]
local ttl_us = tonumber (ARGV[2]) * 1000
local now = now_us ()

for i = 1, #KEYS do
  local z = KEYS[i]
  prune_slots (z, now)
  if not redis.call ('ZSCORE', z, id) and redis.call ('ZCARD', z) >= tonumber (ARGV[2 + i]) then
    return { 0, i }
  end
end

for i = 1, #KEYS do
  redis.call ('ZADD', KEYS[i], now + ttl_us, id)
  keep_until (KEYS[i], now, now + ttl_us)
end

return { 1, 0 }
