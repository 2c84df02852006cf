-- unlock: deletes a lock only while owner holds it. KEYS[1] the lock, ARGV[1] the owner.
-- Returns released ("1" when it did).
if call("GET", KEYS[1]) == ARGV[1] then
  call("DEL", KEYS[1])
  return {1, "released", "1"}
end
return {1, "released", "0"}
