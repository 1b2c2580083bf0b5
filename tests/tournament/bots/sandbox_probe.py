"""A hostile 'bot' for the sandbox tests: does one thing it should not be able to do and prints
one line saying what happened (the tests read it).

    sandbox_probe.py tcp HOST PORT     connect over TCP
    sandbox_probe.py read PATH         read a file
    sandbox_probe.py write PATH        create a file
    sandbox_probe.py forkbomb          fork until refused
    sandbox_probe.py memory MB         allocate MB mebibytes, 16 at a time
    sandbox_probe.py spin              burn CPU forever
    sandbox_probe.py sleep MARKER      sleep (MARKER only tags the process for the tests)
    sandbox_probe.py whoami            uid and whether the admin token is in the environment
"""
from __future__ import annotations

import os
import socket
import sys
import time


def main(argv: list[str]) -> int:
    what = argv[0]
    if what == "tcp":
        try:
            with socket.create_connection((argv[1], int(argv[2])), timeout=5):
                print("tcp: connected")
        except OSError as exc:
            print(f"tcp: refused {type(exc).__name__}")
    elif what == "read":
        try:
            with open(argv[1], "rb") as f:
                f.read()
            print("read: ok")
        except OSError as exc:
            print(f"read: refused {type(exc).__name__}")
    elif what == "write":
        try:
            with open(argv[1], "w") as f:
                f.write("x")
            print("write: ok")
        except OSError as exc:
            print(f"write: refused {type(exc).__name__}")
    elif what == "forkbomb":
        children = 0
        try:
            while children < 100_000:
                pid = os.fork()
                if pid == 0:
                    time.sleep(3)
                    os._exit(0)
                children += 1
            print(f"forkbomb: unbounded {children}")
        except OSError as exc:
            print(f"forkbomb: stopped after {children} {type(exc).__name__}")
    elif what == "memory":
        held = []
        try:
            for _ in range(int(argv[1]) // 16):
                held.append(bytearray(16 * 1024 * 1024))
            print(f"memory: got {len(held) * 16} MB")
        except MemoryError:
            print(f"memory: refused after {len(held) * 16} MB")
    elif what == "spin":
        while True:
            pass
    elif what == "sleep":
        print("sleeping", flush=True)  # the test kills the sandbox only once the bot runs
        time.sleep(600)
    elif what == "whoami":
        print(f"whoami: uid={os.getuid()} admin_token_in_env="
              f"{'REFEREE_ADMIN_TOKEN' in os.environ}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
