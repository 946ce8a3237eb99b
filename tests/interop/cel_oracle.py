#!/usr/bin/env python3
"""Gatehouse's rule expressions next to an independent CEL: cel-python (`celpy`).

Every expression of tests/interop/cel_corpus.json is checked and evaluated by `gatehouse rules evaluate`
and by cel-python over the same facts, and the answers must agree: the same value (typed), or both an
evaluation error. An expression Gatehouse refuses before evaluation must be refused as the corpus says
(kind and line:column), and cel-python must refuse or fail it too (no value), unless the corpus says
why it is not asked (`notAsked`): CEL that Gatehouse's subset leaves out on purpose (docs/risk.md), or a
place where cel-python is more lenient than cel-spec. Where cel-python deviates from cel-spec on a
value, the expression is left out of the corpus; the generator's notes list them.

The functions cel-python does not have are defined here from their specifications, with Python's own
libraries: `lowerAscii` (cel-go's strings extension) and Kubernetes' IP and CIDR library (`ip`,
`cidr`, `containsIP`, `containsCIDR`, `family`, `isLoopback`, `prefixLength`) over `ipaddress`.
"""
import argparse
import datetime
import ipaddress
import json
import math
import subprocess
import sys

import celpy
from celpy import celtypes

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class IP(celtypes.StringType):
    """An address as a CEL value of its own (compared by its bytes)."""

    def __new__(cls, text):
        if not isinstance(text, str) or "%" in text:
            raise ValueError("IP address is not valid")
        address = ipaddress.ip_address(text)
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            raise ValueError("IPv4-mapped IPv6 addresses are not IP addresses here")
        value = super().__new__(cls, "ip:" + address.packed.hex())
        value.address = address
        return value


class CIDR(celtypes.StringType):
    def __new__(cls, text):
        if not isinstance(text, str) or "/" not in text:
            raise ValueError("network address is not valid CIDR notation")
        address, prefix = text.split("/", 1)
        if not prefix.isdigit() or str(int(prefix)) != prefix:
            raise ValueError("network address is not valid CIDR notation")
        IP(address)
        network = ipaddress.ip_network(text, strict=False)
        value = super().__new__(cls, "cidr:" + network.network_address.packed.hex() + "/" + prefix)
        value.network = network
        return value


def fail(message):
    raise celpy.CELEvalError(message)


def lower_ascii(text):
    return celtypes.StringType("".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text))


def contains_ip(network, address):
    if not isinstance(address, IP):
        address = IP(str(address))
    return celtypes.BoolType(address.address.version == network.network.version and address.address in network.network)


def contains_cidr(outer, inner):
    return celtypes.BoolType(
        inner.network.version == outer.network.version and inner.network.prefixlen >= outer.network.prefixlen
        and inner.network.network_address in outer.network)


FUNCTIONS = {
    "lowerAscii": lower_ascii,
    "ip": lambda text: IP(str(text)),
    "cidr": lambda text: CIDR(str(text)),
    "family": lambda ip: celtypes.IntType(ip.address.version),
    "isLoopback": lambda ip: celtypes.BoolType(ip.address.is_loopback),
    "containsIP": contains_ip,
    "containsCIDR": contains_cidr,
    "prefixLength": lambda cidr: celtypes.IntType(cidr.network.prefixlen),
}


def duration_nanos(text):
    """Go's duration syntax, as Gatehouse's facts are written."""
    value = celtypes.DurationType(text)
    return value


def fact(json_value, type_name, objects):
    """A fact for cel-python, read as Gatehouse's environment declares its type."""
    if type_name in objects:
        fields = objects[type_name]
        return celtypes.MapType({celtypes.StringType(k): fact(v, fields[k]["type"], objects) for k, v in json_value.items()})
    if type_name == "google.protobuf.Timestamp":
        return celtypes.TimestampType(json_value)
    if type_name == "google.protobuf.Duration":
        return celtypes.DurationType(json_value)
    if type_name.startswith("list("):
        return celtypes.ListType([fact(v, type_name[5:-1], objects) for v in json_value])
    if type_name.startswith("map("):
        value_type = type_name[4:-1].split(", ", 1)[1]
        return celtypes.MapType({celtypes.StringType(k): fact(v, value_type, objects) for k, v in json_value.items()})
    return celpy.json_to_cel(json_value)


def plain_gatehouse(value):
    """Gatehouse's typed JSON as plain Python, to compare."""
    kind, inner = value["type"], value.get("value")
    if kind == "double":
        return ("double", float(inner) if not isinstance(inner, str) else float(inner.replace("Infinity", "inf")))
    if kind == "timestamp":
        return ("timestamp", inner[0], inner[1] // 1000 * 1000)
    if kind == "duration":
        return ("duration", inner // 1000 * 1000)
    if kind == "ip":
        return ("ip", bytes(inner).hex())
    if kind == "cidr":
        network = ipaddress.ip_network(inner, strict=False)
        return ("cidr", network.network_address.packed.hex() + "/" + str(network.prefixlen))
    if kind == "list":
        return ("list", [plain_gatehouse(v) for v in inner])
    if kind == "map":
        return ("map", sorted((repr(plain_gatehouse(k)), plain_gatehouse(v)) for k, v in inner))
    if kind in ("int", "string", "bool"):
        return (kind, inner)
    if kind == "null":
        return ("null",)
    return ("map", sorted((repr(("string", k)), plain_gatehouse(v)) for k, v in inner.items()))


def plain_cel(value):
    """cel-python's value as plain Python, in the same shapes."""
    if isinstance(value, IP):
        return ("ip", value.address.packed.hex())
    if isinstance(value, CIDR):
        return ("cidr", value.network.network_address.packed.hex() + "/" + str(value.network.prefixlen))
    if isinstance(value, celtypes.BoolType) or isinstance(value, bool):
        return ("bool", bool(value))
    if isinstance(value, celtypes.IntType) or (isinstance(value, int) and not isinstance(value, bool)):
        return ("int", int(value))
    if isinstance(value, celtypes.DoubleType) or isinstance(value, float):
        return ("double", float(value))
    if isinstance(value, str):
        return ("string", str(value))
    if value is None:
        return ("null",)
    if isinstance(value, datetime.datetime):
        delta = value - EPOCH
        micros = delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds
        return ("timestamp", micros // 1_000_000, micros % 1_000_000 * 1000)
    if isinstance(value, datetime.timedelta):
        return ("duration", (value.days * 86_400_000_000 + value.seconds * 1_000_000 + value.microseconds) * 1000)
    if isinstance(value, (list, tuple)):
        return ("list", [plain_cel(v) for v in value])
    if isinstance(value, dict):
        return ("map", sorted((repr(plain_cel(k)), plain_cel(v)) for k, v in value.items()))
    raise TypeError("unexpected cel-python value %r" % (value,))


def same(a, b):
    if a[0] == "double" and b[0] == "double":
        return a[1] == b[1] or (math.isnan(a[1]) and math.isnan(b[1]))
    if a[0] != b[0]:
        return False
    if a[0] in ("list",):
        return len(a[1]) == len(b[1]) and all(same(x, y) for x, y in zip(a[1], b[1]))
    if a[0] == "map":
        return len(a[1]) == len(b[1]) and all(k == l and same(x, y) for (k, x), (l, y) in zip(a[1], b[1]))
    return a == b


def oracle(expression, facts, environment):
    """cel-python's answer: ("value", plain) or ("error", text) or ("refused", text)."""
    env = celpy.Environment()
    try:
        ast = env.compile(expression)
    except Exception as error:  # noqa: BLE001 - any refusal is one
        return ("refused", str(error).splitlines()[0][:200])
    try:
        activation = {name: fact(value, environment["variables"][name], environment["objects"]) for name, value in facts.items()}
        result = env.program(ast, functions=FUNCTIONS).evaluate(activation)
    except Exception as error:  # noqa: BLE001 - CEL's error value, however cel-python raises it
        return ("error", str(error)[:200])
    if isinstance(result, celpy.CELEvalError):
        return ("error", str(result)[:200])
    return ("value", plain_cel(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--corpus", default="tests/interop/cel_corpus.json")
    arguments = parser.parse_args()
    corpus = json.load(open(arguments.corpus))
    environment = json.loads(subprocess.run([arguments.binary, "rules", "variables"], check=True, capture_output=True, text=True).stdout)
    lines = "".join(json.dumps({"expression": e["expression"], "facts": e.get("facts", {})}) + "\n" for e in corpus)
    answers = subprocess.run([arguments.binary, "rules", "evaluate"], input=lines, check=True, capture_output=True, text=True).stdout.splitlines()
    if len(answers) != len(corpus):
        sys.exit("gatehouse answered %d lines for %d expressions" % (len(answers), len(corpus)))
    problems, counts = [], {"value": 0, "error": 0, "refused": 0}
    for entry, line in zip(corpus, answers):
        expression, answer = entry["expression"], json.loads(line)
        expected = entry.get("refused")
        if "refused" in answer:
            counts["refused"] += 1
            got = answer["refused"]
            where = "%d:%d" % (got["line"], got["column"])
            if not expected:
                problems.append("%r: Gatehouse refused it (%s %s: %s), the corpus expects it evaluated" % (expression, got["kind"], where, got["message"]))
            elif expected["kind"] != got["kind"] or expected["at"] != where:
                problems.append("%r: refused as %s at %s, the corpus says %s at %s" % (expression, got["kind"], where, expected["kind"], expected["at"]))
            elif "notAsked" not in expected and oracle(expression, entry.get("facts", {}), environment)[0] == "value":
                problems.append("%r: Gatehouse refuses it as CEL would, but cel-python evaluated it" % expression)
            continue
        if expected:
            problems.append("%r: the corpus expects a refusal (%s), Gatehouse answered %s" % (expression, expected, line))
            continue
        theirs = oracle(expression, entry.get("facts", {}), environment)
        if "error" in answer:
            counts["error"] += 1
            if theirs[0] != "error":
                problems.append("%r: Gatehouse's evaluation fails (%s), cel-python's %s %r" % (expression, answer["error"], theirs[0], theirs[1]))
            continue
        counts["value"] += 1
        ours = plain_gatehouse(answer["value"])
        if theirs[0] != "value" or not same(ours, theirs[1]):
            problems.append("%r: Gatehouse %r, cel-python %s %r" % (expression, ours, theirs[0], theirs[1]))
    print("%d expressions: %d values, %d evaluation errors, %d refusals" % (len(corpus), counts["value"], counts["error"], counts["refused"]))
    for problem in problems:
        print("DISAGREE " + problem)
    if problems:
        sys.exit("%d of %d expressions disagree" % (len(problems), len(corpus)))
    print("Gatehouse and cel-python agree on every expression")


if __name__ == "__main__":
    main()
