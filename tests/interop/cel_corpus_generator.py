#!/usr/bin/env python3
"""Writes tests/interop/cel_corpus.json, the expressions cel_oracle.py runs through Gatehouse and
cel-python: edit the lists here and run it again. `v` adds an expression both must answer alike (with
facts, for the rule variables); `r` one Gatehouse refuses before evaluation, with the kind and place it
must name (`why` when cel-python is not asked, because it is more lenient than cel-spec there or the
expression is CEL that the subset leaves out)."""
import os
import json
C = []
def v(e, facts=None): C.append({"expression": e, **({"facts": facts} if facts else {})})
def r(e, kind, at, cel="error", facts=None, why=None):
    refused = {"kind": kind, "at": at}
    if cel == "subset" or why: refused["notAsked"] = why or "CEL that Gatehouse's subset leaves out (docs/risk.md)"
    C.append({"expression": e, "refused": refused, **({"facts": facts} if facts else {})})
# cel-python deviates from cel-spec on these, so they are not in the corpus: -1.0 / 0.0 (it answers +inf),
# int(" 1") (it trims spaces), the escapes \\? and \\` (kept as written), [1, 2, 3][-1] (Python's negative
# index), [1, 2, 3,] (refuses the trailing comma the grammar allows), duration("0") (refused), string(true)
# ("True"), 0.0/0.0 == 0.0/0.0 (true).

# 1. numbers
for e in ["1 + 2 * 3", "(1 + 2) * 3", "7 / 2", "-7 / 2", "7 % 3", "-7 % 3", "7 % -3", "5 / -2", "0x10 + 1", "-0x10",
          "9223372036854775807", "-9223372036854775808", "9223372036854775807 + 1", "-9223372036854775808 - 1", "9223372036854775807 * 2",
          "-(-9223372036854775807)", "3000000000 * 3000000000", "4000000000 * 4000000000", "1 / 0", "1 % 0", "0 / 5", "-0", "--5", "---5",
          "-9223372036854775808 / -1", "100 - 200", "2 * -3", "1 - -1", "10 / 3 * 3 + 10 % 3",
          "1.5 + 2.25", "0.1 + 0.2", "1e3", "1.5e-3 * 2.0", "2.0 / 4.0", "1.0 / 0.0", "-(2.5)", "3.0 * -1.5", ".5 + .25",
          "1e308 * 10.0", "123.456e2", "1.0 - 1.0", "2.5 < 3.5", "2.5 >= 2.5", "1 < 2", "2 <= 2", "3 > 4", "4 >= 5", "1 == 1", "1 != 1",
          "2.0 == 2.0", "2.0 != 2.5", "int(2.9)", "int(-2.9)", "int(\"42\")", "int(\"-17\")", "int(\"abc\")", "int(9.3e18)", "int(1e19)",
          "double(3)", "double(-7)", "double(2.5)", "int(7)", "string(12)", "string(-5)", "string(\"x\")",
          "5 / 2 == 2", "(5 % 2) == 1 && 4 % 2 == 0", "1 + 1 == 2 ? 10 : 20", "2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2"]:
    v(e)
# 2. strings
for e in ['"abc" + "def"', '"" + ""', 'size("hello")', 'size("héllo")', 'size("日本語")', '"hello".size()', 'size("")',
          '"hello".contains("ell")', '"hello".contains("")', '"hello".contains("xyz")', '"hello".startsWith("he")', '"hello".startsWith("lo")',
          '"hello".endsWith("lo")', '"hello".endsWith("")', '"HeLLo World".lowerAscii()', '"ÀBC".lowerAscii()', '"abc" < "abd"', '"abc" < "ab"',
          '"a" <= "a"', '"b" > "a"', '"Z" < "a"', '"é" > "z"', '"abc" == "abc"', '"abc" != "ABC"', '"\\x41\\u00e9\\U0001F600"', "'single' + \"double\"",
          '"tab\\there"', '"quote\\"inside"', "'it\\'s'", '"back\\\\slash"', 'r"raw\\n"', "r'raw\\t'", '"\\101\\102"', '"\\a\\b\\f\\v" == "\\x07\\x08\\x0c\\x0b"',
          '"日本" + "語"', '"e\\u0301" == "\\u00e9"', '"a" + "b" + "c" + "d"', '"x".startsWith("xx")', '"".endsWith("a")', '"😀".size()',
          '"abc".contains("c") && "abc".startsWith("a")', '"CamelCase".lowerAscii().startsWith("camel")', '"mixed" in ["a", "mixed"]',
          '"k" in {"k": 1, "j": 2}', '"z" in {"k": 1}', '"a" + "b" == "ab"', '"payments" == "payments"']:
    v(e)
# 3. logic
for e in ["true && false", "true || false", "!true", "!!true", "!false && true", "true ? false : true", "false ? 1 : 2",
          "true && true && true && false", "false || false || true", "false && (1 / 0 == 1)", "(1 / 0 == 1) && false", "(1 / 0 == 1) || true",
          "true || (1 / 0 == 1)", "(1 / 0 == 1) && true", "(1 / 0 == 1) || false", "true ? 1 : 1 / 0", "false ? 1 / 0 : 2",
          "1 < 2 && 2 < 3", "1 < 2 || 2 > 3", "!(1 == 2)", "true == true", "true != false", "false < true", "true <= false", "true > false",
          "(true || false) && !(false || false)", "null == null", "null != null", "1 / 0 == 1 ? 1 : 2", "[1, 2].all(x, x > 0) && true",
          "!(true && (1 / 0 > 0))", "false && 'x'.size() > 0 || true"]:
    v(e)
# 4. lists and maps
for e in ["[1, 2, 3]", "[1, 2, 3][0]", "[1, 2, 3][2]", "[1, 2, 3][3]", "size([1, 2, 3])", "[1, 2, 3].size()", "size([])",
          "[1, 2] + [3, 4]", "[] + []", "1 in [1, 2]", "3 in [1, 2]", "[1, 2] == [1, 2]", "[1, 2] != [2, 1]", "[[1], [2, 3]][1][0]",
          "{\"a\": 1, \"b\": 2}", "{\"a\": 1}[\"a\"]", "{\"a\": 1}.a", "{\"a\": 1}[\"z\"]", "{\"a\": 1}.z", "size({\"a\": 1, \"b\": 2})",
          "{\"a\": 1} == {\"a\": 1}", "{\"a\": 1, \"b\": 2} == {\"b\": 2, \"a\": 1}", "{1: \"one\", 2: \"two\"}[2]", "{true: 1}[true]", "{}",
          "has({\"a\": 1}.a)", "has({\"a\": 1}.b)", "{\"a\": {\"b\": 5}}.a.b", "[1, 2, 3].all(x, x > 0)", "[1, 2, 3].all(x, x > 1)",
          "[1, 2, 3].exists(x, x > 2)", "[1, 2, 3].exists(x, x > 3)", "[1, 2, 3].exists_one(x, x > 2)", "[1, 2, 3].exists_one(x, x > 1)",
          "[].all(x, x > 0)", "[].exists(x, x > 0)", "[1, 0, 2].all(x, 10 / x > 1)", "[0, 1].exists(x, 10 / x == 10)", "[1, 0].all(x, 10 / x > 100)",
          "[\"a\", \"bb\"].all(s, size(s) < 3)", "[[1, 2], [3]].exists(l, l.exists(x, x == 3))", "[1, 2, 3].all(x, [1, 2, 3].exists(y, y == x))",
          "{\"a\": 1, \"b\": 2}.size()", "[1, 2][1] + [3][0]", "\"a\" in [1, \"a\"]", "[1, 2] + [] == [1, 2]", "[1.5, 2.5][1]",
          "{\"x\": [1, 2]}.x[1]", "[true, false].exists(b, b)", "[{\"k\": 1}][0].k"]:
    v(e)
# 5. times and durations
for e in ['timestamp("2026-11-26T10:00:00Z")', 'timestamp("2026-11-26T10:00:00+02:00")', 'timestamp("2026-11-26T10:00:00.123456Z")',
          'duration("1h")', 'duration("1h30m")', 'duration("90s")', 'duration("1.5h")', 'duration("-30m")', 'duration("250ms")', 'duration("100us")',
          'duration("2h45m30s")', 'duration("1x")', 'duration("")', 'timestamp("not a time")', 'timestamp("2026-13-01T00:00:00Z")',
          'timestamp("2026-11-26T10:00:00Z") + duration("1h")', 'duration("1h") + timestamp("2026-11-26T10:00:00Z")',
          'timestamp("2026-11-26T10:00:00Z") - duration("36h")', 'timestamp("2026-11-26T10:00:00Z") - timestamp("2026-11-25T10:00:00Z")',
          'duration("1h") + duration("30m")', 'duration("1h") - duration("2h")', 'duration("1h") > duration("59m")', 'duration("60m") == duration("1h")',
          'timestamp("2026-01-01T00:00:00Z") < timestamp("2026-01-01T00:00:01Z")', 'timestamp("2026-01-01T00:00:00Z") == timestamp("2026-01-01T01:00:00+01:00")',
          'int(timestamp("2026-01-01T00:00:00Z"))', 'int(timestamp("1969-12-31T23:59:59Z"))', 'duration("3h").getHours()', 'duration("90m").getHours()',
          'duration("90m").getMinutes()', 'duration("90s").getSeconds()', 'duration("1500ms").getMilliseconds()',
          'timestamp("2026-11-26T10:20:30Z").getFullYear()', 'timestamp("2026-11-26T10:20:30Z").getMonth()', 'timestamp("2026-11-26T10:20:30Z").getDate()',
          'timestamp("2026-11-26T10:20:30Z").getDayOfMonth()', 'timestamp("2026-11-26T10:20:30Z").getDayOfWeek()', 'timestamp("2026-11-26T10:20:30Z").getHours()',
          'timestamp("2026-11-26T10:20:30Z").getMinutes()', 'timestamp("2026-11-26T10:20:30Z").getSeconds()', 'timestamp("2024-02-29T23:00:00Z").getDate()',
          'timestamp("2000-03-01T00:00:00Z").getDayOfWeek()', 'timestamp("1900-01-01T00:00:00Z").getDayOfWeek()', 'timestamp("0001-01-01T00:00:00Z").getFullYear()',
          'timestamp("9999-12-31T23:59:59Z") + duration("1s")', 'timestamp("2026-11-26T10:00:00Z") + duration("-1h") < timestamp("2026-11-26T10:00:00Z")']:
    v(e)
# 6. addresses
for e in ['cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))', 'cidr("10.0.0.0/8").containsIP(ip("11.1.2.3"))', 'cidr("10.0.0.0/8").containsIP("10.9.9.9")',
          'cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', 'cidr("2001:db8::/32").containsIP(ip("2001:db9::1"))', 'cidr("10.0.0.0/8").containsIP(ip("::1"))',
          'ip("192.168.0.1").family()', 'ip("::1").family()', 'ip("127.0.0.1").isLoopback()', 'ip("::1").isLoopback()', 'ip("10.0.0.1").isLoopback()',
          'cidr("192.168.0.0/16").prefixLength()', 'cidr("10.0.0.0/8").containsCIDR(cidr("10.1.0.0/16"))', 'cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))',
          'ip("10.0.0.1") == ip("10.0.0.1")', 'ip("2001:db8::1") == ip("2001:DB8:0::1")', 'ip("10.0.0.1") != ip("10.0.0.2")', 'ip("not an ip")', 'ip("10.0.0.256")',
          'cidr("10.0.0.0")', 'cidr("10.0.0.0/33")', 'cidr("10.0.0.0/8").containsIP("bad")', 'ip(" 10.0.0.1")', 'cidr("0.0.0.0/0").containsIP(ip("8.8.8.8"))',
          'cidr("10.0.0.0/08")', '[cidr("10.0.0.0/8"), cidr("192.168.0.0/16")].exists(n, n.containsIP("192.168.4.4"))']:
    v(e)
EXAMPLE_RULES = [
    "event == 3305 && has(device.firstSeen) && now - device.firstSeen < duration(\"1h\")",
    "velocity.ipDevicesLastHour > 20 && velocity.deviceAccountsLastDay > 2",
    "event == 3305 && !has(device.attestation) && !account.startsWith(\"vip-\")",
    "[\"198.51.100.0/24\", \"203.0.113.0/24\"].exists(n, cidr(n).containsIP(client.address))",
    "device.known && has(device.startedFrom) && device.startedFrom != client.address && velocity.deviceEventsLastMinute > 5",
    "device.signals.proxy || device.signals.vpn",
    "has(token.age) && token.age > duration(\"4m\")",
    "has(client.userAgent) && [\"curl\", \"python-requests\", \"okhttp/2\"].exists(s, client.userAgent.lowerAscii().contains(s))",
    "device.attestationFailed && score >= 30",
    "(now.getHours() >= 1 && now.getHours() < 5) && velocity.accountDevicesLastDay > 1",
    "has(device.osPatchLevel) && device.osPatchLevel < 202301",
    "\"list.challenge\" in tags && score < 20"
]

# 7. risk facts
base = {"token": {"state": "fresh", "age": "12s"}, "event": 3301, "account": "shopper-17", "client": {"address": "203.0.113.7", "userAgent": "Shop/5.2 (iPhone)"},
        "device": {"known": True, "id": "dev-1", "firstSeen": "2026-11-26T09:30:00Z", "lastSeen": "2026-11-26T09:59:00Z", "platform": "ios",
                   "collectionMode": 0, "startedFrom": "203.0.113.7", "signals": {"jailbreak": False, "proxy": True}, "attestationFailed": False,
                   "appsDetected": []},
        "velocity": {"deviceEventsLastMinute": 2, "deviceAccountsLastDay": 3, "accountDevicesLastDay": 1, "ipDevicesLastHour": 40,
                     "addressAttestationsLastHour": 2, "networkAttestationsLastHour": 31, "accountAttestationsLastDay": 1},
        "lists": {"deny": False, "allow": False, "challenge": False}, "tags": ["network.ip_changed", "velocity.ip_devices_per_hour"], "score": 40,
        "now": "2026-11-26T10:00:00Z"}
unknown = json.loads(json.dumps(base)); unknown["device"] = {"known": False, "signals": {}, "attestationFailed": False, "appsDetected": []}; unknown["token"] = {"state": "forged"}
hardware = json.loads(json.dumps(base)); hardware["device"].update({"attestation": "appAttest", "securityLevel": "secureEnclave", "verifiedBoot": True, "osPatchLevel": 202410})
integrity = json.loads(json.dumps(base)); integrity["device"].update({"platform": "android", "playIntegrity": "device", "appRecognition": "PLAY_RECOGNIZED",
    "appLicensing": "UNLICENSED", "deviceActivity": "LEVEL_3", "appsDetected": ["KNOWN_INSTALLED", "UNKNOWN_CAPTURING"], "playProtect": "NO_ISSUES",
    "appVersionCode": 42, "playIntegrityAt": "2026-11-26T09:58:00Z"})
for facts in (base, unknown, hardware, integrity):
    for e in ['event == 3301 && has(device.firstSeen) && now - device.firstSeen < duration("1h")',
              'velocity.ipDevicesLastHour > 20 && velocity.deviceAccountsLastDay > 2',
              'cidr("203.0.113.0/24").containsIP(client.address)', 'token.state != "fresh"', 'has(token.age) && token.age > duration("10s")',
              '"velocity.ip_devices_per_hour" in tags', 'tags.exists(t, t.startsWith("network."))', 'score >= 40 ? "review" : "pass"',
              'device.known && "proxy" in device.signals && device.signals.proxy', 'has(device.signals.jailbreak) && device.signals.jailbreak',
              'device.platform == "ios"', 'has(device.platform) && device.platform == "android"', 'client.userAgent.lowerAscii().contains("iphone")',
              'has(device.attestation) ? device.attestation == "appAttest" : false', 'device.osPatchLevel < 202401', 'account.startsWith("shopper-")',
              'lists.deny || lists.challenge', 'size(tags) > 1 && !lists.allow', 'now.getHours() >= 22 || now.getHours() < 6',
              'device.known && device.startedFrom != client.address', 'device.firstSeen + duration("24h") > now', 'event in [3301, 3302] && score > 30',
              'has(device.playIntegrity) && device.playIntegrity in ["device", "strong"]', 'device.appsDetected.exists(a, a.startsWith("UNKNOWN_"))',
              'has(device.deviceActivity) && device.deviceActivity in ["LEVEL_3", "LEVEL_4"] && device.appLicensing != "LICENSED"',
              'velocity.networkAttestationsLastHour > 30 || velocity.accountAttestationsLastDay > 3', 'has(device.appVersionCode) && device.appVersionCode < 50',
              'has(device.playIntegrityAt) && now - device.playIntegrityAt < duration("5m")', 'device.playIntegrity == "strong"']:
        v(e, facts)
    # The example rules of docs/risk.md, as written there.
    for e in EXAMPLE_RULES:
        v(e, facts)
# 8. refusals
r("1 +", "syntax", "1:4"); r("(1 + 2", "syntax", "1:7"); r("1 + + 2", "syntax", "1:5"); r("a b", "syntax", "1:3", cel="error")
r('"unterminated', "syntax", "1:1"); r("'bad\\q'", "syntax", "1:5", why="cel-python keeps an unknown escape as written; cel-spec refuses it"); r("1u", "syntax", "1:1", cel="subset"); r('b"bytes"', "syntax", "1:1", cel="subset")
r("if", "syntax", "1:1"); r("1 = 2", "syntax", "1:3"); r("[1, 2", "syntax", "1:6"); r("{1: 2", "syntax", "1:6"); r("x.", "syntax", "1:3")
r("9223372036854775808", "syntax", "1:1"); r("0x8000000000000000", "syntax", "1:1"); r("0XfF", "syntax", "1:2"); r('"\\uD800"', "syntax", "1:2", why="cel-python accepts a surrogate code point; cel-spec refuses it"); r("1 ? 2", "syntax", "1:6")
r("has(x)", "syntax", "1:1", why="cel-python evaluates has() of a name; cel-spec's has() takes a field selection"); r("[1].all(1, true)", "syntax", "1:4"); r("1 + 1.0", "type", "1:3", cel="subset"); r('1 + "a"', "type", "1:3")
r("1 == 1.0", "type", "1:3", cel="subset"); r('"a" < 1', "type", "1:5"); r("!1", "type", "1:2"); r("1 && true", "type", "1:1", why="cel-python has no checker and takes 1 as true"); r("true ? 1 : 'a'", "type", "1:6", cel="subset")
r("size(1)", "type", "1:1"); r("[1][\"a\"]", "type", "1:4"); r('"abc"[0]', "type", "1:6", cel="subset"); r("1 in 2", "type", "1:3"); r('{[1]: 2}', "type", "1:2")
r("undefined_thing", "unknown_variable", "1:1"); r("device.nosuchfield", "unknown_variable", "1:7"); r("nosuch(1)", "unknown_function", "1:1")
r('"a".matches("a")', "unknown_function", "1:4", cel="subset"); r('"abc".upperAscii()', "unknown_function", "1:6", cel="subset"); r("1.size()", "syntax", "1:2")
r("[1, 2].map(x, x * 2)", "unknown_function", "1:7", why="map() builds a list; a rule decides"); r("device.known + 1", "type", "1:14"); r("event < \"3301\"", "type", "1:7")
r('duration(1)', "type", "1:1", cel="subset"); r("now + now", "type", "1:5"); r("tags.all(t, t)", "type", "1:13"); r("(" * 40 + "1" + ")" * 40, "limit", "1:33", cel="subset")
r("[" * 40 + "]" * 40, "limit", "1:33", cel="subset"); r("x" * 2001, "limit", "1:1", cel="subset"); r("!" * 50 + "true", "limit", "1:33", cel="subset")
r("-" * 50 + "1", "limit", "1:33", cel="subset"); r("1 // comment\n + ", "syntax", "2:4"); r("true &&\n  nosuch", "unknown_variable", "2:3")
r("string(true)", "type", "1:1", cel="subset"); r("int(duration(\"1h\"))", "type", "1:1", cel="subset"); r("while", "syntax", "1:1")
r("{\"a\": 1}.a.b", "type", "1:11"); r("ip(\"10.0.0.1\") < ip(\"10.0.0.2\")", "type", "1:16", why="the oracle's addresses are strings to cel-python, which orders them"); r("1 $ 2", "syntax", "1:3")
json.dump(C, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cel_corpus.json"), "w"), indent=1, ensure_ascii=False)
print(len(C), "entries")
