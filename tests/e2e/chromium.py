"""Headless Chromium driven over the DevTools protocol (--remote-debugging-pipe), with Python's
standard library only: load a file, collect console messages, exceptions and network requests,
evaluate expressions, take a screenshot."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("chromium not found: run scripts/install-deps --test (it installs Debian's chromium)")


class Page:
    def __init__(self, width=1280, height=900):
        self.profile = tempfile.TemporaryDirectory()
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4.
        def wire():
            # The pipes may themselves be fds 3 and 4: move them out of the way first, then set them
            # inheritable (os.pipe's fds close on exec, and dup2 onto the same fd keeps that flag).
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self.proc = subprocess.Popen(
            [find_chromium(), "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage",
             f"--user-data-dir={self.profile.name}", f"--window-size={width},{height}", "about:blank"],
            # close_fds would close 3 and 4 after wire() made them: the pipes' other ends are
            # non-inheritable (os.pipe), so nothing else leaks into the browser.
            preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.profile.name, "stderr.log"), "wb"))
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next = 0
        self.events = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=width < 600)

    def _read(self, timeout_s):
        import select
        while b"\0" not in self._buf:
            if not select.select([self._from_child], [], [], timeout_s)[0]:
                raise AssertionError("chromium did not answer within %s s" % timeout_s)
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise AssertionError("chromium closed the DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=False, timeout_s=30, **params):
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read(timeout_s)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event, timeout_s=30):
        deadline = time.monotonic() + timeout_s
        while not any(e.get("method") == event for e in self.events):
            self.events.append(self._read(max(0.1, deadline - time.monotonic())))
        return next(e for e in self.events if e.get("method") == event)

    def load(self, path):
        self.call("Page.navigate", session=True, url="file://" + os.path.abspath(path))
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in r:
            raise AssertionError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path, full_page=True):
        params = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            h = self.evaluate("document.documentElement.scrollHeight")
            w = self.evaluate("document.documentElement.scrollWidth")
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": min(h, 16000), "scale": 1}
        data = self.call("Page.captureScreenshot", session=True, **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def console_problems(self):
        """Console errors and warnings, uncaught exceptions and log entries of level error/warning."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(p)
            elif m == "Runtime.exceptionThrown":
                out.append(p)
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append(p["entry"])
        return out

    def requests(self):
        """URLs of every request the page made: the file itself, then anything else (should be none)."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self):
        try:
            self.call("Browser.close", timeout_s=5)
        except AssertionError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)
        self.profile.cleanup()


def png_is_blank(path):
    """True when a PNG has a single colour (a blank render). Decodes the PNG with zlib: 8-bit RGB(A)."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw = zlib.decompress(idat)
    bpp = 4 if ctype == 6 else 3
    stride = width * bpp + 1
    colours = set()
    # Filtered bytes differ from pixels, but a single-colour image filters to constant rows: any
    # variety among sampled rows' bytes beyond the filter type means content.
    for y in range(0, height, max(1, height // 200)):
        colours.add(raw[y * stride + 1:(y + 1) * stride])
        if len(colours) > 2:
            return False
    return len(colours) <= 2
