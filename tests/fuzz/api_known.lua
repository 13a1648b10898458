-- api_known.lua - findings of the Lua API fuzzer that belong to other work
-- and are not fixed yet.  fuzz_api.lua counts a finding that matches an
-- entry (fn: a Lua pattern on the function called, why: the judge's reason,
-- message: a Lua pattern on the error message or crash signature; an absent
-- field matches anything) and does not fail on it.  Each entry cites its
-- finding with a short reproducer (run with build/uopdb -e '...').  Remove an
-- entry when its finding is fixed, and the fuzzer checks the fix.
return {
}
