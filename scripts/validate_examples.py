#!/usr/bin/python3
"""Checks every examples/*.json against frontend/model.schema.json.

Usage: scripts/validate_examples.py [FILE.json ...]   (default: examples/*.json)

Needs python3-jsonschema (Debian) for the schema check; without it, the files
are only checked to be well-formed JSON and the script says so. Exits 1 if any
file fails.
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "frontend", "model.schema.json")


def main(argv):
    files = argv[1:] or sorted(glob.glob(os.path.join(ROOT, "examples", "*.json")))
    if not files:
        print("validate_examples: no examples found", file=sys.stderr)
        return 1
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
        print("validate_examples: python3-jsonschema is not installed; "
              "checking JSON syntax only (apt-get install python3-jsonschema)")

    with open(SCHEMA) as f:
        schema = json.load(f)
    validator = None
    if jsonschema is not None:
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)

    failed = 0
    for path in files:
        name = os.path.relpath(path, ROOT)
        try:
            with open(path) as f:
                model = json.load(f)
        except (OSError, ValueError) as e:
            print(f"FAIL {name}: {e}")
            failed += 1
            continue
        errors = list(validator.iter_errors(model)) if validator else []
        if errors:
            failed += 1
            for e in sorted(errors, key=lambda e: list(e.absolute_path)):
                where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
                print(f"FAIL {name}: {where}: {e.message}")
        else:
            print(f"ok   {name}")
    print(f"{len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
