#!/usr/bin/env python3
"""Summarises a build's compile times (docs/build-times.md).

  ci/build-times.py BUILD_DIR [TOP]

reads BUILD_DIR/tu-times.log (written by the ci/time-compile launcher: user s, system s, wall s,
max RSS KiB, object per compile) and BUILD_DIR/.ninja_log (every step's wall time, links too),
and prints Markdown: the TOP (default 20) translation units by CPU seconds, CPU per target, and
the totals.
"""
import collections
import os
import re
import sys


def target_of(obj):
    m = re.search(r"CMakeFiles/([^/]+)\.dir/", obj)
    return m.group(1) if m else obj


def main():
    build = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    tus = {}
    with open(os.path.join(build, "tu-times.log")) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 5 or not re.match(r"^[0-9.]+$", parts[0]):
                continue  # /usr/bin/time notes (e.g. "Command exited with non-zero status")
            user, system, wall, rss = map(float, parts[:4])
            tus[parts[4]] = (user + system, wall, rss / 1024)
    # One ninja step can have several outputs (a line each, same start and end): count it once.
    links = {}
    with open(os.path.join(build, ".ninja_log")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _, out, _ = line.rstrip("\n").split("\t")
            if not out.endswith((".o", ".gch")):
                links[(start, end)] = (int(end) - int(start)) / 1000
    cpu = sum(t[0] for t in tus.values())
    wall = sum(t[1] for t in tus.values())
    print(f"{len(tus)} compiles: {cpu:.0f} CPU s, {wall:.0f} s of compile wall time;"
          f" other steps (links, archives, test discovery): {sum(links.values()):.0f} s wall")
    print()
    print(f"| translation unit | CPU s | wall s | peak MiB |")
    print(f"|---|---:|---:|---:|")
    for obj, (c, w, r) in sorted(tus.items(), key=lambda kv: -kv[1][0])[:top]:
        name = re.sub(r"^.*CMakeFiles/[^/]+\.dir/", "", obj)
        print(f"| {target_of(obj)}: {name} | {c:.1f} | {w:.1f} | {r:.0f} |")
    print()
    per = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for obj, (c, w, _) in tus.items():
        p = per[target_of(obj)]
        p[0] += 1
        p[1] += c
        p[2] += w
    print("| target | compiles | CPU s | share |")
    print("|---|---:|---:|---:|")
    for t, (n, c, w) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        print(f"| {t} | {n} | {c:.0f} | {100 * c / cpu:.0f}% |")


if __name__ == "__main__":
    main()
