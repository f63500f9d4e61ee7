-- symfonic-lease.lua: what the budget and stream-cap scripts share
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- Redis runs each script as one chunk, so the library puts this file in
-- front of every script that holds leases before it hashes and sends it:
-- one copy of the rules by which a lease ends, not one per script.
--
-- A lease is a holding (a budget reservation, a stream slot) that lives
-- until its expiry unless its holder renews it. The holder is a gateway
-- instance: one that dies (kill -9, a lost host) renews nothing, and what
-- it held comes back once its leases expire, to the first script that
-- reads the budget or the set after that. Expiries are µs on Redis' own
-- clock (TIME): instances need not agree on the time.
--
-- A budget scope is two keys: a hash B and a sorted set L.
--   B  ws        start of the current window, µs
--      charged   usage counted in the window, at most the limit
--      held      sum of what the live leases still hold
--      l:ID      one lease: "RESERVED USED", both whole tokens
--   L  ID -> expiry, µs
-- A stream-cap set is one sorted set: ID -> expiry, µs.
--
-- Every number fits a double exactly (the library caps amounts at 2^53).

local function now_us ()
  local t = redis.call ('TIME')
  return tonumber (t[1]) * 1000000 + tonumber (t[2])
end

-- Keeps KEY at least until AT (µs), with a second to spare: a key no
-- script touches any more vanishes by itself, and never before what it
-- holds has ended. An expiry is never shortened.
local function keep_until (key, now, at)
  local want = math.ceil ((at - now) / 1000) + 1000
  if redis.call ('PTTL', key) < want then
    redis.call ('PEXPIRE', key, want)
  end
end

local function parse_lease (value)
  local reserved, used = string.match (value, '^(%d+) (%d+)$')
  return tonumber (reserved), tonumber (used)
end

local function lease_held (reserved, used)
  return math.max (reserved - used, 0)
end

-- The scope's state after the leases that expired by NOW gave back what
-- they held and the window rolled over if it is over.
local function load_scope (b, l, now, window)
  local ws, charged, held = unpack (redis.call ('HMGET', b, 'ws', 'charged', 'held'))
  ws = tonumber (ws)
  charged = tonumber (charged) or 0
  held = tonumber (held) or 0

  local expired = redis.call ('ZRANGEBYSCORE', l, '-inf', now)
  if #expired > 0 then
    local found = false
    for _, id in ipairs (expired) do
      local value = redis.call ('HGET', b, 'l:' .. id)
      if value then
        held = held - lease_held (parse_lease (value))
        redis.call ('HDEL', b, 'l:' .. id)
        found = true
      end
    end
    redis.call ('ZREMRANGEBYSCORE', l, '-inf', now)
    held = math.max (held, 0)
    -- only into a hash that exists, which has its expiry: a new one made
    -- here would have none
    if found then
      redis.call ('HSET', b, 'held', held)
    end
  end

  if ws == nil or now - ws >= window then
    ws = now
    charged = 0
  end
  return { ws = ws, charged = charged, held = held }
end

local function store_scope (b, scope, now, window)
  redis.call ('HSET', b, 'ws', scope.ws, 'charged', scope.charged, 'held', scope.held)
  keep_until (b, now, scope.ws + window)
end

-- Takes the expired slots out of a stream-cap set.
local function prune_slots (z, now)
  redis.call ('ZREMRANGEBYSCORE', z, '-inf', now)
end

