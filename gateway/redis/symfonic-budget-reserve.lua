-- symfonic-budget-reserve.lua: reserve tokens in every scope of a budget, or in none
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  B1 L1 B2 L2 ...   two keys per scope (see symfonic-lease.lua), all
--                         under the tenant's hash tag
-- ARGV  1  lease id
--       2  amount to reserve in every scope, tokens
--       3  lease TTL, ms
--       4  retry-after to advise when only reservations in flight are in
--          the way (they may settle unused any moment), µs
--       then per scope, in KEYS' order:
--       limit (tokens per window), window (µs)
-- Returns
--   {1, allowance, 0}   reserved in every scope; allowance is the room the
--                       lease had, its own amount included: the least over
--                       the scopes of limit - charged - held before it
--   {0, retry_after_us, scope}
--                       nothing reserved anywhere; scope (from 1) is the
--                       first that had no room, retry_after_us the longest
--                       wait any refusing scope advises
--
-- A lease id that a scope already holds is kept as it is (a reservation
-- sent again after its answer was lost reserves nothing twice).

local id = ARGV[1]
local amount = tonumber (ARGV[2])
local ttl_us = tonumber (ARGV[3]) * 1000
local in_flight_retry = tonumber (ARGV[4])
local n = #KEYS / 2
local now = now_us ()

local scopes = {}
local allowance = nil
local refused = 0
local retry = 0

for i = 1, n do
  local b, l = KEYS[2 * i - 1], KEYS[2 * i]
  local limit = tonumber (ARGV[3 + 2 * i])
  local window = tonumber (ARGV[4 + 2 * i])
  local scope = load_scope (b, l, now, window)
  local mine = redis.call ('HGET', b, 'l:' .. id)
  local room = limit - scope.charged - scope.held

  scope.window = window
  if mine then
    scope.mine = true
    room = room + lease_held (parse_lease (mine))
  elseif scope.charged + scope.held + amount > limit then
    if refused == 0 then
      refused = i
    end
    if scope.charged + amount > limit then
      -- what was counted leaves no room: only the next window has it
      retry = math.max (retry, math.max (scope.ws + window - now, 1))
    else
      retry = math.max (retry, in_flight_retry)
    end
  end
  if allowance == nil or room < allowance then
    allowance = room
  end
  scopes[i] = scope
end

if refused > 0 then
  return { 0, retry, refused }
end

for i = 1, n do
  local b, l = KEYS[2 * i - 1], KEYS[2 * i]
  local scope = scopes[i]

  if not scope.mine then
    scope.held = scope.held + amount
    redis.call ('HSET', b, 'l:' .. id, string.format ('%d 0', amount))
    redis.call ('ZADD', l, now + ttl_us, id)
  end
  store_scope (b, scope, now, scope.window)
  keep_until (b, now, now + ttl_us)
  keep_until (l, now, now + ttl_us)
end

return { 1, math.max (allowance, 0), 0 }
