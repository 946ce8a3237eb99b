#!/usr/bin/env python3
"""Checks deploy/ and the configuration reference against the code, so that neither can drift:

- every YAML file under deploy/ parses;
- the GATEHOUSE_* variables the code reads are exactly those of docs/configuration.md's tables;
- every GATEHOUSE_* variable deploy/ uses is in the reference, and every server setting of the
  reference appears in deploy/ (the env examples list them all);
- the flags of `gatehouse serve --help` are exactly the reference's flags;
- the shipped nginx files pass `nginx -t` (rendered with local upstreams), when nginx is installed;
- the systemd unit passes `systemd-analyze verify` and scores at most 2.0 in `systemd-analyze
  security`, when systemd-analyze is installed.

    scripts/check-deploy.py --binary .build/debug/gatehouse
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIABLE = re.compile(r"\bGATEHOUSE_[A-Z0-9_]*[A-Z0-9]\b")
failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        failures.append(message)


def files(folder, suffixes):
    for directory, _, names in os.walk(os.path.join(ROOT, folder)):
        for name in sorted(names):
            if name.endswith(suffixes):
                yield os.path.join(directory, name)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def reference():
    """The reference's tables: {section heading: {variable: flags}}."""
    sections, current = {}, None
    for line in read(os.path.join(ROOT, "docs", "configuration.md")).splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
        elif line.startswith("| `GATEHOUSE_") and current:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            sections.setdefault(current, {})[cells[0].strip("`")] = set(re.findall(r"--[a-z][a-z-]*", cells[1]))
    return sections


def yaml_parses():
    for path in files("deploy", (".yaml", ".yml")):
        try:
            documents = [document for document in yaml.safe_load_all(read(path)) if document is not None]
            check(len(documents) > 0, "%s parses (%d document(s))" % (os.path.relpath(path, ROOT), len(documents)))
        except yaml.YAMLError as error:
            check(False, "%s parses: %s" % (os.path.relpath(path, ROOT), error))


def variables_match(sections):
    server = sections.get("Server settings", {})
    tool = sections.get("Command-line tool", {})
    deploy_only = sections.get("Deployment files", {})
    check(len(server) > 10, "the reference has a 'Server settings' table (%d variables)" % len(server))
    in_code = set()
    for path in files("Sources", (".swift",)):
        in_code |= set(VARIABLE.findall(read(path)))
    documented = set(server) | set(tool)
    check(in_code == documented, "the code reads exactly the documented variables"
          + ("" if in_code == documented else ": undocumented %s, documented but unread %s"
             % (sorted(in_code - documented), sorted(documented - in_code))))
    in_deploy = set()
    for path in files("deploy", ("",)):
        in_deploy |= set(VARIABLE.findall(read(path)))
    unknown = in_deploy - documented - set(deploy_only)
    check(not unknown, "every variable deploy/ uses is in the reference" + (": %s" % sorted(unknown) if unknown else ""))
    missing = set(server) - in_deploy
    check(not missing, "every server setting appears in deploy/" + (": missing %s" % sorted(missing) if missing else ""))
    unused = set(deploy_only) - in_deploy
    check(not unused, "every deployment-file variable is used in deploy/" + (": %s" % sorted(unused) if unused else ""))
    return server


def flags_match(server, binary):
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    in_help = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text)) - {"--help"}
    documented = set().union(*server.values())
    check(in_help == documented, "`gatehouse serve --help` flags equal the reference's (%s)" % ", ".join(sorted(in_help))
          + ("" if in_help == documented else ": help only %s, reference only %s"
             % (sorted(in_help - documented), sorted(documented - in_help))))


def nginx_configs():
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if not nginx:
        print("skip  nginx is not installed")
        return
    with tempfile.TemporaryDirectory() as work:
        template = read(os.path.join(ROOT, "deploy", "nginx", "compose.conf.template"))
        rendered = (template.replace("${GATEHOUSE_GATE_CREDENTIALS}", "Y2hlY2s6Y2hlY2s=")
                    .replace("gatehouse-1:8080", "127.0.0.1:18081").replace("gatehouse-2:8080", "127.0.0.1:18082")
                    .replace("app-api:80", "127.0.0.1:18083")
                    .replace("/etc/nginx/gatehouse/", os.path.join(ROOT, "deploy", "nginx") + "/")
                    .replace("listen 8080;", "listen 127.0.0.1:18084;").replace("listen 8000;", "listen 127.0.0.1:18085;"))
        front = read(os.path.join(ROOT, "deploy", "nginx", "gatehouse-front.conf"))
        front = (front.replace("listen 443 ssl;", "listen 127.0.0.1:18086;")
                 .replace("include gatehouse-proxy.conf;", "include %s/deploy/nginx/gatehouse-proxy.conf;" % ROOT))
        front = "\n".join(line for line in front.splitlines() if "ssl_certificate" not in line)
        for name, server in (("compose.conf.template", rendered), ("gatehouse-front.conf", front)):
            conf = os.path.join(work, name + ".nginx.conf")
            with open(conf, "w", encoding="utf-8") as handle:
                handle.write("pid %s/nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\naccess_log off;\n%s\n}\n" % (work, server))
            result = subprocess.run([nginx, "-t", "-q", "-p", work, "-c", conf], capture_output=True, text=True)
            check(result.returncode == 0, "nginx -t accepts deploy/nginx/%s (with the gate and proxy includes)%s"
                  % (name, "" if result.returncode == 0 else ": " + result.stderr.strip()))


def systemd_unit(binary):
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print("skip  systemd-analyze is not installed")
        return
    with tempfile.TemporaryDirectory() as work:
        # verify insists that ExecStart's program exists: point it at the built one.
        unit = read(os.path.join(ROOT, "deploy", "systemd", "gatehouse.service"))
        path = os.path.join(work, "gatehouse.service")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(unit.replace("/usr/local/bin/gatehouse", os.path.abspath(binary)))
        result = subprocess.run([analyze, "verify", path], capture_output=True, text=True)
        check(result.returncode == 0 and not result.stderr.strip(),
              "systemd-analyze verify accepts deploy/systemd/gatehouse.service" + ("" if result.returncode == 0 else ": " + result.stderr.strip()))
        result = subprocess.run([analyze, "security", "--offline=yes", "--threshold=20", path], capture_output=True, text=True)
        score = re.search(r"Overall exposure level for gatehouse.service: ([0-9.]+)", result.stdout)
        check(score is not None and float(score.group(1)) <= 2.0,
              "systemd-analyze security rates the unit's exposure %s (at most 2.0)" % (score.group(1) if score else "?"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="the built gatehouse executable")
    arguments = parser.parse_args()
    yaml_parses()
    server = variables_match(reference())
    flags_match(server, arguments.binary)
    nginx_configs()
    systemd_unit(arguments.binary)
    if failures:
        print("\n%d check(s) failed" % len(failures))
        sys.exit(1)
    print("\nall deploy checks passed")


if __name__ == "__main__":
    main()
