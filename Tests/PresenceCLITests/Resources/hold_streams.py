"""Holds change streams of a running `presence serve` open, in a process of its own.

Usage: hold_streams.py PORT PREFIX COUNT

Opens COUNT change streams on 127.0.0.1:PORT, the i-th watching PREFIXi@example.com, each over a plain socket
and counted open once its snapshot event has come; then prints "open COUNT" and holds them until its standard
input ends (the test closing it, or the test process ending), when it exits and the streams close with it.
A stream that ends before its snapshot, or does not send it within 60 s, is printed as "failed: ..." and the
script exits 1.

The thousands of descriptors live here rather than in the test process because Foundation's `Process.run()` on
Linux lists /proc/self/fd to close inherited descriptors and, in Swift 6.3, copies 256 bytes of every entry's
name: with about 1,350 descriptors open the last entry of glibc's 32 KiB directory buffer lies close enough to
its end for that copy to read past it, and a test starting a server at that moment crashes the test process.
"""
import resource
import sys

from change_stream_socket import open_change_stream

port, prefix, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])

# As many descriptors as the hard limit allows: the streams need more than a soft limit of 1,024.
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

streams = []
for index in range(count):
    jid = f"{prefix}{index}@example.com"
    try:
        stream = open_change_stream(port, jid)
    except OSError as error:
        print(f"failed: the stream of {jid} (number {index + 1}): {error}", flush=True)
        sys.exit(1)
    streams.append(stream)

print(f"open {len(streams)}", flush=True)
sys.stdin.buffer.read()
