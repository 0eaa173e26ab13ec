"""What the browser tests share: thumbd on a temporary library, headless Chromium through
Selenium with its network log, and the runner that prints one PASS/FAIL line per test and a
closing "N passed, M failed" (exit status 1 on any failure).

Servers listen on 127.0.0.1 only, on ports from THUMBD_TEST_PORTS (default 18200-18299), as do
chromedriver and Chromium's DevTools endpoint. Only Debian's chromium and chromium-driver are
used: nothing is downloaded at run time.
"""

import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

os.environ.setdefault("SE_OFFLINE", "true")   # Selenium Manager must not download a driver

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHOTOS = os.path.join(ROOT, "Tests", "Fixtures", "photos")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_for(what, seconds, probe, interval=0.1):
    """probe()'s first truthy answer, polled for at most `seconds`; a Failure naming `what` after."""
    deadline = time.time() + seconds
    while True:
        answer = probe()
        if answer:
            return answer
        check(time.time() < deadline, "%s: not within %g s" % (what, seconds))
        time.sleep(interval)


_used_ports = set()


def free_port():
    """A port of THUMBD_TEST_PORTS that nothing listens on now (tried in a random order)."""
    low, high = (int(p) for p in os.environ.get("THUMBD_TEST_PORTS", "18200-18299").split("-"))
    ports = [p for p in range(low, high + 1) if p not in _used_ports]
    random.shuffle(ports)
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _used_ports.add(port)
        return port
    raise Failure("no free port in %d-%d" % (low, high))


# For a server several tests share, left idle between them: its placeholder backfill would
# render the whole library in the background meanwhile, taking a core from the tests after.
NO_BACKFILL = ["--no-thumbhash-backfill"]


class Server:
    """thumbd on a temporary library filled by `fill(library_path)`, with a fresh cache directory
    and an access log; `arguments` are more flags."""

    def __init__(self, binary, fill, arguments=(), client_key=None, wait=True):
        """`client_key`: the server has `client_keys` with this one key (config file only), and
        this harness's own requests carry it. `wait`: return once the library is listed (else
        once started: a cold server, its first scan under way)."""
        self.dir = tempfile.mkdtemp(prefix="thumbd-browser-")
        self.library = os.path.join(self.dir, "library")
        os.mkdir(self.library)
        fill(self.library)
        self.token = None
        if "--admin-token" in arguments:
            self.token = arguments[list(arguments).index("--admin-token") + 1]
        if client_key is not None:
            config = os.path.join(self.dir, "thumbd.json")
            with open(config, "w") as f:
                json.dump({"client_keys": [{"id": "app", "sha256": hashlib.sha256(client_key.encode()).hexdigest()}]}, f)
            arguments = list(arguments) + ["--config", config]
            self.token = client_key
        self.log_path = os.path.join(self.dir, "access.log")
        self.log = open(self.log_path, "w")
        for attempt in range(5):   # another program may take the port between the probe and the bind
            self.port = free_port()
            self.base = "http://127.0.0.1:%d" % self.port
            self.process = subprocess.Popen(
                [binary, "--library", self.library, "--cache-dir", os.path.join(self.dir, "cache"),
                 "--host", "127.0.0.1", "--port", str(self.port), "--index-rescan-seconds", "0.2", "--access-log"]
                + list(arguments),
                stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
            if not wait or self._wait_until_listed():
                return
        raise Failure("thumbd did not start: " + self.output())

    def _wait_until_listed(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if self.listing(limit=1)["total"] > 0:
                    return True
            except (OSError, ValueError, KeyError):
                pass
            if self.process.poll() is not None:
                return False
            time.sleep(0.1)
        raise Failure("thumbd did not list the library within 30 s: " + self.output())

    def request(self, method, path, body=None, token=None, accept="*/*", headers=None):
        """(status, headers, body bytes) of one request; `headers`: more request headers."""
        headers = dict(headers or {}, Accept=accept)
        if token:
            headers["Authorization"] = "Bearer " + token
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def json(self, method, path, body=None, headers=None):
        status, _, data = self.request(method, path, body, token=self.token, headers=headers)
        check(200 <= status < 300, "%s %s answered %d: %s" % (method, path, status, data[:300]))
        return json.loads(data)

    def listing(self, sort="newest", offset=0, limit=100):
        """One /assets page ({} while the index is being built)."""
        status, _, data = self.request("GET", "/assets?sort=%s&offset=%d&limit=%d" % (sort, offset, limit), token=self.token)
        return json.loads(data) if status == 200 else {}

    def assets(self):
        """The /assets items (an empty list while the index is being built)."""
        return self.listing().get("items", [])

    def stats(self):
        return self.json("GET", "/stats")

    def output(self):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()[-2000:]

    def thumbnail_requests(self):
        """Access-log lines of thumbnail requests so far."""
        self.log.flush()
        time.sleep(0.2)   # the log is written from a queue
        with open(self.log_path, errors="replace") as f:
            return [line for line in f if " /thumbnails/" in line]

    def pause(self):
        """Freezes thumbd (SIGSTOP): connections are still accepted by the kernel, nothing is answered."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self):
        self.resume()
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def browser(profile, width=1200, height=900):
    """Headless Chromium with its performance (network) log on."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=%d,%d" % (width, height), "--user-data-dir=" + profile,
                     "--remote-debugging-port=%d" % free_port()]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver", port=free_port())
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(20)
    return driver


class NetworkLog:
    """The browser's requests as its DevTools network events tell them (performance log)."""

    def __init__(self, driver):
        self.driver = driver
        self.requests = {}   # requestId -> {url, method, body, sent, failed, canceled, finished}
        self.order = []

    def poll(self):
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message.get("method"), message.get("params", {})
            request_id = params.get("requestId")
            if method == "Network.requestWillBeSent":
                request = params["request"]
                record = {"id": request_id, "url": request["url"], "method": request["method"],
                          "body": request.get("postData"), "sent": params["timestamp"], "failed": None,
                          "canceled": False, "answered": None, "status": None}
                self.requests[request_id] = record
                self.order.append(record)
            elif method == "Network.responseReceived" and request_id in self.requests:
                self.requests[request_id]["answered"] = params["timestamp"]
                self.requests[request_id]["status"] = params["response"]["status"]
            elif method == "Network.loadingFailed" and request_id in self.requests:
                self.requests[request_id]["failed"] = params.get("errorText")
                self.requests[request_id]["canceled"] = bool(params.get("canceled"))
        return self.order

    def matching(self, method, path_prefix):
        """Requests so far of `method` whose path starts with `path_prefix`, in the order sent."""
        self.poll()
        return [r for r in self.order if r["method"] == method
                and r["url"].split("//", 1)[-1].split("/", 1)[-1].startswith(path_prefix.lstrip("/"))]

    def response_body(self, record):
        """The body Chromium kept for a request (DevTools Network.getResponseBody)."""
        return self.driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": record["id"]})["body"]


def main(tests):
    if len(sys.argv) != 2:
        sys.exit("usage: %s PATH-TO-THUMBD" % sys.argv[0])
    binary = os.path.abspath(sys.argv[1])
    passed = failed = 0
    started_all = time.time()
    for test in tests:
        profile = tempfile.mkdtemp(prefix="thumbd-chromium-")
        started = time.time()
        try:
            test(binary, profile)
            passed += 1
            print("PASS %s (%.1f s)" % (test.__name__, time.time() - started), flush=True)
        except Failure as failure:
            failed += 1
            print("FAIL %s: %s" % (test.__name__, failure), flush=True)
        except Exception:
            failed += 1
            print("FAIL %s: error\n%s" % (test.__name__, traceback.format_exc()), flush=True)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
    for cleanup in _cleanups:
        cleanup()
    print("browser tests: %.0f s" % (time.time() - started_all), flush=True)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    sys.exit(1 if failed else 0)


_cleanups = []


def at_end(cleanup):
    """Runs `cleanup` after the last test (a server or browser shared by several tests)."""
    _cleanups.append(cleanup)
