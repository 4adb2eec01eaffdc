/**
 * The Redis side of the counters operation (counters.ts). A script runs alone on the server, so the call is one
 * atomic step however many counters it touches; it checks everything before it writes anything, because Redis
 * does not roll back what a script wrote before it failed.
 */

/**
 * countersAdd: KEYS the counters; ARGV per counter: amount, ceiling ('' for none). Returns {1, value...} when
 * applied, {2, index...} (0-based) when counters are missing, {0, index, value} when one refuses.
 */
export const COUNTERS_ADD = `
local values, missing, pending = {}, {2}, {}
for i = 1, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if not v then missing[#missing + 1] = i - 1
  elseif not string.match(v, '^%-?%d+$') then return redis.error_reply('value at ' .. KEYS[i] .. ' is not an integer')
  else values[i] = tonumber(v) end
end
if #missing > 1 then return missing end
for i = 1, #KEYS do
  local amount, ceiling = tonumber(ARGV[2 * i - 1]), ARGV[2 * i]
  local v = values[i] + (pending[KEYS[i]] or 0)
  if ceiling ~= '' and amount >= 0 and v + amount > tonumber(ceiling) then return {0, i - 1, v} end
  pending[KEYS[i]] = (pending[KEYS[i]] or 0) + amount
end
local result = {1}
for i = 1, #KEYS do result[i + 1] = redis.call('INCRBY', KEYS[i], ARGV[2 * i - 1]) end
return result`;
