-- symfonic-run-note.lua: what a resumable run's producer says of it
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  1  the run's hash
--       2  the run's stream of frames
-- ARGV  1  the producer's lease from now, ms; 0: no lease (the run ended)
--       2  how long both keys live from now, ms
--       3… field, value pairs to set in the hash
-- Returns 1
--
-- The hash:  principal, tenant   who may read the run
--            state               running | ended | lost (its frames
--                                stopped reaching Redis)
--            last                the id of the run's last frame so far
--            bytes               the bytes of the frames the byte cap
--                                keeps (the stream says which)
--            lease               until when the producer vouches for the
--                                run, ms on Redis' clock (TIME): a reader
--                                past it knows the producer died
-- A run whose producer died is not renewed and goes by itself.
--
-- At the end (no lease) the stream is written anew, DUMP then RESTORE:
-- Redis gives a stream's nodes room for stream-node-max-bytes as they
-- are made and never takes it back, which for a run of a few kilobytes
-- is most of what it holds for resume-seconds; the copy is as long as
-- its frames.

local t = redis.call ('TIME')
local now = tonumber (t[1]) * 1000 + math.floor (tonumber (t[2]) / 1000)
local lease = tonumber (ARGV[1])
local fields = {}

for i = 3, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
if lease > 0 then
  fields[#fields + 1] = 'lease'
  fields[#fields + 1] = string.format ('%d', now + lease)
end
if #fields > 0 then
  redis.call ('HSET', KEYS[1], unpack (fields))
end
if lease == 0 and tonumber (ARGV[2]) > 0 and redis.call ('EXISTS', KEYS[2]) == 1 then
  local copy = redis.call ('DUMP', KEYS[2])
  redis.call ('RESTORE', KEYS[2], ARGV[2], copy, 'REPLACE')
end
redis.call ('PEXPIRE', KEYS[1], ARGV[2])
redis.call ('PEXPIRE', KEYS[2], ARGV[2])
return 1
