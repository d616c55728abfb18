"""Validates real responses of the service against its OpenAPI 3.1 document (Debian's python3-jsonschema and
python3-yaml).

Usage: openapi_validate.py OPENAPI.yaml EXCHANGES.json

EXCHANGES.json is a list of {"path", "status", "contentType", "body"} (and "events": [{"name", "data"}] for a
change stream), one per request the tests made. Each must match a path of the document, a status documented for
it, a media type documented for that status, and a JSON body or event data must validate against its schema.
Every operation of the document must have been exercised. Exits 0 when all holds; otherwise prints each
failure and exits 1.
"""
import json
import re
import sys

import yaml
from jsonschema import Draft202012Validator

document = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
exchanges = json.load(open(sys.argv[2], encoding="utf-8"))
failures = []


def resolve(node):
    """The schema with every local $ref replaced by what it points to (the document has no cycles)."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = document
            for part in node["$ref"][2:].split("/"):
                target = target[part]
            return resolve(target)
        return {key: resolve(value) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(value) for value in node]
    return node


def template(path):
    """The document's path that `path` is an instance of: literal paths before templated ones."""
    candidates = []
    for name in document["paths"]:
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(name)) + "$"
        if re.match(pattern, path):
            candidates.append((name.count("{"), name))
    return min(candidates)[1] if candidates else None


def validate(value, schema, where):
    for error in sorted(Draft202012Validator(resolve(schema)).iter_errors(value), key=str):
        location = "/".join(str(part) for part in error.absolute_path) or "(the document)"
        failures.append(f"{where}: {location}: {error.message}")


exercised = set()
for exchange in exchanges:
    path = exchange["path"].split("?")[0]
    where = f"GET {exchange['path'][:120]} -> {exchange['status']}"
    name = template(path)
    if name is None:
        failures.append(f"{where}: no such path in the document")
        continue
    operation = document["paths"][name].get("get")
    if operation is None:
        failures.append(f"{where}: {name} has no GET in the document")
        continue
    exercised.add(name)
    response = operation["responses"].get(str(exchange["status"]))
    if response is None:
        failures.append(f"{where}: status {exchange['status']} is not documented for {name}")
        continue
    response = resolve(response)
    content = response.get("content", {})
    media = (exchange.get("contentType") or "").split(";")[0].strip()
    if not content:
        if exchange.get("body"):
            failures.append(f"{where}: the document gives this status no body, the service sent {media or 'one'}")
        continue
    if media not in content:
        failures.append(f"{where}: media type {media!r} is not documented (documented: {sorted(content)})")
        continue
    described = content[media]
    if media == "application/json":
        try:
            body = json.loads(exchange["body"])
        except ValueError as error:
            failures.append(f"{where}: not JSON: {error}")
            continue
        validate(body, described.get("schema", {}), where)
    elif media == "text/event-stream":
        schemas = described.get("x-event-data", {})
        events = exchange.get("events", [])
        if not events:
            failures.append(f"{where}: the stream sent no event to check")
        for index, event in enumerate(events):
            if event["name"] not in schemas:
                failures.append(f"{where}: event {index} is '{event['name']}', not an event type of the document")
                continue
            try:
                data = json.loads(event["data"])
            except ValueError as error:
                failures.append(f"{where}: event {index}'s data is not JSON: {error}")
                continue
            validate(data, schemas[event["name"]], f"{where} event {index}")
    elif "schema" in described and described["schema"].get("type") == "string":
        if not isinstance(exchange.get("body"), str):
            failures.append(f"{where}: no text body")

for name, item in document["paths"].items():
    if "get" in item and name not in exercised:
        failures.append(f"GET {name}: documented but no test request exercised it")

for failure in failures:
    print(failure)
print(f"{len(exchanges)} responses checked against {len(document['paths'])} paths: {len(failures)} failures")
sys.exit(1 if failures else 0)
