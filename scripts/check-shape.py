#!/usr/bin/env python3
"""The code's shape, as docs/architecture.md states it: every module of Sources/ has the same capability
folders, each folder's first file saying in two lines what the capability is and which seed it serves;
no Swift file over 300 lines; no function or initializer over 60 lines unless a comment within
the three lines above its declaration says why, in words that contain "60 lines" (the file and
function bounds hold in client/Sources too, the generated API aside); every type and
member that docs/architecture.md's walk of a risk query names in backticks exists in the code.

    scripts/check-shape.py            checks Sources/, prints each breach, exits 1 on any
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_LINES = 300
MAX_FUNCTION_LINES = 60
# Every module that holds capability code has these folders (a module holds only those it serves).
CAPABILITIES = {"Apps", "DeviceRisk", "Attestation", "Signatures", "Captcha", "STS", "Admin", "Health", "Console"}
# Folders beside the capabilities: what every capability shares within its module.
SHARED = {"Common", "HTTP", "Database", "Configuration", "Migrations", "Retention"}
DECLARATION = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|static|override|"
                         r"mutating|nonisolated|final|convenience|required|class)\s+)*(?:func\s+[^\s(<]+|init[?!]?)\s*[(<]")


def code_only(text):
    """The text with comments and string literals blanked (newlines kept), so that braces count."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text.startswith('"""', i) or re.match(r'#+"""', text[i:i + 8]):
            hashes = len(text[i:]) - len(text[i:].lstrip("#"))
            closing = '"""' + "#" * hashes
            end = text.find(closing, i + hashes + 3)
            end = n if end < 0 else end + len(closing)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text[i] == '"' or re.match(r'#+"', text[i:i + 6]):
            hashes = len(text[i:]) - len(text[i:].lstrip("#"))
            closing = '"' + "#" * hashes
            j = i + hashes + 1
            depth = 0
            while j < n:
                if text[j] == "\\" and not hashes:
                    if text.startswith("\\(", j):
                        depth += 1
                        j += 2
                        continue
                    j += 2
                    continue
                if depth and text[j] == ")":
                    depth -= 1
                elif depth and text[j] == "(":
                    depth += 1
                elif not depth and text.startswith(closing, j):
                    j += len(closing)
                    break
                elif text[j] == "\n":
                    break
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def long_functions(path):
    with open(path) as handle:
        text = handle.read()
    lines = text.split("\n")
    code = code_only(text).split("\n")
    found = []
    for number, line in enumerate(code):
        if not DECLARATION.match(line):
            continue
        depth, opened, end = 0, False, None
        for at in range(number, len(code)):
            for character in code[at]:
                if character == "{":
                    depth += 1
                    opened = True
                elif character == "}":
                    depth -= 1
            if opened and depth <= 0:
                end = at
                break
            if not opened and at > number and code[at].strip() == "" and code[at - 1].rstrip().endswith(")"):
                break  # a protocol requirement: no body
        if end is None or end - number + 1 <= MAX_FUNCTION_LINES:
            continue
        above = " ".join(lines[max(0, number - 3):number])
        if "60 lines" not in above:
            found.append((number + 1, end - number + 1, line.strip()[:80]))
    return found


# A name in backticks: a type (`RiskEngine`), a member of one (`RiskEngine.decide`), a generated API
# type (`Components.Schemas.RiskQuery`) or a function called (`recordRiskDecision(query)`). Anything
# else in backticks (paths, SQL, settings) is not a name and is not checked.
WALK_NAME = re.compile(r"^(?:([A-Z][A-Za-z0-9]*)((?:\.[A-Za-z][A-Za-z0-9]*)*)|([a-z][A-Za-z0-9]*)\([^`]*\))$")


def walk_problems():
    """The names docs/architecture.md's walk of a risk query gives that the code does not declare."""
    with open(os.path.join(ROOT, "docs", "architecture.md")) as handle:
        doc = handle.read()
    start = doc.index("## The walk of a risk query")
    end = doc.find("\n## ", start + 1)
    walk = doc[start:end if end > 0 else len(doc)]
    code = []
    for top in ("Sources", os.path.join("client", "Sources")):
        if top != "Sources":
            server_code = "\n".join(code)
        for directory, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith(".swift"):
                    with open(os.path.join(directory, name)) as handle:
                        code.append(handle.read())
    code = "\n".join(code)
    with open(os.path.join(ROOT, "openapi.yaml")) as handle:
        spec = handle.read()

    def declared(name, kinds):
        return re.search(r"\b(?:%s)\s+%s\b" % (kinds, re.escape(name)), code) is not None

    problems = []
    for text in re.findall(r"`([^`]+)`", walk):
        match = WALK_NAME.match(text)
        if not match:
            continue
        if match.group(3):
            if not declared(match.group(3), "func"):
                problems.append("docs/architecture.md: the walk names `%s`, but no function %s is declared" % (text, match.group(3)))
            continue
        head, members = match.group(1), [m for m in match.group(2).split(".") if m]
        if head == "Components" and members[:1] == ["Schemas"]:
            if len(members) != 2 or not re.search(r"^    %s:$" % re.escape(members[1]), spec, re.M):
                problems.append("docs/architecture.md: the walk names `%s`, which openapi.yaml has no schema for" % text)
            elif text not in server_code:
                problems.append("docs/architecture.md: the walk names `%s`, which the server's code does not use" % text)
            continue
        if not declared(head, "struct|class|enum|protocol|actor|typealias"):
            problems.append("docs/architecture.md: the walk names `%s`, but no type %s is declared" % (text, head))
        for member in members:
            kinds = "struct|class|enum|protocol|actor|typealias" if member[0].isupper() else "func|var|let|case"
            if not declared(member, kinds):
                problems.append("docs/architecture.md: the walk names `%s`, but nothing declares %s" % (text, member))
    return problems


def main():
    problems = walk_problems()
    sources = os.path.join(ROOT, "Sources")
    for module in sorted(os.listdir(sources)):
        folders = {name for name in os.listdir(os.path.join(sources, module)) if os.path.isdir(os.path.join(sources, module, name))}
        unknown = folders - CAPABILITIES - SHARED
        if unknown:
            problems.append("Sources/%s: folders that are neither a capability nor shared: %s" % (module, ", ".join(sorted(unknown))))
        for folder in sorted(folders & CAPABILITIES):
            files = sorted(name for name in os.listdir(os.path.join(sources, module, folder)) if name.endswith(".swift"))
            if files:
                with open(os.path.join(sources, module, folder, files[0])) as handle:
                    first = handle.readline()
                if not first.startswith("// %s:" % folder):
                    problems.append("Sources/%s/%s/%s: the folder's first file opens with `// %s: what it is` and a second line naming the seed it serves"
                                    % (module, folder, files[0], folder))
        loose = [name for name in os.listdir(os.path.join(sources, module)) if name.endswith(".swift")]
        if folders and len(loose) > 3:
            problems.append("Sources/%s: %d Swift files outside the capability folders (at most the module's entry points)" % (module, len(loose)))
    # The client package (the app SDK and the generated API) keeps the same bounds on its own files.
    client = os.path.join(ROOT, "client", "Sources")
    walked = [entry for top in (sources, client) for entry in os.walk(top) if "GatehouseAPI" not in entry[0].split(os.sep)]
    for directory, _, names in walked:
        for name in sorted(names):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, ROOT)
            with open(path) as handle:
                count = sum(1 for _ in handle)
            if count > MAX_FILE_LINES:
                problems.append("%s: %d lines (at most %d)" % (relative, count, MAX_FILE_LINES))
            for line, length, declaration in long_functions(path):
                problems.append("%s:%d: %d lines in `%s` (at most %d unless a comment says why)"
                                % (relative, line, length, declaration, MAX_FUNCTION_LINES))
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print("shape: capability folders, files and functions within bounds")


if __name__ == "__main__":
    main()
