# Hostile submission: sends a secret to a server (the test's own, on 127.0.0.1).
import socket

try:
    with socket.create_connection(("127.0.0.1", @PORT@), timeout=5) as conn:
        conn.sendall(b"stolen secret")
    print("connected and sent")
except OSError as exc:
    print(f"no connection: {type(exc).__name__} errno {exc.errno}")
