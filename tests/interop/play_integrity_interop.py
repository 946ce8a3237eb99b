#!/usr/bin/env python3
"""Classic Play Integrity tokens built by an independent JOSE library, read by Gatehouse.

There are no public real tokens with their keys, so this makes an app's response keys as Play Console
does (an AES-256 decryption key, an EC P-256 verification key) and builds each token as Google
documents it with joserfc (PyPI): a JWS (ES256) of the verdict, inside a JWE (A256KW, A256GCM). Then
`gatehouse verify-attestation play-integrity` (the server's Core code, offline) must accept the good
one with the verdict's facts, and refuse each altered or failing one with its reason.

And the other way: a token the Swift test device built (`PlayIntegrityTests`, which writes it to the
file GATEHOUSE_PLAY_INTEGRITY_SAMPLE names) must decrypt and verify with joserfc to its verdict, and
the service account's assertion it signed (standard mode's) must verify with PyJWT.

    play_integrity_interop.py --binary .build/debug/gatehouse [--swift-sample FILE]
"""
import argparse
import atexit
import base64
import json
import os
import subprocess
import sys
import tempfile
import time

import jwt as pyjwt
from cryptography.hazmat.primitives import serialization
from joserfc import jwe, jws
from joserfc.jwk import ECKey, OctKey

PACKAGE = "com.example.shop"
DIGEST = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
NONCE = base64.urlsafe_b64encode(os.urandom(24)).rstrip(b"=").decode()
FAILURES = []


def verdict(**changes):
    """A verdict as Play writes one for a genuine device and app; `changes` replace parts of it."""
    now = int(time.time() * 1000)
    payload = {
        "requestDetails": {"requestPackageName": PACKAGE, "timestampMillis": str(now), "nonce": NONCE},
        "appIntegrity": {"appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": PACKAGE,
                         "certificateSha256Digest": [DIGEST], "versionCode": "42"},
        "deviceIntegrity": {"deviceRecognitionVerdict": ["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"],
                            "recentDeviceActivity": {"deviceActivityLevel": "LEVEL_1"}},
        "accountDetails": {"appLicensingVerdict": "LICENSED"},
        "environmentDetails": {"appAccessRiskVerdict": {"appsDetected": ["KNOWN_INSTALLED"]}, "playProtectVerdict": "NO_ISSUES"},
    }
    for path, value in changes.items():
        part, _, field = path.partition("__")
        payload[part][field] = value
    return json.dumps(payload).encode()


class App:
    def __init__(self):
        self.aes = os.urandom(32)
        self.signing = ECKey.generate_key("P-256")
        der = self.signing.public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        # A file, as the command takes it (a secret on a command line is in the process list).
        handle, self.decryption_key_file = tempfile.mkstemp(prefix="play-integrity-key-")
        os.write(handle, base64.b64encode(self.aes))
        os.close(handle)
        atexit.register(os.unlink, self.decryption_key_file)
        self.verification_key = base64.b64encode(der).decode()

    def token(self, payload, signer=None, header=None, jwe_header=None, aes=None):
        signed = jws.serialize_compact(header or {"alg": "ES256"}, payload, signer or self.signing)
        return jwe.encrypt_compact(jwe_header or {"alg": "A256KW", "enc": "A256GCM"}, signed.encode(), OctKey.import_key(aes or self.aes))


def verify(binary, app, token, *extra):
    # `--name=value`: a random base64url value may start with "-", which would read as an option.
    arguments = [binary, "verify-attestation", "play-integrity", "--token=" + token, "--decryption-key-file", app.decryption_key_file,
                 "--verification-key=" + app.verification_key, "--package", PACKAGE, "--certificate=" + DIGEST, "--nonce=" + NONCE,
                 *extra]
    run = subprocess.run(arguments, capture_output=True, text=True, timeout=60)
    try:
        line = json.loads(run.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        line = {"verdict": "no answer", "stderr": run.stderr[-300:]}
    if (run.returncode == 0) != (line.get("verdict") == "accepted"):
        line["exit"] = run.returncode
    return line


def check(name, ok, detail=""):
    print("%-4s %s%s" % ("ok" if ok else "FAIL", name, "" if ok else ": %s" % detail))
    if not ok:
        FAILURES.append(name)


def altered(token, part, change):
    """The token with one of its five parts' bytes altered (base64url decoded, changed, encoded again)."""
    parts = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(parts[part] + "=" * (-len(parts[part]) % 4)))
    change(raw)
    parts[part] = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    return ".".join(parts)


def flip(raw):
    raw[0] ^= 1


def read_swift_sample(path):
    """The Swift test device's token, opened and verified by joserfc alone."""
    with open(path) as handle:
        sample = json.load(handle)
    verification = serialization.load_der_public_key(base64.b64decode(sample["verificationKey"]))
    try:
        opened = jwe.decrypt_compact(sample["token"], OctKey.import_key(base64.b64decode(sample["decryptionKey"])))
        header = json.loads(base64.urlsafe_b64decode(sample["token"].split(".")[0] + "=="))
        signed = jws.deserialize_compact(opened.plaintext, ECKey.import_key(verification), algorithms=["ES256"])
        ok = header == {"alg": "A256KW", "enc": "A256GCM"} and json.loads(signed.payload) == json.loads(sample["payload"])
        check("joserfc opens and verifies the token the Swift test device built (A256KW, A256GCM, ES256)", ok, header)
    except Exception as error:  # joserfc's refusal of the token is the failure this reports
        check("joserfc opens and verifies the token the Swift test device built", False, repr(error))
    try:
        claims = pyjwt.decode(sample["assertion"], sample["serviceAccountPublicKey"], algorithms=["RS256"],
                              audience="https://oauth2.googleapis.com/token")
        check("PyJWT verifies the service account's assertion (RS256, audience, expiry)",
              claims["scope"] == "https://www.googleapis.com/auth/playintegrity" and claims["exp"] - claims["iat"] == 3600, claims)
    except pyjwt.PyJWTError as error:
        check("PyJWT verifies the service account's assertion", False, repr(error))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--swift-sample")
    arguments = parser.parse_args()
    binary = arguments.binary
    app, other = App(), App()
    if arguments.swift_sample:
        read_swift_sample(arguments.swift_sample)

    good = verify(binary, app, app.token(verdict()))
    check("a token joserfc builds as Play documents it is accepted", good.get("verdict") == "accepted"
          and good.get("integrity") == "device" and good.get("licensing") == "LICENSED" and good.get("riskyApps") == "false", good)
    strong = verify(binary, app, app.token(verdict(deviceIntegrity__deviceRecognitionVerdict=[
        "MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY", "MEETS_STRONG_INTEGRITY"])), "--minimum-integrity", "strong")
    check("a strong verdict meets a strong minimum", strong.get("integrity") == "strong", strong)
    risky = verify(binary, app, app.token(verdict(environmentDetails__appAccessRiskVerdict={"appsDetected": ["UNKNOWN_CAPTURING"]},
                                                  deviceIntegrity__recentDeviceActivity={"deviceActivityLevel": "LEVEL_4"})))
    check("capturing apps and high activity are reported, not refused", risky.get("riskyApps") == "true"
          and risky.get("deviceActivityLevel") == "LEVEL_4", risky)
    virtual = app.token(verdict(deviceIntegrity__deviceRecognitionVerdict=["MEETS_VIRTUAL_INTEGRITY"]))
    check("an emulator's verdict is accepted where the operator allows it",
          verify(binary, app, virtual, "--allow-virtual").get("integrity") == "virtual")

    old = str(int(time.time() * 1000) - 3_600_000)
    refusals = [
        ("another nonce", app.token(verdict(requestDetails__nonce="another-nonce")), [], "wrong_nonce"),
        ("another package", app.token(verdict(requestDetails__requestPackageName="com.example.other")), [], "wrong_package"),
        ("an hour old", app.token(verdict(requestDetails__timestampMillis=old)), [], "stale"),
        ("from the future", app.token(verdict(requestDetails__timestampMillis=str(int(time.time() * 1000) + 600_000))), [], "stale"),
        ("an unrecognised app", app.token(verdict(appIntegrity__appRecognitionVerdict="UNRECOGNIZED_VERSION")), [], "unrecognized_app"),
        ("another signing certificate", app.token(verdict(appIntegrity__certificateSha256Digest=["AAAA"])), [], "wrong_certificate"),
        ("basic integrity only", app.token(verdict(deviceIntegrity__deviceRecognitionVerdict=["MEETS_BASIC_INTEGRITY"])), [],
         "integrity_too_low"),
        ("no device verdict", app.token(verdict(deviceIntegrity__deviceRecognitionVerdict=[])), [], "integrity_too_low"),
        ("an emulator where none is allowed", virtual, [], "integrity_too_low"),
        ("unlicensed", app.token(verdict(accountDetails__appLicensingVerdict="UNLICENSED")), ["--require-licensed"], "unlicensed"),
        ("signed by another app's key", app.token(verdict(), signer=other.signing), [], "bad_signature"),
        ("signed HS256", app.token(verdict(), signer=OctKey.import_key(os.urandom(32)), header={"alg": "HS256"}), [], "bad_signature"),
        ("encrypted to another app's key", app.token(verdict(), aes=other.aes), [], "undecryptable"),
        ("the tag changed", altered(app.token(verdict()), 4, flip), [], "undecryptable"),
        ("the IV changed", altered(app.token(verdict()), 2, flip), [], "undecryptable"),
        ("the wrapped key changed", altered(app.token(verdict()), 1, flip), [], "undecryptable"),
        ("the ciphertext changed", altered(app.token(verdict()), 3, flip), [], "undecryptable"),
        ("A128GCM instead of A256GCM", jwe.encrypt_compact({"alg": "A256KW", "enc": "A128GCM"},
                                                           jws.serialize_compact({"alg": "ES256"}, verdict(), app.signing).encode(),
                                                           OctKey.import_key(app.aes)), [], "malformed"),
        ("a JWE inside the JWE", jwe.encrypt_compact({"alg": "A256KW", "enc": "A256GCM"}, app.token(verdict()).encode(),
                                                     OctKey.import_key(app.aes)), [], "malformed"),
        ("a verdict that is not JSON", app.token(b"not json"), [], "malformed"),
        ("a timestamp that is not a number", app.token(verdict(requestDetails__timestampMillis="soon")), [], "malformed"),
        ("20 KB of padding in the verdict", app.token(verdict(requestDetails__padding="x" * 20_000)), [], "malformed"),
        ("not a token", "a.b.c.d.e", [], "malformed"),
    ]
    for name, token, extra, code in refusals:
        answer = verify(binary, app, token, *extra)
        check("refused: %s (%s)" % (name, code), answer.get("verdict") == "refused" and answer.get("code") == code, answer)

    print("%d checks, %d failed" % (4 + len(refusals) + (2 if arguments.swift_sample else 0), len(FAILURES)))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
