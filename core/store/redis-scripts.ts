/**
 * The Lua scripts behind the Redis KV's atomic operations. Every script reads the time with TIME, so all
 * gateway instances share Redis's clock rather than each trusting its own.
 */

/** INCRBY and the first-time PEXPIRE in one step, so a key can never be left without its TTL. */
export const INCR_WITH_TTL = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 and redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;

/** counterAdd: KEYS[1] the counter; ARGV amount, ceiling ('' for none), ttl ms (0 for none). */
export const COUNTER_ADD = `
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if ARGV[2] ~= '' and amount > 0 and v + amount > tonumber(ARGV[2]) then return {0, v} end
v = redis.call('INCRBY', KEYS[1], amount)
if tonumber(ARGV[3]) > 0 and redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1, v}`;

/**
 * windowAdmit: KEYS[1] a sorted set of entry ids by admission time, KEYS[2] a hash of their costs, KEYS[3] the
 * running total; ARGV id, cost, limit, window ms. Expired entries leave first (in bounded batches, so a large
 * window never unpacks more than Lua's stack holds). Returns {admitted, used, retryAfterMs, resetMs}.
 */
export const WINDOW_ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[4])
local cutoff = now - window
local sum = tonumber(redis.call('GET', KEYS[3]) or '0')
while true do
  local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff, 'LIMIT', 0, 500)
  if #expired == 0 then break end
  local costs = redis.call('HMGET', KEYS[2], unpack(expired))
  for _, c in ipairs(costs) do sum = sum - tonumber(c or '0') end
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
if redis.call('ZCARD', KEYS[1]) == 0 then sum = 0 end
local cost = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local function reset()
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #oldest == 0 then return 0 end
  return tonumber(oldest[2]) + window - now
end
if sum + cost > limit then
  redis.call('SET', KEYS[3], sum, 'PX', window)
  if cost > limit then return {0, sum, window, reset()} end
  local need = sum + cost - limit
  local freed = 0
  local offset = 0
  while true do
    local batch = redis.call('ZRANGE', KEYS[1], offset, offset + 199, 'WITHSCORES')
    if #batch == 0 then return {0, sum, window, reset()} end
    for i = 1, #batch, 2 do
      freed = freed + tonumber(redis.call('HGET', KEYS[2], batch[i]) or '0')
      if freed >= need then return {0, sum, math.max(1, tonumber(batch[i + 1]) + window - now), reset()} end
    end
    offset = offset + 200
  end
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], cost)
sum = sum + cost
redis.call('SET', KEYS[3], sum, 'PX', window)
redis.call('PEXPIRE', KEYS[1], window)
redis.call('PEXPIRE', KEYS[2], window)
return {1, sum, 0, reset()}`;

/** windowAdjust: the same KEYS; ARGV id, new cost (0 removes). An entry that already left stays gone. */
export const WINDOW_ADJUST = `
local old = redis.call('HGET', KEYS[2], ARGV[1])
if not old then return 0 end
local cost = tonumber(ARGV[2])
if cost <= 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], cost)
end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('INCRBY', KEYS[3], cost - tonumber(old)) end
return 1`;
