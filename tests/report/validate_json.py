#!/usr/bin/env python3
"""validate_json.py SCHEMA DOCUMENT... - checks JSON documents against a JSON
Schema, standard library only (no jsonschema package, nothing from pip).

It knows the subset of JSON Schema that docs/trace.schema.json uses: type
(a name or a list of names), properties, required, items (one schema for
every item), enum, additionalProperties (false or a schema) and $ref to a
local "#/..." pointer; $schema, $id, title, description and $defs are
annotations.  Any other keyword in the schema is an error, so the schema
cannot come to rely on something this checker ignores.

Prints "ok: FILE" per valid document, or each problem as
"FILE: PATH: what"; exits 1 when any document is invalid, 2 on bad usage.
"""
import json
import sys

KNOWN = {"type", "properties", "required", "items", "enum", "additionalProperties", "$ref"}
ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}
MAX_PROBLEMS = 20


def type_ok(value, name):
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":  # 3.0 is an integer in JSON Schema, True is not
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    raise ValueError("unknown type name %r in the schema" % name)


def resolve(root, ref):
    if not ref.startswith("#"):
        raise ValueError("only local $ref (#/...) is supported, got %r" % ref)
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise ValueError("$ref %r does not resolve" % ref)
        node = node[part]
    return node


def check_schema(schema, path="#"):
    """raises ValueError on a keyword this checker does not know"""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ValueError("%s: a schema must be an object or a boolean" % path)
    for key in schema:
        if key not in KNOWN and key not in ANNOTATIONS:
            raise ValueError("%s: keyword %r is not supported by this checker" % (path, key))
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, path + "/properties/" + name)
    for name, sub in schema.get("$defs", {}).items():
        check_schema(sub, path + "/$defs/" + name)
    if "items" in schema:
        check_schema(schema["items"], path + "/items")
    if isinstance(schema.get("additionalProperties"), dict):
        check_schema(schema["additionalProperties"], path + "/additionalProperties")


def validate(root, schema, value, path, problems):
    if len(problems) >= MAX_PROBLEMS:
        return
    if schema is True:
        return
    if schema is False:
        problems.append("%s: no value is allowed here" % path)
        return
    if "$ref" in schema:
        validate(root, resolve(root, schema["$ref"]), value, path, problems)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_ok(value, n) for n in names):
            problems.append("%s: expected %s, got %s" % (path, " or ".join(names), json.dumps(value)[:60]))
            return
    if "enum" in schema and not any(value == e and type(value) is type(e) for e in schema["enum"]):
        problems.append("%s: %s is not one of %s" % (path, json.dumps(value)[:60], json.dumps(schema["enum"])))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                problems.append("%s: required property %r is missing" % (path, name))
        for name, sub in value.items():
            if name in props:
                validate(root, props[name], sub, path + "/" + name, problems)
            elif "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                if extra is False:
                    problems.append("%s: property %r is not allowed" % (path, name))
                else:
                    validate(root, extra, sub, path + "/" + name, problems)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(root, schema["items"], item, "%s/%d" % (path, i), problems)


def reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            schema = json.load(f)
        check_schema(schema)
    except (OSError, ValueError) as e:
        print("%s: bad schema: %s" % (argv[1], e), file=sys.stderr)
        return 2
    bad = False
    for doc in argv[2:]:
        problems = []
        try:
            with open(doc, encoding="utf-8") as f:
                value = json.load(f, parse_constant=reject_constant)
            validate(schema, schema, value, "#", problems)
        except (OSError, ValueError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            problems.append("#: not JSON: %s" % e)
        for p in problems:
            print("%s: %s" % (doc, p))
        if problems:
            bad = True
        else:
            print("ok: %s" % doc)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
