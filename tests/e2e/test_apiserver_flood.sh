#!/bin/bash
# koord apiserver under a flood of idle connections from one address (issue 20 §1): before the
# event loop, ~1,100 idle TCP connections filled the server's 1,024 connection threads and
# nobody else got in. Now one address holds at most --max-connections-per-address (set to 300
# here), the connections beyond it are closed at once, kubectl from another address works
# throughout, and the idle connections, never served, are closed after the short first-request
# timeout (10 s) instead of the 120 s a served connection may idle.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v python3 >/dev/null || skip "python3 not installed"

start_apiserver "$TMP/data" --max-connections-per-address 300
port=${server##*:}

# The flood: 400 connections from 127.0.0.2, nothing sent. The script reports how many the
# server closed within 2 s (those past the cap), then waits for the others to be closed and
# reports when the last one was (it gives up after 60 s).
cat >"$TMP/flood.py" <<'EOF'
import select, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for _ in range(n):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    socks.append(s)
start = time.monotonic()
def closed_by(deadline, gone):
    while time.monotonic() < deadline:
        live = [s for s in socks if s not in gone]
        if not live:
            break
        r, _, _ = select.select(live[:1000], [], [], 0.2)
        for s in r:
            try:
                if not s.recv(64):
                    gone.add(s)
            except OSError:
                gone.add(s)
    return gone
early = closed_by(start + 2, set())
print("closed-at-once", len(early), flush=True)
open(sys.argv[3], "w").close()  # the flood is in place
late = closed_by(start + 60, set(early)) - early
print("closed-later", len(late), "after", round(time.monotonic() - start), "s", flush=True)
EOF
python3 "$TMP/flood.py" "$port" 400 "$TMP/flooding" >"$TMP/flood.out" 2>&1 &
flood=$!
wait_for "the flood is in place" test -e "$TMP/flooding"
grep -q "closed-at-once 100$" "$TMP/flood.out" ||
    fail "the 100 connections past the per-address cap were not closed at once: $(cat "$TMP/flood.out")"

# Others still get in while 300 idle connections hold their address's share.
for i in 1 2 3; do
    k create configmap "during-$i" --from-literal=k=v
    expect_rc 0 "kubectl during the flood ($i)"
done
k get configmaps
expect_out "during-3" "kubectl lists during the flood"

# The idle connections were never served: closed after the first-request timeout.
wait "$flood"
grep -q "closed-later 300 after" "$TMP/flood.out" ||
    fail "the idle connections were not all closed by the server: $(cat "$TMP/flood.out")"
secs=$(sed -n 's/.*closed-later 300 after \([0-9]*\) s/\1/p' "$TMP/flood.out")
[ -n "$secs" ] && [ "$secs" -le 30 ] || fail "idle connections closed after ${secs:-?} s, want <= 30"
cat "$TMP/flood.out"

k get configmap during-1
expect_rc 0 "kubectl after the flood"
finish
