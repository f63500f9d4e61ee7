-- symfonic-run-read.lua: the frames of a resumable run after one id
--
-- SPDX-License-Identifier: LGPL-2.1-or-later
--
-- KEYS  1  the run's hash (see symfonic-run-note.lua)
--       2  the run's stream: frame N is the entry N-0, its one field d
--          (the frame after its first line, "id: N\n", which the entry's
--          id says) or f (the frame whole); the entry N-1 after the last
--          frame N marks the run's end
-- ARGV  1  the principal asking ("" for none)
--       2  the tenant asking ("" for none)
--       3  after: the id of the last frame the reader has
--       4  how many frames at most
-- Returns {0}                          no such run, for this asker
--         {1, last}                    after is past the run's last frame
--         {2, first}                   the frame after `after` is no longer kept
--         {3, state, last, f1, f2, …}  the frames after `after`, in order;
--                                      state 0 running, 1 ended (the last
--                                      frame returned is the run's last),
--                                      2 the producer died before the end
--
-- The owner is asked in the script, with the keys: a reader of another
-- principal learns nothing more than one of a run that never was.

local function now_ms ()
  local t = redis.call ('TIME')
  return tonumber (t[1]) * 1000 + math.floor (tonumber (t[2]) / 1000)
end

local h = redis.call ('HMGET', KEYS[1], 'principal', 'tenant', 'state', 'last', 'lease')
if not h[1] or h[1] ~= ARGV[1] or h[2] ~= ARGV[2] then
  return {0}
end

local after = tonumber (ARGV[3])
local last = tonumber (h[4]) or 0
-- frames that reached the stream before their note did still count
local tail = redis.call ('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if #tail > 0 then
  local id = tonumber (string.match (tail[1][1], '^(%d+)'))
  if id > last then
    last = id
  end
end
if after > last then
  return {1, last}
end

local entries = redis.call ('XRANGE', KEYS[2], '(' .. string.format ('%d', after) .. '-0', '+',
                            'COUNT', tonumber (ARGV[4]) + 1)
local out = {3, 0, last}
local expect = after + 1
local ended = false
for _, entry in ipairs (entries) do
  local ms, seq = string.match (entry[1], '^(%d+)-(%d+)$')
  ms = tonumber (ms)
  if seq ~= '0' then
    ended = true
    break
  end
  if ms ~= expect then
    break
  end
  if #out - 3 >= tonumber (ARGV[4]) then
    break
  end
  if entry[2][1] == 'd' then
    out[#out + 1] = 'id: ' .. string.format ('%d', ms) .. '\n' .. entry[2][2]
  else
    out[#out + 1] = entry[2][2]
  end
  expect = expect + 1
end
local dead = h[3] == 'lost' or (h[3] == 'running' and tonumber (h[5] or 0) < now_ms ())
if after < last and #out == 3 then
  -- nothing after a run's frames that never reached Redis: its producer
  -- is gone, and so is the rest; a gap before frames kept: trimmed
  if #entries == 0 and dead then
    return {3, 2, last}
  end
  local first = #entries > 0 and tonumber (string.match (entries[1][1], '^(%d+)')) or last + 1
  return {2, first}
end

if ended or (h[3] == 'ended' and expect > last) then
  out[2] = 1
elseif dead then
  out[2] = 2
end
return out
