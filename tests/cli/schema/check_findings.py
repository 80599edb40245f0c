#!/usr/bin/env python3
"""usage: check_findings.py SCHEMA REPORT.json [MIN_FINDINGS]

Every finding in a permitcheck JSON report (each object in a list under "violations",
"deviations" or "findings", at any depth) must validate against the finding schema; at least
MIN_FINDINGS (default 1) must be there, so a report that lost its findings cannot pass.
Prints the count and exits 0, or names the first bad finding and exits 1."""
import json
import sys

import jsonschema

KEYS = ("violations", "deviations", "findings")


def findings(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in KEYS and isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        yield item
            yield from findings(value)
    elif isinstance(node, list):
        for item in node:
            yield from findings(item)


def main():
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    report = json.load(open(sys.argv[2]))
    least = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    count = 0
    for f in findings(report):
        errors = sorted(validator.iter_errors(f), key=lambda e: e.path)
        if errors:
            print(f"bad finding {json.dumps(f)}: {errors[0].message}")
            return 1
        count += 1
    print(f"{count} findings valid")
    return 0 if count >= least else 1


if __name__ == "__main__":
    sys.exit(main())
