"""The test bed and a Matrix user for scripts/check-image: reuses the bed scripts/test started, else starts one."""
import json
import os
import re
import shutil
import socket
import subprocess
import urllib.request


class TestBedError(Exception):
    """The test bed could not be found or started."""


def free_port_base():
    """The first block of ten free ports from 29900 down (scripts/test counts up from 29400)."""
    for base in range(29900, 29399, -10):
        free = True
        for port in range(base, base + 10):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    free = False
                    break
        if free:
            return base
    raise TestBedError("no free block of ten ports between 29400 and 29909 for a test bed")


def read_env(path):
    """The `export KEY=value` lines of a test bed's env file."""
    values = {}
    for line in open(path):
        match = re.match(r"export (\w+)=(.*)$", line.strip())
        if match:
            values[match.group(1)] = match.group(2)
    return values


class TestBed:
    """The test bed of scripts/test when it runs, else one started (and stopped) here (with PostgreSQL: `postgres`)."""

    def __init__(self, repo, work, binary, say, postgres=False):
        self.script = os.path.join(repo, "scripts", "testbed")
        self.own = None
        existing = os.environ.get("ISTHMUS_TESTBED_DIR")
        if existing and os.path.exists(os.path.join(existing, "env")) and subprocess.run(
                [self.script, "status", "--dir", existing],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            self.dir = existing
            say(f"using the running test bed in {existing}")
        else:
            self.own = self.dir = os.path.join(work, "testbed")
            subprocess.run([self.script, "stop", "--dir", self.dir],
                           stderr=subprocess.DEVNULL)
            shutil.rmtree(self.dir, ignore_errors=True)
            base = os.environ.get("ISTHMUS_TESTBED_PORT_BASE") or str(free_port_base())
            subprocess.run([self.script, "start", "--dir", self.dir, "--port-base", base]
                           + (["--postgres"] if postgres else []),
                           env=dict(os.environ, ISTHMUS_BIN=binary), check=True)
        self.env = read_env(os.path.join(self.dir, "env"))

    def stop(self):
        if self.own:
            subprocess.run([self.script, "stop", "--dir", self.own])


class Matrix:
    """A Matrix user on the test bed's Synapse (client-server API, stdlib only)."""

    def __init__(self, base, user, password):
        self.base = base
        self.token = None
        self.token = self.call("POST", "/_matrix/client/v3/login", {
            "type": "m.login.password", "identifier": {"type": "m.id.user", "user": user},
            "password": password})["access_token"]

    def call(self, method, path, body=None):
        request = urllib.request.Request(self.base + path, method=method, data=json.dumps(body or {}).encode())
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)
