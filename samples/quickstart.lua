-- quickstart.lua - a first session: build an index expression, print it,
-- round-trip it through text, draw it, and rewrite it with a rule written
-- in Lua, then see which rule fired.
--   make run SAMPLE=samples/quickstart.lua

local x = uop.var("x", 0, 10)          -- DEFINE_VAR x in [0, 10]
local e = (x * 4 + 0) // 2             -- Lua operators build UOps
print("expression:  " .. e:render())
print(string.format("bounds:      [%d, %d]", e:vmin(), e:vmax()))
print("at x = 7:    " .. e:eval{x = 7})

print("\nlisting (one node per line, named by stable id):")
print(e:listing())

-- the listing parses back to the very same node
assert(uop.parse(e:listing()) == e, "round trip through text failed")
print("round trip:  parse(listing) returns the same node")

-- a rule in the rule language: lower-case names capture
local rules = uop.rules{
  {name = "add_zero", pattern = "(ADD x (CONST 0))", rewrite = function(m) return m.x end},
}
local out, trace = uop.rewrite(e, rules)
print("\nafter rewrite: " .. out:render())
for _, r in ipairs(trace.rewrites) do
  print(string.format("  rule %-10s at %s: %s -> %s", r.rule, r.where, r.before:render(), r.after:render()))
end

print("\ndiff (only the nodes that changed):")
print(uop.diff(e, out))

-- Graphviz: DOT text, or a file rendered by the dot program
local dot = uop.dot(out)
print(string.format("DOT: %d lines (uop.dot(out, {file='out.svg'}) renders it)", select(2, dot:gsub("\n", ""))))
