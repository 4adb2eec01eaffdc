/**
 * The Lua scripts behind the Redis KV's own atomic operations (plugins bring theirs as KV operations). A script
 * runs alone on the server, so each call is one atomic step however many keys it touches.
 */

/** INCRBY and the first-time PEXPIRE in one step, so a key can never be left without its TTL. */
export const INCR_WITH_TTL = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 and redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;
