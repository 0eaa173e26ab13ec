#!/usr/bin/env python3
"""Makes signing-vector.json: signed thumbnail URLs worked out with Python's own hmac, hashlib,
base64 and unicodedata, independently of thumbd's Swift and libcrypto code, for
Tests/ThumbServerTests/URLSigningTests.swift to check against (README, "Deploying a private
library"). Run from the repository root: python3 Tests/Fixtures/signing/make_vector.py"""
import base64, hashlib, hmac, json, unicodedata, urllib.parse

KEY_ID = "2026-12"
SECRET_HEX = "4f2a" * 16          # 32 bytes, as `openssl rand -hex 32` gives
EXPIRES = 1796198400               # 2026-12-02T12:00:00Z


def sign(grid, path_bytes, expires, secret_hex):
    message = grid.encode() + b"\n" + path_bytes + b"\n" + str(expires).encode()
    digest = hmac.new(bytes.fromhex(secret_hex), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


cases = []
for grid, path in [("3", "cameras/nikon-d40.jpg"),
                   ("1", "2024/Seoul 서울/IMG 0001.HEIC"),
                   ("5", "cafe\u0301/caf\u00e9 #1 100%.jpg")]:   # NFD directory, NFC file: signed as NFC
    nfc = unicodedata.normalize("NFC", path).encode()
    cases.append({"grid": grid, "path": path,
                  "url_path": urllib.parse.quote(path.encode(), safe="/-._~"),
                  "signed_path_hex": nfc.hex(), "sig": sign(grid, nfc, EXPIRES, SECRET_HEX)})
latin1 = b"latin1-caf\xe9.jpg"                                  # a name that is not UTF-8: signed as its bytes
cases.append({"grid": "3", "path": None, "url_path": urllib.parse.quote(latin1, safe="/-._~"),
              "signed_path_hex": latin1.hex(), "sig": sign("3", latin1, EXPIRES, SECRET_HEX)})

with open("Tests/Fixtures/signing/signing-vector.json", "w") as out:
    json.dump({"key_id": KEY_ID, "secret_hex": SECRET_HEX, "expires": EXPIRES, "cases": cases},
              out, indent=2, ensure_ascii=False)
    out.write("\n")
