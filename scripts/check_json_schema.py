#!/usr/bin/python3
"""Check a JSON document against one of Loom's JSON schemas (docs/schema/).

usage: check_json_schema.py SCHEMA.json [DOC.json|-]

Reads DOC (default: stdin) and exits 0 when it satisfies SCHEMA, 1 with one
line per violation (its JSON path and the problem) when it does not, 2 on a
usage error or a schema that uses a keyword this checker does not know.

Only Python's standard library is used, so the check runs wherever the
tests do. It implements the part of JSON Schema (draft 2020-12) the schemas
in docs/schema/ use: type, properties, required, additionalProperties,
items, enum, minimum, minItems and $ref to "#/$defs/NAME". A schema that uses
any other keyword is refused rather than half checked.
"""

import json
import sys

# Keywords that only document.
ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment", "$defs"}
CHECKED = {"type", "properties", "required", "additionalProperties", "items",
           "enum", "minimum", "minItems", "$ref"}

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or
    (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


class SchemaError(Exception):
    """The schema itself is outside what this checker implements."""


def check(value, schema, root, path, errors):
    """Appends to `errors` each way `value` (at `path`) violates `schema`."""
    if schema is True:
        return
    if schema is False:
        errors.append(f"{path}: no value is allowed here")
        return
    unknown = set(schema) - ANNOTATIONS - CHECKED
    if unknown:
        raise SchemaError(f"{path}: unsupported keyword(s) {sorted(unknown)}")
    if "$ref" in schema:
        ref = schema["$ref"]
        prefix = "#/$defs/"
        if not ref.startswith(prefix) or ref[len(prefix):] not in root.get("$defs", {}):
            raise SchemaError(f"{path}: unresolvable $ref '{ref}'")
        check(value, root["$defs"][ref[len(prefix):]], root, path, errors)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        for t in types:
            if t not in TYPES:
                raise SchemaError(f"{path}: unknown type '{t}'")
        if not any(TYPES[t](value) for t in types):
            errors.append(f"{path}: expected {' or '.join(types)}, got {json.dumps(value)[:60]}")
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {json.dumps(value)} is not one of {schema['enum']}")
    if "minimum" in schema and TYPES["number"](value) and value < schema["minimum"]:
        errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required key '{key}'")
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                check(v, props[key], root, f"{path}.{key}", errors)
            elif extra is False:
                errors.append(f"{path}: unexpected key '{key}'")
            elif isinstance(extra, dict):
                check(v, extra, root, f"{path}.{key}", errors)
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path}: {len(value)} items, fewer than {schema['minItems']}")
        if "items" in schema:
            for i, v in enumerate(value):
                check(v, schema["items"], root, f"{path}[{i}]", errors)


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_json_schema: {argv[1]}: {e}", file=sys.stderr)
        return 2
    name = argv[2] if len(argv) == 3 else "-"
    try:
        text = sys.stdin.read() if name == "-" else open(name).read()
        doc = json.loads(text)
    except (OSError, ValueError) as e:
        print(f"check_json_schema: {name}: not JSON: {e}", file=sys.stderr)
        return 1
    errors = []
    try:
        check(doc, schema, schema, "$", errors)
    except SchemaError as e:
        print(f"check_json_schema: {argv[1]}: {e}", file=sys.stderr)
        return 2
    for e in errors:
        print(f"check_json_schema: {name}: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
