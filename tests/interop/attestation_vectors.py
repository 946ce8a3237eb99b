#!/usr/bin/env python3
"""Gatehouse's verdicts on the shared attestation vectors (Tests/vectors/attestation), next to an
independent verifier's, case by case: they must agree.

- Apple App Attest: pyattest (PyPI), with pyhanko-certvalidator's clock set to each case's time.
- Android Key Attestation: pyattest has no verifier for it (its "google" verifier reads SafetyNet
  and Play Integrity tokens), so the oracle is `openssl verify -attime` for the chain and asn1crypto
  for the key description's challenge, package and signing digest.

Each case is verified by `gatehouse verify-attestation` (the server's Core code, offline). The
StrongBox sample is refused by both even at its time: its leaf names ecdsa-with-SHA256 with a NULL
parameter (RFC 5758 3.2 says absent), which OpenSSL 3 reports as a certificate signature failure and
swift-certificates as an unsupported algorithm.

    attestation_vectors.py --binary .build/debug/gatehouse
"""
import argparse
import asyncio
import base64
import datetime
import hashlib
import os
import subprocess
import sys
import tempfile

from asn1crypto import x509
from cryptography.hazmat.primitives.serialization import load_pem_public_key
import pyattest.verifiers.apple_attestation as apple_attestation
from pyattest.assertion import Assertion
from pyattest.attestation import Attestation
from pyattest.configs.apple import AppleConfig
from pyattest.exceptions import PyAttestException

sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
from interop_common import check, finish  # noqa: E402

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "vectors", "attestation")
ANDROID_DIGEST = "301AA3CB081134501C45F1422ABC66C24224FD5DED5FDC8F17E697176FD866AA"


def apple_samples():
    samples = []
    for name in ("ios-14.2.yaml", "ios-14.4.yaml"):
        with open(os.path.join(VECTORS, "apple", name)) as handle:
            for document in handle.read().split("\n---"):
                fields = {}
                for line in document.split("\n"):
                    if line.startswith(" ") or ":" not in line:
                        continue
                    key, value = line.split(":", 1)
                    fields[key] = value.strip().strip("'")
                fields["publicKeyPEM"] = document.split("publicKey: |", 1)[1].split("-----END PUBLIC KEY-----")[0].replace("\n  ", "\n").strip() \
                    + "\n-----END PUBLIC KEY-----\n" if "publicKey: |" in document else ""
                samples.append(fields)
    return samples


def when(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def gatehouse(binary, *arguments):
    result = subprocess.run([binary, "verify-attestation", *arguments], capture_output=True, text=True, timeout=60)
    return result.returncode == 0


def pyattest_attestation(sample, team, environment_production, client_data, moment):
    original = apple_attestation.ValidationContext
    apple_attestation.ValidationContext = lambda **kwargs: original(moment=moment, **kwargs)
    try:
        config = AppleConfig(key_id=base64.b64decode(sample["keyIdBase64"]), app_id=f"{team}.{sample['bundleIdentifier']}",
                             production=environment_production)
        # pyattest's "nonce" is the client data itself; it hashes it.
        attestation = Attestation(base64.b64decode(sample["attestationBase64"]), client_data, config)
        asyncio.run(attestation.verify())
        return True
    except PyAttestException:
        return False
    finally:
        apple_attestation.ValidationContext = original


def apple_cases(binary):
    samples = apple_samples()
    attestations = {s["keyIdBase64"]: s for s in samples if s.get("type") == "attestation"}
    now = datetime.datetime.now(datetime.timezone.utc)
    for sample in attestations.values():
        recorded = base64.b64decode(sample["clientDataBase64"])
        cases = [
            ("at its time", sample["teamIdentifier"], False, recorded, sample["timestamp"], True),
            ("today", sample["teamIdentifier"], False, recorded, None, False),
            ("for another team", "ABCDE12345", False, recorded, sample["timestamp"], False),
            ("over other client data", sample["teamIdentifier"], False, b"other client data", sample["timestamp"], False),
            ("in production", sample["teamIdentifier"], True, recorded, sample["timestamp"], False),
        ]
        for label, team, production, client_data, time, expected in cases:
            moment = when(time) if time else now
            client_hash = hashlib.sha256(client_data).digest()
            theirs = pyattest_attestation(sample, team, production, client_data, moment)
            ours = gatehouse(binary, "apple", "--object", sample["attestationBase64"], "--key-id", sample["keyIdBase64"],
                             "--client-data-hash", base64.b64encode(client_hash).decode(), "--team", team,
                             "--bundle", sample["bundleIdentifier"], "--environment", "production" if production else "development",
                             "--at", moment.isoformat().replace("+00:00", "Z"))
            check(theirs == ours == expected, f"apple attestation {sample['id'][:8]} {label}: pyattest {theirs}, gatehouse {ours}")
    for sample in (s for s in samples if s.get("type") == "assertion"):
        attested = attestations[sample["keyIdBase64"]]
        public_key = load_pem_public_key(sample["publicKeyPEM"].encode())
        for label, client_hash, expected in [("as recorded", base64.b64decode(sample["clientDataHashSha256Base64"]), True),
                                             ("over other client data", bytes(32), False)]:
            try:
                Assertion(base64.b64decode(sample["assertionBase64"]), client_hash, public_key, AppleConfig(
                    key_id=base64.b64decode(sample["keyIdBase64"]), app_id="", production=False)).verify()
                theirs = True
            except Exception:  # cryptography's InvalidSignature: pyattest lets it through
                theirs = False
            ours = gatehouse(binary, "apple-assertion", "--assertion", sample["assertionBase64"],
                             "--client-data-hash", base64.b64encode(client_hash).decode(),
                             "--previous-counter", str(int(sample["counter"]) - 1), "--object", attested["attestationBase64"],
                             "--key-id", attested["keyIdBase64"], "--attestation-client-data-hash", attested["clientDataHashSha256Base64"],
                             "--team", attested["teamIdentifier"], "--bundle", attested["bundleIdentifier"],
                             "--environment", "development", "--attested-at", attested["timestamp"])
            check(theirs == ours == expected, f"apple assertion {sample['id'][:8]} {label}: pyattest {theirs}, gatehouse {ours}")


def openssl_verdict(folder, epoch, nonce, root):
    """The oracle: the chain at `epoch` to `root`, then the leaf's challenge, package and digest."""
    certificates = [os.path.join(folder, f"cert{index}.pem") for index in range(4)]
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as untrusted:
        for path in certificates[1:3]:
            with open(path) as handle:
                untrusted.write(handle.read().strip() + "\n")
        untrusted.flush()
        chained = subprocess.run(["openssl", "verify", "-attime", str(epoch), "-CAfile", root, "-untrusted", untrusted.name,
                                  certificates[0]], capture_output=True).returncode == 0
    with open(certificates[0], "rb") as handle:
        body = b"".join(line for line in handle.read().splitlines() if not line.startswith(b"-----"))
    leaf = x509.Certificate.load(base64.b64decode(body))
    extension = next(e for e in leaf["tbs_certificate"]["extensions"] if e["extn_id"].dotted == "1.3.6.1.4.1.11129.2.1.17")
    description = children(extension["extn_value"].native)
    challenge = description[4][2]
    software = dict((tag, value) for _, tag, value in children(description[6][2]))
    application_id = children(children(software[709])[0][2])
    packages = [children(info)[0][2] for _, _, info in children(application_id[0][2])]
    digests = [digest.hex().upper() for _, _, digest in children(application_id[1][2])]
    return chained and challenge == nonce and b"com.android.keychain" in packages and digests == [ANDROID_DIGEST]


def children(der):
    """The (class, tag, contents) of each element inside a DER value's contents (or of a bare sequence
    of elements): a walker written here so that the oracle shares no parser with Gatehouse."""
    if der[:1] in (b"\x30", b"\x31") and element_length(der, 0)[2] == len(der):
        der = der[element_length(der, 0)[1]:]
    elements, offset = [], 0
    while offset < len(der):
        tag, header, end = element_length(der, offset)
        elements.append((der[offset] >> 6, tag, der[offset + header:end]))
        offset = end
    return elements


def element_length(der, offset):
    """(tag number, header length, end offset) of the element at `offset`."""
    tag, position = der[offset] & 0x1F, offset + 1
    if tag == 0x1F:
        tag = 0
        while der[position] & 0x80:
            tag = tag << 7 | der[position] & 0x7F
            position += 1
        tag = tag << 7 | der[position]
        position += 1
    length = der[position]
    position += 1
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(der[position:position + count], "big")
        position += count
    return tag, position - offset, position + length


def android_cases(binary):
    google_2016 = os.path.join(VECTORS, "android", "algorithm_EC_SecurityLevel_TEE", "cert3.pem")
    for name in ("algorithm_EC_SecurityLevel_TEE", "algorithm_RSA_SecurityLevel_TEE", "algorithm_EC_SecurityLevel_StrongBox"):
        folder = os.path.join(VECTORS, "android", name)
        root = os.path.join(folder, "cert3.pem") if "StrongBox" in name else google_2016
        for label, at, nonce, expected in [("at its time", "2020-01-01T00:00:00Z", b"abc", "StrongBox" not in name),
                                           ("after its intermediates expired", "2029-01-01T00:00:00Z", b"abc", False),
                                           ("for another challenge", "2020-01-01T00:00:00Z", b"abd", False)]:
            theirs = openssl_verdict(folder, int(when(at).timestamp()), nonce, root)
            ours = gatehouse(binary, "android", *[item for index in range(4) for item in ("--chain", os.path.join(folder, f"cert{index}.pem"))],
                             "--nonce", base64.b64encode(nonce).decode(), "--package", "com.android.keychain",
                             "--signing-digest", ANDROID_DIGEST, "--at", at, "--root", root)
            check(theirs == ours == expected, f"android {name} {label}: openssl {theirs}, gatehouse {ours}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    binary = os.path.abspath(parser.parse_args().binary)
    apple_cases(binary)
    android_cases(binary)
    finish("attestation vectors")


if __name__ == "__main__":
    main()
