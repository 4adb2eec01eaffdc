/**
 * The Redis side of the window operations (windows.ts). The scripts read the time with TIME, so all gateway
 * instances share Redis's clock rather than each trusting its own. A script runs alone on the server, so each
 * call is one atomic step however many keys it touches; it checks everything before it writes anything,
 * because Redis does not roll back what a script wrote before it failed.
 */

/**
 * windowsAdmit: KEYS per window: a hash of its buckets (start ms -> cost, and 'sum'), a sorted set of their
 * starts; ARGV per window: cost, limit, window ms, bucket ms. A bucket has left once start + bucket + window <=
 * now. Returns {1, used, resetMs, bucket start, ...per window} when admitted, or
 * {0, index of the refusing window (0-based), used, retryAfterMs, resetMs}.
 */
export const WINDOWS_ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS / 2
local function arg(i, j) return tonumber(ARGV[4 * (i - 1) + j]) end
local function reset(z, window, width)
  local oldest = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
  if #oldest == 0 then return 0 end
  return tonumber(oldest[2]) + width + window - now
end
-- The oldest buckets, a batch at a time, until they free what is needed (usually the first batch does).
local function retryAfter(h, z, need, window, width)
  local freed, offset = 0, 0
  while true do
    local starts = redis.call('ZRANGE', z, offset, offset + 63)
    if #starts == 0 then return window end
    local costs = redis.call('HMGET', h, unpack(starts))
    for j = 1, #starts do
      freed = freed + tonumber(costs[j] or '0')
      if freed >= need then return math.max(1, tonumber(starts[j]) + width + window - now) end
    end
    offset = offset + 64
  end
end
local pending = {}
for i = 1, n do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  local cost, limit, window, width = arg(i, 1), arg(i, 2), arg(i, 3), arg(i, 4)
  local sum = tonumber(redis.call('HGET', h, 'sum') or '0')
  -- At most 1,441 buckets live in a window, so the expired ones always fit in one call.
  local gone = redis.call('ZRANGEBYSCORE', z, '-inf', string.format('%.0f', now - window - width))
  if #gone > 0 then
    local costs = redis.call('HMGET', h, unpack(gone))
    for _, c in ipairs(costs) do sum = sum - tonumber(c or '0') end
    redis.call('ZREM', z, unpack(gone))
    if redis.call('EXISTS', z) == 0 then
      sum = 0
      redis.call('DEL', h)
    else
      redis.call('HDEL', h, unpack(gone))
      redis.call('HSET', h, 'sum', string.format('%.0f', sum))
    end
  end
  local used = sum + (pending[h] or 0)
  if used + cost > limit then
    local retry = window
    if cost <= limit then retry = retryAfter(h, z, used + cost - limit, window, width) end
    return {0, i - 1, used, retry, reset(z, window, width)}
  end
  pending[h] = (pending[h] or 0) + cost
end
local result = {1}
for i = 1, n do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  local cost, window, width = ARGV[4 * (i - 1) + 1], arg(i, 3), arg(i, 4)
  local start = now - now % width
  -- Numbers go to Redis as text: format the start whole, never in exponent form.
  local field = string.format('%.0f', start)
  redis.call('HINCRBY', h, field, cost)
  local used = redis.call('HINCRBY', h, 'sum', cost)
  redis.call('ZADD', z, field, field)
  -- Both keys live until the newest bucket leaves.
  local ttl = start + width + window - now
  redis.call('PEXPIRE', h, ttl)
  redis.call('PEXPIRE', z, ttl)
  result[#result + 1] = used
  result[#result + 1] = reset(z, window, width)
  result[#result + 1] = start
end
return result`;

/**
 * windowsSettle: KEYS the buckets hash of each window; ARGV per window: bucket start, delta. A bucket that has
 * left (or whose window expired) is not recreated.
 */
export const WINDOWS_SETTLE = `
for i = 1, #KEYS do
  local field, delta = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  if delta ~= 0 and redis.call('HEXISTS', KEYS[i], field) == 1 then
    redis.call('HINCRBY', KEYS[i], field, delta)
    redis.call('HINCRBY', KEYS[i], 'sum', delta)
  end
end
return 0`;

/**
 * windowsAddOnce: KEYS the marker, then per window its buckets hash and starts set; ARGV the marker's TTL (ms),
 * then per window: amount, window ms, bucket ms. When the marker exists nothing happens ({0}); otherwise it is
 * set and each amount lands in its window's current bucket, with no limit checked (the tokens are spent).
 */
export const WINDOWS_ADD_ONCE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, (#KEYS - 1) / 2 do
  local h, z = KEYS[2 * i], KEYS[2 * i + 1]
  local amount, window, width = ARGV[3 * i - 1], tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
  -- The buckets that have left go first, as windowsAdmit drops them, so that the sum stays theirs.
  local gone = redis.call('ZRANGEBYSCORE', z, '-inf', string.format('%.0f', now - window - width))
  if #gone > 0 then
    local sum = tonumber(redis.call('HGET', h, 'sum') or '0')
    local costs = redis.call('HMGET', h, unpack(gone))
    for _, c in ipairs(costs) do sum = sum - tonumber(c or '0') end
    redis.call('ZREM', z, unpack(gone))
    if redis.call('EXISTS', z) == 0 then
      redis.call('DEL', h)
    else
      redis.call('HDEL', h, unpack(gone))
      redis.call('HSET', h, 'sum', string.format('%.0f', sum))
    end
  end
  local field = string.format('%.0f', now - now % width)
  redis.call('HINCRBY', h, field, amount)
  redis.call('HINCRBY', h, 'sum', amount)
  redis.call('ZADD', z, field, field)
  local ttl = tonumber(field) + width + window - now
  redis.call('PEXPIRE', h, ttl)
  redis.call('PEXPIRE', z, ttl)
end
return 1`;
