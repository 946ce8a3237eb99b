"""Turns ordo-one/benchmark's markdown output (nanoseconds) into one table row per benchmark and
writes it into docs/PERFORMANCE.md between the bench/micro/run markers.

    python3 report.py BENCHMARK_OUTPUT docs/PERFORMANCE.md
"""

import datetime
import platform
import re
import subprocess
import sys

BEGIN = "<!-- bench/micro/run writes from here -->"
END = "<!-- bench/micro/run writes to here -->"


def parse(text):
    """{benchmark: {metric: [p0, p25, p50, p75, p90, p99, p100]}} from the markdown tables."""
    results, current = {}, None
    for line in text.splitlines():
        heading = re.match(r"^### (.+)$", line)
        if heading:
            current = results.setdefault(heading.group(1).strip(), {})
            continue
        row = re.match(r"^\| (Malloc \(total\)|Time \(wall clock\) \(ns\)) \*? *\|(.+)\|$", line)
        if current is not None and row:
            current[row.group(1)] = [int(float(cell)) for cell in row.group(2).split("|")[:7]]
    return results


def table(results):
    lines = [
        "| operation | p50 | p99 | per second at p50 | allocations |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, metrics in sorted(results.items()):
        wall = metrics["Time (wall clock) (ns)"]
        allocations = metrics["Malloc (total)"][2]
        lines.append(f"| {name} | {micro(wall[2])} | {micro(wall[5])} | {1e9 / wall[2]:,.0f} | {allocations} |")
    return "\n".join(lines)


def micro(nanoseconds):
    # A policy rule takes a fraction of a microsecond: nanoseconds say how much.
    return f"{nanoseconds} ns" if nanoseconds < 1000 else f"{nanoseconds / 1000:.1f} µs"


def main():
    source, document = sys.argv[1], sys.argv[2]
    results = parse(open(source, encoding="utf-8").read())
    if not results:
        sys.exit("no benchmark results in the output")
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    section = "\n".join(
        [
            BEGIN,
            f"Measured by `bench/micro/run` on {datetime.date.today()}: {platform.processor() or platform.machine()}, "
            f"{platform.platform()}; {swift}; release build, ordo-one/benchmark 1.38.1 with its malloc interposer. "
            "Time is wall clock per operation (one thread, nothing else of Gatehouse running); allocations are "
            "`malloc` calls per operation.",
            "",
            table(results),
            END,
        ]
    )
    text = open(document, encoding="utf-8").read()
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) :]
    else:
        sys.exit(f"{document} has no {BEGIN} ... {END} section to write into")
    with open(document, "w", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":
    main()
