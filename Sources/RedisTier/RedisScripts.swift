/// The Lua the tier runs inside Redis, so each step is atomic and timed on Redis' clock
/// (`TIME`), not on any replica's. Loaded on every connect; see `RedisConnection.script`.
enum RedisScripts {
    static let all = [get, put, unlock, rateTake, renew, probe, watch]
    static let getIndex = 0, putIndex = 1, unlockIndex = 2, rateTakeIndex = 3, renewIndex = 4, probeIndex = 5, watchIndex = 6

    /// KEYS[1] entry → {now_ms, stored_ms, status, policy, body, gzip, link, validators, media type} or {now_ms}.
    static let get = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local v = redis.call('HMGET', KEYS[1], 't', 's', 'p', 'b', 'z', 'k', 'v', 'm')
        if not v[1] then return {now} end
        return {now, tonumber(v[1]), v[2], v[3], v[4], v[5] or '', v[6] or '', v[7] or '', v[8] or ''}
        """

    /// KEYS[1] entry; ARGV: age_ms, status, policy, body, gzip, px, link, fetch_ms, validators, media type. Newer wins
    /// by fetch start on Redis' clock (now − age − fetch time): a slow fetch that began
    /// before the stored one's is dropped however late it arrives. A negative answer never
    /// replaces a good one (which expires by itself). Returns 1 if stored.
    static let put = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local stored = now - tonumber(ARGV[1])
        local started = stored - tonumber(ARGV[8] or '0')
        local cur = redis.call('HMGET', KEYS[1], 'f', 't', 's')
        local curStarted = tonumber(cur[1] or cur[2])
        if curStarted and curStarted > started then return 0 end
        if ARGV[2] ~= '200' and cur[3] == '200' then return 0 end
        redis.call('HSET', KEYS[1], 't', stored, 'f', started, 's', ARGV[2], 'p', ARGV[3], 'b', ARGV[4], 'z', ARGV[5], 'k', ARGV[7] or '', 'v', ARGV[9] or '', 'm', ARGV[10] or '')
        redis.call('PEXPIRE', KEYS[1], ARGV[6])
        return 1
        """

    /// KEYS[1] lock; ARGV[1] token. Deletes only the caller's own lock.
    static let unlock = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """

    /// KEYS[1] entry, KEYS[2] failure marker → {now_ms, stored_ms or false, policy or false,
    /// marker or false}: what a waiting replica polls, without the body.
    static let probe = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local v = redis.call('HMGET', KEYS[1], 't', 'p', 's')
        local failed = redis.call('GET', KEYS[2])
        return {now, v[1] and tonumber(v[1]) or false, v[2] or false, failed or false, v[3] or false}
        """

    /// KEYS: locks; ARGV: their tokens, then px. Extends each lock that is still the caller's
    /// → per lock, 1 (renewed) or 0.
    static let renew = """
        local px = ARGV[#KEYS + 1]
        local out = {}
        for i = 1, #KEYS do
          if redis.call('GET', KEYS[i]) == ARGV[i] then out[i] = redis.call('PEXPIRE', KEYS[i], px) else out[i] = 0 end
        end
        return out
        """

    /// KEYS: per key waited on, its entry, failure marker and lock → per key, the marker's text,
    /// or 1 (a fresh entry, good or negative), 0 (locked: still fetching), 2 (free: take over).
    static let watch = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local out = {}
        for i = 1, #KEYS, 3 do
          local failed = redis.call('GET', KEYS[i + 1])
          if failed then
            out[#out + 1] = failed
          else
            local v = redis.call('HMGET', KEYS[i], 't', 'p', 's')
            local ttl = v[2] and tonumber(string.match(v[2], '^(%S+)'))
            local status = v[3] and tonumber(v[3])
            if v[1] and ttl and status and (status == 200 or status >= 400) and now - tonumber(v[1]) < ttl * 1000 then
              out[#out + 1] = 1
            elseif redis.call('EXISTS', KEYS[i + 2]) == 1 then
              out[#out + 1] = 0
            else
              out[#out + 1] = 2
            end
          end
        end
        return out
        """

    /// GCRA: KEYS[1] budget; ARGV: emission interval ms, burst. → {1, 0} or {0, retry_ms}.
    /// Equivalent to a token bucket of `burst` tokens refilled one per interval.
    static let rateTake = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local interval = tonumber(ARGV[1])
        local burst = tonumber(ARGV[2])
        local tat = tonumber(redis.call('GET', KEYS[1]) or now)
        if tat < now then tat = now end
        local new_tat = tat + interval
        local allow_at = new_tat - burst * interval
        if allow_at > now then return {0, allow_at - now} end
        redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now) + 1000)
        return {1, 0}
        """
}

extension RedisConnection {
    /// The scripts `RedisSharedCache` and `RedisRateBudget` expect, in their order.
    public static var tierScripts: [String] { RedisScripts.all }
}
