#!/usr/bin/env python3
"""Waves of silent keyless connections against a loopback job-listings server.

    python3 benches/load/silent_waves.py --base http://127.0.0.1:8080 --key jl_live_... \
        --admin http://127.0.0.1:8081 --admin-token ... [--waves 10] [--connections 10100]

Each wave opens --connections connections from --sources loopback addresses (127.0.0.2
onwards; all of 127.0.0.0/8 is loopback on Linux) and sends nothing on them; it waits (at
most --hold seconds) until the server has closed them, closes what is left, then a new
client with a key asks GET /api/v1/jobs?per_page=1 on a new connection, and the admin
/metrics is read until the server counts no connection (job_listings_connections open and
closing at 0). Prints a line a wave and exits 1 if a keyed client was not served or the
count did not come back to 0. Only loopback addresses are accepted.
"""

import argparse
import asyncio
import ipaddress
import resource
import sys
import time
import urllib.parse
import urllib.request


def loopback(url):
    host = urllib.parse.urlsplit(url).hostname
    if not ipaddress.ip_address(host).is_loopback:
        sys.exit(f"{url}: only loopback addresses")
    return url


async def silent(host, port, source, hold, closed):
    """One connection that says nothing; counts it in `closed` if the server closes it."""
    try:
        reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
    except OSError:
        return "refused"
    try:
        data = await asyncio.wait_for(reader.read(1), hold)
        if data == b"":
            closed.append(1)
            return "closed"
        return "answered"
    except (asyncio.TimeoutError, ConnectionError, OSError):
        return "held"
    finally:
        writer.close()


def get(url, headers, timeout=10):
    request = urllib.request.Request(url, headers=headers)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            body = answer.read()
            return answer.status, time.monotonic() - started, body
    except urllib.error.HTTPError as e:
        return e.code, time.monotonic() - started, b""
    except OSError:
        return 0, time.monotonic() - started, b""


def connection_counts(admin, token):
    status, _, body = get(f"{admin}/metrics", {"Authorization": f"Bearer {token}"})
    if status != 200:
        return None
    counts = {}
    for line in body.decode().splitlines():
        if line.startswith("job_listings_connections{"):
            state = line.split('state="')[1].split('"')[0]
            counts[state] = int(float(line.rsplit(" ", 1)[1]))
    return counts.get("open", -1), counts.get("closing", -1)


async def wave(args, host, port):
    sources = [f"127.0.0.{2 + i}" for i in range(args.sources)]
    closed = []
    tasks = []
    started = time.monotonic()
    for i in range(args.connections):
        tasks.append(asyncio.create_task(
            silent(host, port, sources[i % len(sources)], args.hold, closed)))
        if i % 500 == 499:
            await asyncio.sleep(0)
    outcomes = await asyncio.gather(*tasks)
    return {k: outcomes.count(k) for k in set(outcomes)}, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--admin", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--waves", type=int, default=10)
    parser.add_argument("--connections", type=int, default=10_100)
    parser.add_argument("--sources", type=int, default=11)
    parser.add_argument("--hold", type=float, default=30.0)
    args = parser.parse_args()
    base, admin = loopback(args.base), loopback(args.admin)
    split = urllib.parse.urlsplit(base)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    failed = False
    for n in range(1, args.waves + 1):
        outcomes, took = asyncio.run(wave(args, split.hostname, split.port))
        status, latency, _ = get(f"{base}/api/v1/jobs?per_page=1", {"X-API-Key": args.key})
        deadline = time.monotonic() + 60
        counts = connection_counts(admin, args.admin_token)
        while counts != (0, 0) and time.monotonic() < deadline:
            time.sleep(0.2)
            counts = connection_counts(admin, args.admin_token)
        print(f"wave {n}: {args.connections} silent from {args.sources} addresses in {took:.1f}s: "
              f"{outcomes}; keyed GET {status} in {latency * 1000:.1f} ms; "
              f"server counts (open, closing) {counts}", flush=True)
        failed |= status != 200 or counts != (0, 0)
    print("FAILED" if failed else "every wave: keyed client served, count back at 0")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
