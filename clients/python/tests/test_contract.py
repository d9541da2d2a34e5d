"""The client against the API's source of truth, `crates/cairn-server/openapi.json`
(no server needed): every route has a method, both clients share one implementation of
it, and every schema's properties are fields of its result class.

A new route in the spec fails `test_every_route_has_a_method` until it has a builder in
`_api.py` and a line in each client class (see `_api.py`'s docstring).
"""

import json
import re
from pathlib import Path

import cairn_client
from cairn_client import ROUTES, AsyncCairn, Cairn
from cairn_client.types import SCHEMAS

HERE = Path(__file__).resolve().parents[1]
SPEC = HERE.parents[1] / "crates" / "cairn-server" / "openapi.json"


def spec():
    return json.loads(SPEC.read_text())


#: Routes that are not the API: the inspector's page and files (HTML, scripts), for browsers.
NOT_API_TAGS = {"inspector"}


def spec_routes():
    return {f"{m.upper()} {p}" for p, ops in spec()["paths"].items() for m, op in ops.items()
            if m != "parameters" and not NOT_API_TAGS & set(op.get("tags", []))}


def test_every_route_has_a_method():
    missing = sorted(spec_routes() - set(ROUTES))
    assert not missing, f"routes of openapi.json without a Python client method: {missing}"
    unknown = sorted(set(ROUTES) - spec_routes())
    assert not unknown, f"client methods for routes openapi.json does not list: {unknown}"


def test_both_clients_expose_every_method_from_the_same_builder():
    for name in set(ROUTES.values()):
        sync, aio = Cairn.__dict__.get(name), AsyncCairn.__dict__.get(name)
        assert sync is not None, f"Cairn lacks {name}"
        assert aio is not None, f"AsyncCairn lacks {name}"
        assert sync.__wrapped__ is aio.__wrapped__, f"{name}: the two clients run different builders"


def _schema_refs(node, out):
    if isinstance(node, dict):
        ref = node.get("$ref", "")
        if ref.startswith("#/components/schemas/"):
            out.add(ref.rsplit("/", 1)[1])
        for v in node.values():
            _schema_refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _schema_refs(v, out)
    return out


def test_every_schema_of_a_route_has_a_class_with_all_its_properties():
    doc = spec()
    schemas = doc["components"]["schemas"]
    used = _schema_refs(doc["paths"], set())
    # Follow references inside schemas too (Recall -> Hit, SessionPage -> SessionRecord).
    while True:
        more = _schema_refs([schemas[n] for n in used], set(used))
        if more == used:
            break
        used = more
    # Inputs taken as keyword arguments, the error document (ApiError), and answers the
    # methods unwrap to one value (`forget_*` -> removed_units, `create_space` -> created).
    exempt = {"Problem", "Filter", "AddMessages", "RecallRequest", "Removed", "SpaceCreated",
              "ForgotMessages", "ForgetPartition", "CreateKey",
              "ContextRequest", "InspectRequest", "AgentRequest"}
    for name in sorted(used - exempt):
        cls = SCHEMAS.get(name)
        assert cls is not None, f"schema {name} has no class in cairn_client.types"
        fields = set(cls.__dataclass_fields__)
        props = set(schemas[name].get("properties", {}))
        assert props <= fields, f"{name}: properties {sorted(props - fields)} missing from the class"


def test_versions_agree():
    pyproject = (HERE / "pyproject.toml").read_text()
    assert re.search(r'^version = "(.+)"$', pyproject, re.M).group(1) == cairn_client.__version__
    changelog = (HERE / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(cairn_client.__version__)}\b", changelog, re.M), \
        "CHANGELOG.md has no section for the current version"
