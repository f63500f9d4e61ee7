-- symfonic-gcra-take.lua: one admission under a rate limit (GCRA)
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  1  the limit's cell, under the tenant's hash tag; it holds the
--          theoretical arrival time (TAT), µs on Redis' clock
-- ARGV  1  emission interval T, µs (one request per T on average)
--       2  burst tolerance τ, µs ((burst - 1) × T admits burst at once)
-- Returns {1, 0} admitted, {0, retry_after_us} refused
--
-- A request conforms when now ≥ TAT − τ; it then moves the TAT on by T.
-- A refusal writes nothing, so a client hammering a closed limit does not
-- push its own reopening further away. The cell expires once its TAT has
-- passed, when an absent cell means the same.

local t = redis.call ('TIME')
local now = tonumber (t[1]) * 1000000 + tonumber (t[2])
local interval = tonumber (ARGV[1])
local tolerance = tonumber (ARGV[2])

local tat = tonumber (redis.call ('GET', KEYS[1])) or now
local start = math.max (tat, now)

if start - now > tolerance then
  return { 0, start - tolerance - now }
end

local next_tat = start + interval
redis.call ('SET', KEYS[1], string.format ('%d', next_tat), 'PX', math.ceil ((next_tat - now) / 1000) + 1)
return { 1, 0 }
