-- refresh_lock: extends a lock only while owner holds it. KEYS[1] the lock, ARGV: owner, ttl
-- ms. Returns held ("1" when it extended it).
if call("GET", KEYS[1]) == ARGV[1] then
  call("PEXPIRE", KEYS[1], ARGV[2])
  return {1, "held", "1"}
end
return {1, "held", "0"}
