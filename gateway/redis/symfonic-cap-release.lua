-- symfonic-cap-release.lua: give a stream's slot back
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  Z1 ... Zn   stream-cap sets, all in one hash slot
-- ARGV  1  lease id
-- Returns the number of sets that held the id (0 when it had expired
-- already, or was released before)

local id = ARGV[1]
local now = now_us ()
local released = 0

for i = 1, #KEYS do
  prune_slots (KEYS[i], now)
  released = released + redis.call ('ZREM', KEYS[i], id)
end

return released
