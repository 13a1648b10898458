-- test_checked.lua - p:run{checked=true}: kernels compiled with bounds
-- checks give the same outputs; a rule planted in stage 15 that moves the
-- output index past the end of its buffer makes the checked run fail with a
-- message naming the INDEX, the buffer, the offset and the loop counters,
-- and the Lua state goes on (the rule removed, the next run is right).
local T = ...

local matmul3 = T.load("programs.lua").matmul3

-- (INDEX data0 i) becomes (INDEX data0 i+100), once
local function past_the_end()
  return uop.rules{ {name = "past_the_end", pattern = "(INDEX b@(DEFINE_GLOBAL arg=0) i:int32)",
                     rewrite = "(INDEX b (ADD:int32 i 100))", when = function(m) return m.i:vmax() < 100 end} }
end

T.test("checked and unchecked runs give the same outputs", function()
  local p = uop.compile(matmul3())
  local plain = uop.buffer_values(p:run()[1])
  local outs, rep = p:run{checked = true, validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  local checked = uop.buffer_values(outs[1])
  local want = {84, 90, 96, 201, 216, 231, 318, 342, 366}
  for i = 1, 9 do
    T.eq(plain[i], want[i], "unchecked " .. i)
    T.eq(checked[i], want[i], "checked " .. i)
  end
end)

T.test("an index planted past the end stops the checked run with a report", function()
  local p = uop.compile(matmul3())
  local k = p:kernel(1)
  k:insert(15, past_the_end())
  local msg = T.err(function() return p:run{checked = true} end)
  T.contains(msg, "run: kernel 1 (r_3_3_3): INDEX %")
  T.contains(msg, " writes buffer 0 (output0) at 100, past its 9 elements (r0=0, r1=0)")
  -- with validate as well: the run fails before validation
  T.raises("past its 9 elements", function() return p:run{checked = true, validate = true, quiet = true} end)
  -- the state goes on: without the rule the checked run is right again
  T.eq(k:remove(15), 1)
  local _, rep = p:run{checked = true, validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)

T.test("p:run names its options", function()
  local p = uop.compile(matmul3())
  T.raises("run: unknown option 'checkd'", function() p:run{checkd = true} end)
end)
