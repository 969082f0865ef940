"""Checks that the core's conformance vectors and docs/openapi.yaml agree.

Every request that tests/conformance/requests.json says a client sends (the
vectors with `expect`) must be a valid request by the document: a documented
method at a documented path, path parameters, query parameters and body valid
by their schemas, every required parameter and body present, and the key sent
in the query parameter of the operation's security scheme.

Two kinds of vector are not requests by the document, and are counted apart:
- `expect_error` vectors: the client refuses to build them, nothing is sent;
- `raw` vectors to a path the document does not describe: `raw` is the
  client's way to call operations that the contract names without a shape
  (such as Create Chat Room), so no document can describe them. A `raw` vector
  to a documented path is checked like any other.

usage: python check_vectors.py docs/openapi.yaml tests/conformance/requests.json
Exits 1 when a request is not valid by the document; prints one line per vector.
"""

import json
import re
import sys
import urllib.parse

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOC_URI = "urn:roomchat:openapi"

# The operations authenticated by the public key (`publicKey`); every other one
# sends the private key (`auth`), and `raw` says which in its params.
PUBLIC_KEY_OPERATIONS = {"validate_access_token": "public_key"}


def pointer(*parts):
    """A JSON pointer into the document, its parts escaped."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class Document:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        resource = Resource.from_contents(self.doc, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(DOC_URI, resource)

    def resolve(self, node):
        """Follows a local `$ref` (parameters, request bodies)."""
        while isinstance(node, dict) and "$ref" in node:
            target = self.doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def errors(self, schema_pointer, value):
        """The schema errors of `value` against the schema at `schema_pointer`."""
        validator = Draft202012Validator(
            {"$ref": f"{DOC_URI}#{schema_pointer}"}, registry=self.registry
        )
        return [e.message for e in validator.iter_errors(value)]

    def find(self, method, path):
        """The operation for `method` and a percent-encoded `path`, with its path parameters."""
        segments = path.split("/")
        for template, item in self.doc["paths"].items():
            parts = template.split("/")
            if len(parts) != len(segments) or method.lower() not in item:
                continue
            params = {}
            for part, segment in zip(parts, segments):
                name = re.fullmatch(r"\{(.+)\}", part)
                if name:
                    params[name.group(1)] = urllib.parse.unquote(segment)
                elif part != segment:
                    break
            else:
                return template, method.lower(), params
        return None


def coerce(text, schema):
    """A query value (text on the wire) as the type its schema wants, when it reads as one."""
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"[0-9]+", text):
        return int(text)
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    return text


def check(document, vector):
    """The problems of one vector's request by the document (empty: valid)."""
    expect = vector["expect"]
    found = document.find(expect["method"], expect["path"])
    if found is None:
        return None
    template, method, path_params = found
    operation = document.doc["paths"][template][method]
    base = ("paths", template, method)
    problems = []

    parameters = [document.resolve(p) for p in operation.get("parameters", [])]
    by_place = {(p["in"], p["name"]): p for p in parameters}
    # Schema pointers of each parameter, whether inline or a $ref.
    def schema_pointer(place, name):
        for n, raw in enumerate(operation.get("parameters", [])):
            if "$ref" in raw:
                resolved = document.resolve(raw)
                if (resolved["in"], resolved["name"]) == (place, name):
                    ref = raw["$ref"].lstrip("#")
                    return ref + "/schema"
            elif (raw["in"], raw["name"]) == (place, name):
                return pointer(*base, "parameters", n, "schema")
        return None

    for name, value in path_params.items():
        if ("path", name) not in by_place:
            problems.append(f"path parameter {name} is not documented")
            continue
        for error in document.errors(schema_pointer("path", name), value):
            problems.append(f"path parameter {name}={value!r}: {error}")

    # The key goes in the query parameter of the operation's security scheme.
    security = operation.get("security", document.doc.get("security", []))
    schemes = {name for requirement in security for name in requirement}
    if vector["operation"] == "raw":
        key_kind = vector["params"].get("auth", "private_key")
    else:
        key_kind = PUBLIC_KEY_OPERATIONS.get(vector["operation"], "private_key")
    wanted = {"private_key": "auth", "public_key": "publicKey", "none": None}[key_kind]
    if wanted is not None and wanted not in schemes:
        problems.append(f"sends its key as {wanted}, but the operation's security is {sorted(schemes)}")
    if wanted is None and schemes:
        problems.append(f"sends no key, but the operation requires {sorted(schemes)}")

    sent = {}
    for name, value in expect["query"]:
        if name in sent:
            problems.append(f"query parameter {name} is sent twice")
        sent[name] = value
        if ("query", name) not in by_place:
            problems.append(f"query parameter {name} is not documented")
            continue
        parameter = by_place[("query", name)]
        typed = coerce(value, parameter.get("schema", {}))
        for error in document.errors(schema_pointer("query", name), typed):
            problems.append(f"query parameter {name}={value!r}: {error}")
    for (place, name), parameter in by_place.items():
        if place == "query" and parameter.get("required") and name not in sent:
            problems.append(f"required query parameter {name} is missing")

    body = expect.get("body")
    request_body = document.resolve(operation.get("requestBody"))
    if request_body is None:
        if body is not None:
            problems.append("sends a body, but the operation documents none")
    elif body is None:
        if request_body.get("required"):
            problems.append("sends no body, but the operation requires one")
    else:
        content = request_body.get("content", {})
        if "application/json" not in content:
            problems.append("sends JSON, but the operation documents no application/json body")
        else:
            at = pointer(*base, "requestBody", "content", "application/json", "schema")
            for error in document.errors(at, body):
                problems.append(f"body {json.dumps(body)}: {error}")
    return problems


def main(doc_path, vectors_path):
    document = Document(doc_path)
    with open(vectors_path, encoding="utf-8") as f:
        vectors = json.load(f)
    valid = refused = outside = 0
    failures = []
    for vector in vectors:
        name = vector["name"]
        if "expect" not in vector:
            refused += 1
            print(f"  not sent  {name} (the client refuses it: {vector.get('expect_error')})")
            continue
        problems = check(document, vector)
        expect = vector["expect"]
        if problems is None:
            if vector["operation"] == "raw":
                outside += 1
                print(f"  outside   {name}: {expect['method']} {expect['path']} (raw: an operation the contract names without a shape)")
            else:
                failures.append(name)
                print(f"  INVALID   {name}: {expect['method']} {expect['path']} is not an operation of the document")
        elif problems:
            failures.append(name)
            print(f"  INVALID   {name}:")
            for problem in problems:
                print(f"              {problem}")
        else:
            valid += 1
            print(f"  valid     {name}")
    print(
        f"conformance vectors vs {doc_path}: {valid} valid requests, {len(failures)} invalid, "
        f"{refused} refused by the client (not sent), {outside} raw calls outside the document"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
