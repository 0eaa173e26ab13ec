#!/usr/bin/env python3
"""SIGKILL crash test (hostile-input and crash issue).

Runs a release thumbd over a library of corpus photos under a concurrent miss load, kills it
with SIGKILL at random moments (--kills times, default 10), restarts it over the same cache
directory each time, and finally checks that:
  - no temporary file survives a start (cache_dir/tmp is empty after the last start),
  - every thumbnail the restarted server serves from disk (X-Cache: HIT-DISK) decodes fully
    (vips avg reads every pixel) and is byte-identical to a fresh render by a server with an
    empty cache,
  - the server found no damaged entry it had to delete (disk_cache.corrupt == 0; a torn file
    at an entry's name would show there).
Loads only 127.0.0.1. Needs the corpus (../shared/corpus or THUMBD_CORPUS) and libvips-tools.
Usage: Tests/Scripts/crash-test.py [--kills N]
"""
import argparse, http.client, json, os, random, shutil, signal, subprocess, sys, tempfile, threading, time
from urllib.parse import quote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.environ.get("THUMBD_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
GRIDS = ["1", "3", "5"]


def get(port, path, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def start(binary, library, cache, port):
    proc = subprocess.Popen([binary, "--library", library, "--cache-dir", cache, "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            if get(port, "/healthz", timeout=1)[0] == 200:
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("thumbd did not start")


def load(port, names, stop):
    while not stop.is_set():
        name, grid = random.choice(names), random.choice(GRIDS)
        try:
            get(port, f"/thumbnails/{grid}/{quote(name)}", timeout=10)
        except OSError:
            pass  # the server was killed under us: expected


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--port", type=int, default=18460)
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(CORPUS, "photos")):
        sys.exit(f"needs the corpus at {CORPUS} (or THUMBD_CORPUS)")
    subprocess.run(["swift", "build", "-c", "release", "--product", "thumbd"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    binary = os.path.join(ROOT, ".build", "release", "thumbd")
    work = tempfile.mkdtemp(prefix="thumbd-crash-")
    try:
        library, cache = os.path.join(work, "library"), os.path.join(work, "cache")
        os.makedirs(library)
        photos = sorted(f for f in os.listdir(os.path.join(CORPUS, "photos")) if f.endswith(".jpg"))
        names = []
        for i in range(160):
            source = photos[i % len(photos)]
            name = f"c{i:03d}-{source}"
            os.link(os.path.join(CORPUS, "photos", source), os.path.join(library, name))
            names.append(name)

        for k in range(args.kills):
            proc = start(binary, library, cache, args.port)
            stop = threading.Event()
            workers = [threading.Thread(target=load, args=(args.port, names, stop)) for _ in range(8)]
            for w in workers:
                w.start()
            time.sleep(random.uniform(0.3, 2.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            stop.set()
            for w in workers:
                w.join()
            entries = sum(len(fs) for _, _, fs in os.walk(os.path.join(cache, "entries")))
            leftovers = len(os.listdir(os.path.join(cache, "tmp")))
            print(f"kill {k + 1}: {entries} entries on disk, {leftovers} temporary files left by the kill")

        proc = start(binary, library, cache, args.port)
        leftovers = os.listdir(os.path.join(cache, "tmp"))
        fresh = start(binary, library, os.path.join(work, "fresh-cache"), args.port + 1)
        served, checked, failures = 0, 0, []
        for name in names:
            for grid in GRIDS:
                path = f"/thumbnails/{grid}/{quote(name)}"
                status, headers, body = get(args.port, path)
                served += 1
                if status != 200:
                    failures.append(f"{path}: {status}")
                    continue
                if headers.get("X-Cache") != "HIT-DISK":
                    continue
                checked += 1
                out = os.path.join(work, "served.jpg" if body[:2] == b"\xff\xd8" else "served.png")
                with open(out, "wb") as f:
                    f.write(body)
                decoded = subprocess.run(["vips", "avg", out], capture_output=True)
                if decoded.returncode != 0:
                    failures.append(f"{path}: does not decode: {decoded.stderr.decode()[:200]}")
                reference = get(args.port + 1, path)[2]
                if reference != body:
                    failures.append(f"{path}: differs from a fresh render")
        stats = json.loads(get(args.port, "/stats")[2])
        proc.send_signal(signal.SIGTERM)
        fresh.send_signal(signal.SIGTERM)
        proc.wait()
        fresh.wait()
        corrupt = stats["disk_cache"]["corrupt"]
        print(f"after {args.kills} SIGKILLs: {served} thumbnails served, {checked} from disk checked "
              f"(decode + byte-identical to a fresh render), {len(leftovers)} temporary files after restart, "
              f"{corrupt} damaged entries found")
        for failure in failures:
            print("FAIL", failure)
        ok = not failures and not leftovers and corrupt == 0 and checked > 0
        print("crash test:", "passed" if ok else "FAILED")
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
