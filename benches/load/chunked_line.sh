#!/usr/bin/env bash
# One long JSON Lines record sent to POST /admin/v1/jobs/bulk in 1-byte chunks, timed: what
# finding the end of a line costs when its body trickles in a byte at a time.
#
#   bash benches/load/chunked_line.sh                      # lines of 32, 64 and 128 KiB
#   CHUNKED_LINE_KIB="64 512" bash benches/load/chunked_line.sh
#   CHUNKED_LINE_BIN=/path/to/job-listings bash benches/load/chunked_line.sh   # another build
#
# Goal: time in proportion to the line's length (twice the bytes, about twice the seconds).
#
# A release server on a fresh folder without the demo data, one company written through the
# admin API, then for each size one job whose description (and blanks) pad its line to that
# many KiB, sent with HTTP/1.1 chunked transfer coding in chunks of one byte. The whole
# request is handed to the socket at once, so the sender costs nothing measurable: the server
# still decodes one body frame per chunk, and the seconds are its own, from the first byte
# sent to the last byte of the answer (which must count the job created). Loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sizes="${CHUNKED_LINE_KIB:-32 64 128}"
target="${CARGO_TARGET_DIR:-$root/target}"
source "$here/common.sh"
require python3
cd "$root"
bin="${CHUNKED_LINE_BIN:-}"
if [[ -z "$bin" ]]; then
  cargo build --release --quiet -p job-listings-server --bin job-listings
  bin="$target/release/job-listings"
fi

RUST_LOG=warn "$bin" --data-dir "$work/data" serve --no-demo --addr 127.0.0.1:0 \
  --admin-addr 127.0.0.1:0 >"$work/server.out" 2>"$work/server.out.err" &
pid=$!
wait_listening "$work/server.out" "the server"

echo "== one line in 1-byte chunks ($("$bin" --version 2>/dev/null || echo job-listings))"
python3 - "$(cat "$work/data/admin.addr")" "$(cat "$work/data/admin.token")" $sizes <<'EOF'
import json, socket, sys, time, uuid
from urllib.parse import urlsplit

admin, token, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
where = urlsplit(admin)

def call(method, path, headers, body):
    """One request on a new connection; returns (status, body text)."""
    head = [f"{method} {path} HTTP/1.1", f"Host: {where.netloc}",
            f"Authorization: Bearer {token}", "Connection: close"] + headers
    with socket.create_connection((where.hostname, where.port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1].decode(errors="replace")

company = str(uuid.uuid4())
record = json.dumps({"name": "Trickle Co", "domain": "trickle.example.com",
                     "funding_stage": "seed"}).encode()
status, text = call("PUT", f"/admin/v1/companies/{company}",
                    ["Content-Type: application/json", f"Content-Length: {len(record)}"], record)
assert status in (200, 201), text

for kib in sizes:
    job = {"id": str(uuid.uuid4()), "role": "Patient Engineer", "company_id": company,
           "description": "", "remote": True, "source_url": "https://trickle.example.com/1",
           "posted_at": "2026-11-01T09:30:00Z", "confidence": 0.9}
    # A description holds at most 100,000 bytes: longer lines are padded with the blanks
    # JSON allows before the closing brace.
    job["description"] = "x" * min(90_000, kib * 1024 - len(json.dumps(job)))
    text = json.dumps(job)
    line = (text[:-1] + " " * (kib * 1024 - len(text)) + "}").encode() + b"\n"
    body = b"".join(b"1\r\n" + line[i:i + 1] + b"\r\n" for i in range(len(line))) + b"0\r\n\r\n"
    started = time.perf_counter()
    status, text = call("POST", "/admin/v1/jobs/bulk",
                        ["Content-Type: application/x-ndjson", "Transfer-Encoding: chunked"], body)
    took = time.perf_counter() - started
    assert status == 200 and '"created":1' in text, f"{status}: {text[:500]}"
    print(f"{kib:>5} KiB line ({len(line)} bytes, {len(line)} chunks): {took:.3f} s")
EOF
