-- symfonic-run-readers.lua: whether anyone follows a resumable run
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  1  the run's hash (see symfonic-run-note.lua)
-- ARGV  1  follow   readers on one worker follow the run: it vouches for
--                   them for ARGV[3] ms (and says so again before then
--                   while they do)
--          left     the last of them left
--          unread   how long the run has gone without a reader
--       2  the worker's name, one per worker of each gateway
--       3  for follow: the ms it vouches for
-- Returns, for follow and left, 1, or 0 when there is no such run; for
--         unread, the ms since a reader last followed the run (0 while
--         one does), or -1 when none ever did or there is no such run
--
-- The hash's fields r:NAME: until when, ms on Redis' clock, the worker
-- NAME vouches that a reader of its follows the run; read: when the
-- last reader that left did. A worker whose gateway died stops vouching,
-- and the run's producer (on whichever instance) counts its
-- resume-seconds from then. Only a run that exists is written: a hash
-- that expired is not made again, without a TTL.

local t = redis.call ('TIME')
local now = tonumber (t[1]) * 1000 + math.floor (tonumber (t[2]) / 1000)

if ARGV[1] == 'unread' then
  local h = redis.call ('HGETALL', KEYS[1])
  local last = nil
  for i = 1, #h, 2 do
    local field = h[i]
    if field == 'read' or string.sub (field, 1, 2) == 'r:' then
      local at = tonumber (h[i + 1])
      if at and string.sub (field, 1, 2) == 'r:' and at >= now then
        return 0
      end
      if at and (not last or at > last) then
        last = at
      end
    end
  end
  if not last then
    return -1
  end
  return math.max (0, now - last)
end

if redis.call ('EXISTS', KEYS[1]) == 0 then
  return 0
end
local field = 'r:' .. ARGV[2]
if ARGV[1] == 'follow' then
  redis.call ('HSET', KEYS[1], field, string.format ('%d', now + tonumber (ARGV[3])))
  return 1
end
redis.call ('HDEL', KEYS[1], field)
local read = tonumber (redis.call ('HGET', KEYS[1], 'read') or '')
if not read or now > read then
  redis.call ('HSET', KEYS[1], 'read', string.format ('%d', now))
end
return 1
