"""A change stream of the service opened over a plain socket, as a screen that only holds it open."""
import socket


def open_change_stream(port, jid, timeout=60):
    """A change stream of `jid` on 127.0.0.1:`port`, returned once its snapshot event has come."""
    stream = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    stream.sendall(f"GET /v1/presence/events?jid={jid} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    received = b""
    while b"event: presence" not in received:
        chunk = stream.recv(4096)
        if not chunk:
            stream.close()
            raise OSError("the stream ended before its snapshot")
        received += chunk
    return stream
