-- run.lua - runs every tests/lua/test_*.lua with the harness and prints
-- one line "lua: N passed, M failed"; exits non-zero on any failure.
--   build/uopdb tests/lua/run.lua [filter]
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local T = dofile(dir .. "/harness.lua")
local filter = arg and arg[1]

local files = {}
local ls = io.popen('ls "' .. dir .. '"')
for name in ls:lines() do
  if name:match("^test_.*%.lua$") and (not filter or name:find(filter, 1, true)) then
    files[#files + 1] = name
  end
end
ls:close()
table.sort(files)

for _, name in ipairs(files) do
  T.current_file = name
  local chunk, err = loadfile(dir .. "/" .. name)
  if not chunk then
    T.failed = T.failed + 1
    io.stderr:write("FAIL " .. name .. ": " .. err .. "\n")
  else
    local ok, msg = xpcall(chunk, debug.traceback, T)
    if not ok then
      T.failed = T.failed + 1
      io.stderr:write("FAIL " .. name .. " (outside a test): " .. tostring(msg) .. "\n")
    end
  end
end

print(T.summary("lua"))
os.exit(T.failed == 0 and 0 or 1)
