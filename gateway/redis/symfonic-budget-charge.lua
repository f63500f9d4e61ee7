-- symfonic-budget-charge.lua: count a running stream's usage against its lease
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  B1 L1 B2 L2 ...   the scopes the lease was reserved in
-- ARGV  1  lease id
--       2  usage so far, tokens: the stream's whole usage, not a batch
--       3  usage so far that an earlier charge acknowledged, tokens
--       then per scope, in KEYS' order:
--       limit (tokens per window), window (µs)
--       then, optionally, a lease TTL (ms): the lease is renewed for it
--       where it is still known, so that a stream that charges needs no
--       renewal of its own
-- Returns {exhausted, remaining, lost}
--   remaining   the tokens the stream may still use: the least over the
--               scopes of what its lease still holds plus the room left
--   exhausted   1 when remaining is 0: the stream is to end
--   lost        how many scopes no longer knew the lease (it expired)
--
-- Usage is cumulative so that a charge whose answer was lost, or one sent
-- twice, counts nothing twice: the lease records what it was charged, and
-- only the difference is counted. A scope that lost the lease counts the
-- usage past what the caller saw acknowledged (ARGV 3). What a lease
-- holds is spent first; usage past it is taken from the room left.

local id = ARGV[1]
local used_total = tonumber (ARGV[2])
local used_acked = tonumber (ARGV[3])
local n = #KEYS / 2
local now = now_us ()
local ttl_us = nil
if #ARGV > 3 + 2 * n then
  ttl_us = tonumber (ARGV[4 + 2 * n]) * 1000
end

local remaining = nil
local lost = 0

for i = 1, n do
  local b, l = KEYS[2 * i - 1], KEYS[2 * i]
  local limit = tonumber (ARGV[2 + 2 * i])
  local window = tonumber (ARGV[3 + 2 * i])
  local scope = load_scope (b, l, now, window)
  local value = redis.call ('HGET', b, 'l:' .. id)
  local delta
  local held_after = 0

  if value then
    local reserved, used = parse_lease (value)
    delta = math.max (used_total - used, 0)
    held_after = lease_held (reserved, used + delta)
    scope.held = math.max (scope.held - (lease_held (reserved, used) - held_after), 0)
    redis.call ('HSET', b, 'l:' .. id, string.format ('%d %d', reserved, used + delta))
    if ttl_us and redis.call ('ZADD', l, 'XX', 'CH', now + ttl_us, id) then
      keep_until (b, now, now + ttl_us)
      keep_until (l, now, now + ttl_us)
    end
  else
    lost = lost + 1
    delta = math.max (used_total - used_acked, 0)
  end

  -- an overrun spends this window, never the ones after it
  scope.charged = math.min (scope.charged + delta, limit)
  store_scope (b, scope, now, window)

  local left = held_after + math.max (limit - scope.charged - scope.held, 0)
  if remaining == nil or left < remaining then
    remaining = left
  end
end

remaining = remaining or 0
return { remaining == 0 and 1 or 0, remaining, lost }
