#!/usr/bin/env bash
# run.sh - drives the uopdb program through pipes and checks what it prints:
# expression values, multi-line input, errors that leave the session intact,
# colon commands, -e, scripts with arguments, --version, exit statuses,
# Ctrl-C.  Usage: tests/repl/run.sh build/uopdb
# Prints "repl: N passed, M failed"; exits non-zero on any failure.
set -u
UOPDB=${1:-build/uopdb}
if [ ! -x "$UOPDB" ]; then
    echo "repl: $UOPDB is not an executable" >&2
    echo "repl: 0 passed, 1 failed"
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export UOPDB_HISTORY="$tmp/history"
pass=0
fail=0

# run INPUT [ARGS...]: feeds INPUT on stdin; sets out, err, rc
run() {
    local input=$1
    shift
    printf '%s' "$input" | "$UOPDB" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
}

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1" >&2
    shift
    printf '  %s\n' "$@" >&2
}

# expect_eq NAME WANT GOT
expect_eq() {
    if [ "$2" == "$3" ]; then ok; else bad "$1" "expected: $(printf '%q' "$2")" "got:      $(printf '%q' "$3")"; fi
}
# expect_has NAME NEEDLE TEXT
expect_has() {
    if [[ "$3" == *"$2"* ]]; then ok; else bad "$1" "expected to contain: $(printf '%q' "$2")" "got: $(printf '%q' "$3")"; fi
}
expect_rc() {
    if [ "$2" == "$3" ]; then ok; else bad "$1" "expected exit status $2, got $3" "stderr: $err"; fi
}

# --- values of expressions ---
run $'x = uop.var("x", 0, 10)\nx + 1\n1 + 2\n"hi", 3\nnil\nlocal q = 1\n'
expect_eq "expression values" $'UOp %2 = ADD index (%0, %1)\n3\nhi\t3\nnil' "$out"
expect_eq "expression values: no errors" "" "$err"
expect_rc "expression values: status" 0 "$rc"

run $'{1, 2, a = "s", t = {}, [10] = true}\n'
expect_eq "tables print shallowly" '{1, 2, [10] = true, a = "s", t = {...}}' "$out"

run $'e = (uop.var("x", 0, 10) * 4 + 3) // 2\ne:vmin(), e:vmax(), e:eval{x = 3}\n'
expect_eq "bounds and eval" $'1\t21\t7' "$out"

# --- multi-line input ---
run $'function f(a)\n  local b = a * 2\n  return b\nend\nf(21)\n'
expect_eq "multi-line function" "42" "$out"

run $'t = {\n  1,\n  2,\n}\n#t\n'
expect_eq "multi-line table" "2" "$out"

run $'x = uop.var("x", 0, 10)\nrs = uop.rules{\n  {name = "add0", pattern = "(ADD x 0)",\n   rewrite = function(m) return m.x end},\n}\nr, t = uop.rewrite(x + 0, rs)\nrawequal(r, x), t.rewrites[1].rule, t.rewrites[1].where\n'
expect_eq "rules written at the prompt record stdin:line" $'true\tadd0\tstdin:3' "$out"

run $'function g(\n'
expect_has "unfinished chunk at EOF is reported" "<eof>" "$err"
expect_rc "unfinished chunk at EOF: status" 0 "$rc"

# --- errors keep the session ---
run $'y = 5\nerror("boom")\ny + 1\nuop.new("ADDD", uop.dtypes.int32, {})\ny + 2\n'
expect_eq "state survives errors" $'6\n7' "$out"
expect_has "error message" "stdin:1: boom" "$err"
expect_has "error traceback" "stack traceback:" "$err"
expect_has "binding error message" "unknown op 'ADDD'" "$err"
expect_rc "errors in the REPL: status" 0 "$rc"

run $'uop.new()\nuop.const()\nuop.var("v", 0, 1):eval(5)\nuop.rewrite()\nuop.rules(5)\nuop.dot()\nuop.parse()\nsetmetatable({}, {__tostring = function() error("bad tostring") end})\n1 +\n2\nprint("alive")\n'
expect_eq "bad calls do not crash" $'3\nalive' "$out"
expect_rc "bad calls: status" 0 "$rc"

run $'x = = 1\nprint("after syntax error")\n'
expect_has "syntax error reported" "unexpected symbol" "$err"
expect_eq "syntax error: goes on" "after syntax error" "$out"

# --- colon commands ---
run $':help\n'
expect_has ":help lists commands" ":load FILE" "$out"
expect_has ":help lists the module" "uop.rewrite(root, rules" "$out"

printf 'z = 7\nprint("loaded")\n' >"$tmp/load.lua"
run $":load $tmp/load.lua"$'\nz * 2\n'
expect_eq ":load runs a file in the session" $'loaded\n14' "$out"

run $':load /nonexistent/file.lua\nprint("still here")\n'
expect_has ":load of a missing file" "cannot open /nonexistent/file.lua" "$err"
expect_eq ":load of a missing file: goes on" "still here" "$out"

run $':frobnicate now\nprint("carry on")\n'
expect_has "unknown command" "unknown command ':frobnicate'" "$err"
expect_eq "unknown command: goes on" "carry on" "$out"

run $'1\n:quit\n2\n'
expect_eq ":quit stops" "1" "$out"
run $'1\n:q\n2\n'
expect_eq ":q stops" "1" "$out"

run $':complete uop.cons\n'
expect_eq "completion of module fields" "uop.const" "$out"
run $'u = uop.var("u", 0, 1)\n:complete u:li\n:complete u:v\n'
expect_eq "completion of methods" $'u:listing\nu:vmax\nu:vmin' "$out"
run $':complete pri\n:complete uop.dtypes.floa\n'
expect_eq "completion of globals and nested fields" $'print\nuop.dtypes.float\nuop.dtypes.float16\nuop.dtypes.float32\nuop.dtypes.float64' "$out"

# --- command line ---
run "" --version
expect_eq "--version" "uopdb 0.1.0" "$out"
run "" --help
expect_has "--help" "usage:" "$out"
run "" --bogus
expect_rc "unknown option: status" 1 "$rc"
expect_has "unknown option: message" "unknown option '--bogus'" "$err"

run "" -e 'a = 2' -e 'print(a * 3)'
expect_eq "-e runs code in order" "6" "$out"
expect_rc "-e: status" 0 "$rc"
run "" -e 'error("bad e")'
expect_rc "-e error: status 1" 1 "$rc"
expect_has "-e error: message" "bad e" "$err"

printf 'print(#arg, arg[1], arg[2], select("#", ...), ...)\nprint(uop.var("s", 0, 9):vmax())\n' >"$tmp/script.lua"
run "" "$tmp/script.lua" one two
expect_eq "script with args" $'2\tone\ttwo\t2\tone\ttwo\n9' "$out"
expect_rc "script: status" 0 "$rc"

printf 'print("before")\nlocal t = nil\nprint(t.field)\n' >"$tmp/fail.lua"
run "" "$tmp/fail.lua"
expect_rc "failing script: status 1" 1 "$rc"
expect_eq "failing script: output before the error" "before" "$out"
expect_has "failing script: message" "fail.lua:3: attempt to index a nil value" "$err"

printf 'print(uop.new("ADD", uop.dtypes.int32, {}))\n' >"$tmp/fail2.lua"
run "" "$tmp/fail2.lua"
expect_rc "script with a binding error: status 1" 1 "$rc"

run "" /nonexistent/script.lua
expect_rc "missing script: status 1" 1 "$rc"

printf 'w = 41\n' >"$tmp/inter.lua"
run $'w + 1\n' -i "$tmp/inter.lua"
expect_eq "-i enters the REPL after the script" "42" "$out"
run $'v + 1\n' -e 'v = 9' -i
expect_eq "-i enters the REPL after -e" "10" "$out"

# --- Ctrl-C interrupts the running code, not the program ---
{ echo 'while true do end'; sleep 2; echo 'print("after interrupt")'; } | "$UOPDB" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1
kill -INT "$pid" 2>/dev/null
wait "$pid"
rc=$?
err=$(cat "$tmp/err")
expect_has "Ctrl-C interrupts" "interrupted!" "$err"
expect_eq "Ctrl-C: the session goes on" "after interrupt" "$(cat "$tmp/out")"
expect_rc "Ctrl-C: status" 0 "$rc"

# --- results show once; showing a tensor does not switch the current kernel ---
run $'A = Tensor.new({{1, 2}, {3, 4}}, "float32")\nk = uop.compile(A:matmul(A)):kernel(1)\nk:seek(9)\nx = k:stages()\nD = A + 1\nD\nuop.current():name()\nk:check(4)\n'
expect_has "an assignment prints nothing" $'r_2_2_2: stage 9 (expander)' "$out"
expect_has "the current kernel stays" $'\nr_2_2_2\n' "$out"
expect_eq "a check shows once" 1 "$(grep -c 'at stage 4 (initial symbolic): output0' <<<"$out")"
if [[ "$out" == *"stages of"* ]]; then bad "x = k:stages() printed the table"; else ok; fi

# --- :bisect names the planted rule, its stage and where it is written ---
run $'A = Tensor.new({{1,2,3},{4,5,6},{7,8,9}}, "float32")\nk = uop.compile(A:matmul(A)):kernel(1)\nk:insert(15, uop.rules{ {name="mul_to_add32", pattern="(MUL:int32 a b)", rewrite=function(m) return m.a + m.b end} })\n:bisect\n'
expect_has ":bisect: the stage" "bisect r_3_3_3: first wrong at stage 15 (lower index dtype)" "$out"
expect_has ":bisect: the culprit" "rule mul_to_add32 (stdin:1): %" "$out"
expect_has ":bisect: before and after" "    after:  %" "$out"
expect_has ":bisect: the elements" "at [0, 0]: got 0, want 30" "$out"

# --- a second Ctrl-C never kills the REPL; long C work (a bisection) stops too ---
{ echo 'A = Tensor.rand(160, 160):matmul(Tensor.rand(160, 160)); k = uop.compile(A):kernel(1)'
  echo 'while true do end'; sleep 2; echo 'print(k:bisect{quiet = true})'; sleep 2; echo 'print("still here")'; } |
    "$UOPDB" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1
kill -INT "$pid" 2>/dev/null
kill -INT "$pid" 2>/dev/null
sleep 1.3
kill -INT "$pid" 2>/dev/null
sleep 0.1
kill -INT "$pid" 2>/dev/null
wait "$pid"
rc=$?
err=$(cat "$tmp/err")
expect_has "two Ctrl-Cs: the REPL survives" "still here" "$(cat "$tmp/out")"
expect_rc "two Ctrl-Cs: status" 0 "$rc"
expect_has "Ctrl-C stops a bisection" "interrupted" "$err"

# --- on a terminal: libedit prompt, tab completion, Ctrl-C at the prompt, history ---
if command -v python3 >/dev/null 2>&1; then
    rm -f "$tmp/history"
    out=$(UOPDB_HISTORY="$tmp/history" python3 - "$UOPDB" <<'PY' 2>&1
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm"
    os.execv(sys.argv[1], [sys.argv[1]])
buf = b""
def drain(t):
    global buf
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                return
drain(1.0)
for keys in [b"u = uop.var('u', 0, 5)\r", b"uop.cons\t", b"(uop.dtypes.int, 3):arg()\r", b"u:vma\t", b"()\r",
             b"half typed", b"\x03", b"print('alive')\r", b"\x04"]:
    os.write(fd, keys)
    drain(0.5)
_, status = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace").replace("\r", ""))
print("exit=%d" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1))
PY
)
    expect_has "terminal: prompt" "uopdb> " "$out"
    expect_has "terminal: completion of uop.cons" $'3\n' "$out"
    expect_has "terminal: completion of a method" $'5\n' "$out"
    expect_has "terminal: Ctrl-C at the prompt keeps the session" $'alive\n' "$out"
    expect_has "terminal: clean exit on Ctrl-D" "exit=0" "$out"
    expect_has "terminal: history saved" "print('alive')" "$(cat "$tmp/history" 2>/dev/null)"
fi

# --- kernel commands on the current kernel ---
run $':stages\n'
expect_has "kernel command without a kernel" "no current kernel" "$err"

run $'A = Tensor.new({{1, 2}, {3, 4}}, "float32")\np = uop.compile(A:matmul(A))\n:goto 15\n:diff 14 15\n:rules 15\n:step\n:back\n:print\n:stages\n:run\n:goto 99\n:diff x\nprint("alive")\n'
expect_has ":goto moves to a stage" "stage 15 (lower index dtype)" "$out"
expect_has ":diff shows the index lowering" "+++ stage 15" "$out"
expect_has ":rules names the rules that fired" "lower_range" "$out"
expect_has ":step" "stage 16 (post-index symbolic)" "$out"
expect_has ":print lists the IR at the current stage" "at stage 15 (lower index dtype)" "$out"
expect_has ":stages marks the current stage" "> 15  lower index dtype" "$out"
expect_has ":run validates" "4 elements match the reference" "$out"
expect_has ":goto out of range" "no stage 99" "$err"
expect_has ":diff with a bad argument" ":diff takes two stage numbers" "$err"
expect_has "session survives kernel errors" "alive" "$out"

run $'A = Tensor.new({1, 2}, "float32")\np = uop.compile(A + 1)\n:dot\n:dot '"$tmp"$'/k.dot\n'
expect_has ":dot prints DOT text" "digraph uops {" "$out"
expect_has ":dot FILE writes the file" "wrote $tmp/k.dot" "$out"
expect_has ":dot FILE: the file is DOT" "digraph uops {" "$(cat "$tmp/k.dot" 2>/dev/null)"

seg=$(printf 'd%.0s' $(seq 1 200))
long="$seg/$seg/$seg"
mkdir -p "$tmp/$seg/$seg"
run $'A = Tensor.new({1, 2}, "float32")\np = uop.compile(A + 1)\n:dot '"$tmp"$'/q"u\\o.dot\n:dot '"$tmp/$long"$'.dot\n:goto 4294967297\n'
expect_has ":dot FILE with a quote and a backslash" "digraph uops {" "$(cat "$tmp/q\"u\\o.dot" 2>/dev/null)"
expect_has ":dot a long FILE name is passed whole" "digraph uops {" "$(cat "$tmp/$long.dot" 2>/dev/null)"
expect_has ":goto a number past int32 names it" "no stage 4294967297" "$err"

run $'A = Tensor.new({{1, 2}, {3, 4}}, "float32")\np = uop.compile(A:matmul(A))\n:check 4\n:bisect\n:check x\n'
expect_has ":check runs the kernel at a stage" "r_2_2_2 at stage 4 (initial symbolic): output0 float32 (2, 2): 4 elements match" "$out"
expect_has ":bisect checks every stage it can" "bisect r_2_2_2: no checked stage differs" "$out"
expect_has ":check with a bad argument" ":check takes one stage number" "$err"

run $'A = Tensor.new({{1, 2}, {3, 4}}, "float32")\np = uop.compile(A:matmul(A))\n:rewrites 15\n'
expect_has ":rewrites lists the rewrites of a stage" "stage 15 (lower index dtype):" "$out"
expect_has ":rewrites names each rule" "lower_range" "$out"

echo "repl: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
