#!/usr/bin/env python3
"""A package index on 127.0.0.1 for the gpu install tests: small stand-in wheels, no network.

    index_server.py ROOT [--cut-after N] [--log FILE]

ROOT/<project>/<file>.whl are the files. GET /simple/<project>/ answers with a PEP 691 JSON
page listing them (relative URLs, SHA-256 of the bytes on disk, or of ROOT/<file>.sha256
when that exists, to stand for an index that lists another file); GET /files/<project>/<file>
serves them, honouring "Range: bytes=N-". --cut-after N: the first file request closes the
connection after N bytes, as a dropped download does. --log: one line per request,
"<path> <Range header or ->". Prints the port on the first line of stdout once listening.
"""
import argparse
import hashlib
import http.server
import json
import pathlib
import sys
import threading

parser = argparse.ArgumentParser()
parser.add_argument("root", type=pathlib.Path)
parser.add_argument("--cut-after", type=int, default=-1)
parser.add_argument("--log", type=pathlib.Path)
args = parser.parse_args()
lock = threading.Lock()
cut_pending = [args.cut_after >= 0]


class Index(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def send(self, status, body, content_type, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if args.log:
            with lock, args.log.open("a") as log:
                log.write(f"{self.path} {self.headers.get('Range', '-')}\n")
        parts = [p for p in self.path.split("/") if p]
        if len(parts) == 2 and parts[0] == "simple":
            return self.listing(parts[1])
        if len(parts) == 3 and parts[0] == "files":
            return self.file(args.root / parts[1] / parts[2])
        self.send(404, b"not found", "text/plain")

    def listing(self, project):
        folder = args.root / project
        if not folder.is_dir():
            return self.send(404, b"no such project", "text/plain")
        files = []
        for wheel in sorted(folder.glob("*.whl")):
            listed = args.root / (wheel.name + ".sha256")
            sha = listed.read_text().strip() if listed.exists() else hashlib.sha256(wheel.read_bytes()).hexdigest()
            files.append({"filename": wheel.name, "url": f"../../files/{project}/{wheel.name}",
                          "hashes": {"sha256": sha}})
        body = json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files}).encode()
        self.send(200, body, "application/vnd.pypi.simple.v1+json")

    def file(self, path):
        if not path.is_file():
            return self.send(404, b"no such file", "text/plain")
        data = path.read_bytes()
        start = 0
        wanted = self.headers.get("Range", "")
        if wanted.startswith("bytes=") and wanted.endswith("-"):
            start = int(wanted[len("bytes="):-1])
            if start >= len(data):
                return self.send(416, b"", "text/plain", [("Content-Range", f"bytes */{len(data)}")])
        body = data[start:]
        with lock:
            cut = cut_pending[0]
            cut_pending[0] = False
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if cut:
            self.wfile.write(body[:args.cut_after])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
print(server.server_address[1], flush=True)
server.serve_forever()
