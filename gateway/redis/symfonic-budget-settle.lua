-- symfonic-budget-settle.lua: count a stream's real usage and end its lease
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  B1 L1 B2 L2 ...   the scopes the lease was reserved in
-- ARGV  1  lease id
--       2  the stream's whole usage, tokens
--       3  usage that an earlier charge acknowledged, tokens
--       then per scope, in KEYS' order:
--       limit (tokens per window), window (µs)
-- Returns {unused, lost}
--   unused   what the lease held and did not use, given back to the
--            budget (from the first scope that still knew the lease)
--   lost     how many scopes no longer knew the lease
--
-- Counts the usage as symfonic-budget-charge.lua does, then the lease
-- holds nothing more. Its record stays until it expires, so that a settle
-- sent again (its answer was lost) counts nothing twice.

local id = ARGV[1]
local used_total = tonumber (ARGV[2])
local used_acked = tonumber (ARGV[3])
local n = #KEYS / 2
local now = now_us ()

local unused = nil
local lost = 0

for i = 1, n do
  local b, l = KEYS[2 * i - 1], KEYS[2 * i]
  local limit = tonumber (ARGV[2 + 2 * i])
  local window = tonumber (ARGV[3 + 2 * i])
  local scope = load_scope (b, l, now, window)
  local value = redis.call ('HGET', b, 'l:' .. id)
  local delta

  if value then
    local reserved, used = parse_lease (value)
    delta = math.max (used_total - used, 0)
    local held_before = lease_held (reserved, used)
    scope.held = math.max (scope.held - held_before, 0)
    if unused == nil then
      unused = lease_held (reserved, used + delta)
    end
    redis.call ('HSET', b, 'l:' .. id, string.format ('%d %d', used + delta, used + delta))
  else
    lost = lost + 1
    delta = math.max (used_total - used_acked, 0)
  end

  scope.charged = math.min (scope.charged + delta, limit)
  store_scope (b, scope, now, window)
end

return { unused or 0, lost }
