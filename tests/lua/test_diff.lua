-- test_diff.lua - uop.diff: graphs matched node to node, so a diff shows what
-- changed and not what was renumbered or moved; context, side by side, width,
-- colour and the options' errors; a stage of the pipeline.
local T = ...
-- SINK((x + 7) * 3 * 3 ..., -y) and the same with the leaf 7 rewritten to 8:
-- every node above the leaf is rebuilt with a new id
local function leaf_rewrite(n)
  local v = uop.var("dx", 0, 10) + 7
  for _ = 1, n do v = v * 3 end
  local a = uop.sink(v, -uop.var("dy", 0, 5))
  return a, uop.rewrite(a, {{pattern = "7", rewrite = "8"}})
end

T.test("diff shows what changed, not what was renumbered", function()
  local a, b = leaf_rewrite(30)
  T.ok(a:id() ~= b:id())
  local text, stats = uop.diff(a, b, {stats = true})
  T.eq(stats.added, 2, "the new leaf and its user")
  T.eq(stats.removed, 2)
  T.eq(stats.renamed, 31, "the MULs and the SINK above")
  T.eq(stats.kept, a:graph_size() - 2)
  local minus, plus = {}, {}
  for l in text:gmatch("[^\n]+") do
    if l:match("^%-%%") then minus[#minus + 1] = l end
    if l:match("^%+%%") then plus[#plus + 1] = l end
  end
  T.eq(#minus, 2)
  T.eq(#plus, 2)
  T.ok(minus[1]:find("CONST +index arg=7$") and minus[2]:find("ADD"), table.concat(minus, "\n"))
  T.ok(plus[1]:find("CONST +index arg=8$") and plus[2]:find("ADD"), table.concat(plus, "\n"))
  -- a renamed node is context with b's ids, its old id in a comment
  local mul = b:src()[1]
  while mul:src()[1]:op() == "MUL" do mul = mul:src()[1] end
  T.ok(text:find("\n %%" .. mul:id() .. " += MUL +index %(%%" .. mul:src()[1]:id() .. ", %%%d+%)  # was %%%d+\n"), text)
  -- a node that only moved: the same nodes listed in another order
  local p, q = -(-uop.var("mp", 0, 3)), uop.var("mq", 0, 3) + 5
  local moved, mstats = uop.diff(uop.sink(p, q), uop.sink(q, p), {stats = true, context = 0})
  T.eq(mstats.added, 1, moved)
  T.eq(mstats.removed, 1)
  T.eq(select(2, moved:gsub("\n[-+]%%", "")), 2, "only the SINK changes:\n" .. moved)
end)

T.test("diff context = N as diff -U N", function()
  local a, b = leaf_rewrite(12)
  local function context_lines(text)
    local n = 0
    for l in text:gmatch("[^\n]+") do if l:sub(1, 1) == " " then n = n + 1 end end
    return n
  end
  T.eq(context_lines(uop.diff(a, b, {context = 0})), 0)
  T.eq(context_lines(uop.diff(a, b, {context = 1})), 2)
  T.eq(context_lines(uop.diff(a, b)), 4, "3 by default: one line before the change is all there is")
  T.eq(context_lines(uop.diff(a, b, {context = 5})), 6)
  T.contains(uop.diff(a, b, {context = 5}), "@@ -1,8 +1,8 @@\n")
  T.eq(context_lines(uop.diff(a, b, {context = 1000})), a:graph_size() - 2)
  T.raises("context -1 is out of range", uop.diff, a, b, {context = -1})
end)

T.test("diff side by side fits the width", function()
  local a, b = leaf_rewrite(4)
  for _, width in ipairs({10, 40, 57, 80, 100, 160}) do
    local text = uop.diff(a, b, {side = true, width = width, label_a = "before", label_b = "after"})
    local rows = 0
    for l in text:gmatch("[^\n]+") do
      rows = rows + 1
      T.ok(utf8.len(l) <= width, "width " .. width .. ": " .. l)
    end
    T.ok(rows >= 8, text)
  end
  local text = uop.diff(a, b, {side = true})
  local first = text:match("^[^\n]*")
  T.ok(first:match("^a +b$"), first)
  T.ok(text:find(" | ", 1, true), "the changed ADD is one row:\n" .. text)
  T.ok(text:find(" <\n", 1, true) and text:find(" > %", 1, true), text)
  T.ok(not text:find("\xe2\x80\xa6", 1, true), "100 columns cut nothing here")
  T.contains(uop.diff(a, b, {side = true, width = 40}), "\xe2\x80\xa6", "a cut line ends with an ellipsis")
  -- the default width is 100
  for l in uop.diff(leaf_rewrite(2), select(2, leaf_rewrite(2)), {side = true}):gmatch("[^\n]+") do
    T.ok(utf8.len(l) <= 100, l)
  end
end)

T.test("diff colours and options", function()
  local a, b = leaf_rewrite(2)
  local c = uop.diff(a, b, {color = true})
  T.contains(c, "\27[31m-%")
  T.contains(c, "\27[32m+%")
  T.contains(c, "\27[36m@@ ")
  T.ok(not uop.diff(a, b):find("\27", 1, true), "no colour unless asked")
  T.ok(not uop.diff(a, b, {side = true}):find("\27", 1, true), "no colour side by side either")
  T.contains(uop.diff(a, b, {side = true, color = true}), "\27[32m")
  T.raises("diff: unknown option 'contxt' (options: context, side, width, color, label_a, label_b, stats)",
    uop.diff, a, b, {contxt = 1})
  T.raises("unknown option [1]", uop.diff, a, b, {5})
  T.raises("option 'side' must be a boolean, got number", uop.diff, a, b, {side = 1})
  T.raises("width 9 is out of range", uop.diff, a, b, {side = true, width = 9})
  T.raises("option 'width' must be an integer", uop.diff, a, b, {width = "wide"})
  T.eq(uop.diff(a, a, {side = true}), "", "nothing when nothing changed")
end)

T.test("diff of stage 14 and 15: the index nodes lowered to int32, nothing else", function()
  local A = Tensor.new({{1, 2, 3}, {3, 4, 5}, {1, 1, 1}}, "float32")
  local k = uop.compile(A:matmul(A)):kernel(1)
  local text, st = uop.diff(k:root(14), k:root(15), {stats = true, context = 0})
  T.ok(st.added > 0 and st.added == st.removed, text)
  T.ok(st.renamed > 0, "users of the lowered nodes are kept with new ids")
  for l in text:gmatch("[^\n]+") do
    if l:match("^%-%%") then T.ok(l:find(" index ", 1, true), "removed: " .. l) end
    if l:match("^%+%%") then T.ok(l:find(" int32 ", 1, true), "added: " .. l) end
  end
end)

T.test("k:diff takes rewrite points as \"N.R\": what a run of rewrites changed", function()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  local k = uop.compile(A:matmul(A)):kernel(1)
  -- one rewrite: the same as standing after it and diffing with the point before
  local one = k:diff_text("15.6", "15.7")
  k:seek(15, 7)
  T.eq(one, k:diff_text(), "15.6 against 15.7")
  -- several: the diff of the graphs at the two points, labelled by them
  local many = k:diff_text("15.3", "15.7")
  T.contains(many, "--- stage 15.3\n+++ stage 15.7")
  T.ok(many ~= one, "rewrites 4 to 7 change more than rewrite 7")
  -- a stage against a rewrite point, and the end of a stage as its last rewrite point
  local last = #k:rewrites(15, {quiet = true})
  T.contains(k:diff_text(15, "15." .. last), "the two points are the same graph")
  T.raises("stage 15 made " .. last .. " rewrites: rewrite points are 15.0 to 15." .. last,
           function() k:diff("15.999", 15) end)
  T.raises("point 'a.b': a stage number, or \"N.R\" for the point after rewrite R of stage N", function() k:diff("a.b") end)
  for _, bad in ipairs{"", "15.3 ", " 15.3", "15.", ".3", "15.-1", "1e3", "0x10.1", "-1.2", "15.1\0"} do
    T.raises("a stage number, or \"N.R\"", function() k:diff(bad) end)
  end
  T.raises("point 15.5: a stage number", function() k:diff(15.5, 16) end)
  T.raises("point nan: a stage number", function() k:diff(0 / 0, 16) end)
  -- a stage number as a string is a stage
  T.eq(k:diff_text("14", "15"), k:diff_text(14, 15))
  T.raises("no stage 23:", function() k:diff("23.1") end)
end)
