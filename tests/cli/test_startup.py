"""Start-up: the command line's parser and ``--help`` import none of the heavy packages, the
validators still check formats once jsonschema is imported on first use, and the values the parsers show from slow
modules (written out in ``clearside/cli/common.py``) are the core's. Each import check runs in a fresh interpreter.
No timing here: bench/startup.py measures it."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import fixture_dict

ROOT = Path(__file__).resolve().parents[2]

# What --help and the parser must not import: jsonschema (its iri format checker, rfc3987_syntax, builds a grammar
# at import, ~0.75 s), the models, the dashboard, the store, the runtime and the core modules that pull them in.
HEAVY = ("rfc3987_syntax", "jsonschema", "llama_cpp", "torch", "sentence_transformers", "transformers", "streamlit",
         "pandas", "numpy", "dbos", "sqlalchemy", "alembic", "psycopg", "pydantic",
         "clearside.static.engine", "clearside.schema", "clearside.contract", "clearside.store",
         "clearside.runtime.host", "clearside.quality.reports")


def child(code: str, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter at the repository root; it prints one JSON value, returned here."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


HELP_EVERYWHERE = f"""
import argparse, contextlib, io, json, sys
from clearside.cli import build_parser, main

def paths(parser, prefix):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [prefix]
    return [p for name, sub in subs[0].choices.items() for p in paths(sub, [*prefix, name])]

commands = paths(build_parser(), [])
codes = []
with contextlib.redirect_stdout(io.StringIO()) as out:
    for argv in [[], *commands]:
        codes.append(main([*argv, "--help"]))
print(json.dumps({{"commands": [" ".join(c) for c in commands], "codes": codes, "help": out.getvalue(),
                  "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def test_help_of_every_command_imports_no_heavy_package():
    result = child(HELP_EVERYWHERE)
    assert {"debate", "worker", "list", "export", "suite validate", "regress", "live", "ui"} <= set(result["commands"])
    assert set(result["codes"]) == {0}
    assert "usage: python -m clearside worker" in result["help"] and "--concurrency N" in result["help"]
    assert result["loaded"] == [], "imported by the parser or --help: make them lazy (see clearside/cli/common.py)"


def test_the_entry_module_alone_imports_no_heavy_package():
    loaded = child(f"import json, sys\nimport clearside, clearside.cli\n"
                   f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert loaded == []


def test_list_reads_the_store_without_the_validator_the_runtime_or_a_model(tmp_path):
    env = {"CLEARSIDE_DATA": str(tmp_path), "DATABASE_URL": ""}
    result = child("import contextlib, io, json, sys\nfrom clearside.cli import main\n"
                   "with contextlib.redirect_stdout(io.StringIO()) as out:\n    code = main(['list'])\n"
                   "print(json.dumps({'code': code, 'out': out.getvalue(), 'loaded': [m for m in "
                   "('rfc3987_syntax', 'jsonschema', 'numpy', 'dbos', 'torch', 'llama_cpp', 'streamlit') "
                   "if m in sys.modules]}))", env)
    assert result["code"] == 0 and "No saved debates" in result["out"]
    assert result["loaded"] == []


def test_jsonschema_is_imported_by_the_first_validation_and_still_checks_formats():
    result = child("import json, sys\nfrom clearside import contract\nbefore = 'jsonschema' in sys.modules\n"
                   f"doc = json.loads(open({str(ROOT / 'tests/fixtures/microservices.json')!r}).read())\n"
                   "doc['meta']['generated_at'] = 'yesterday'\n"
                   "print(json.dumps({'before': before, 'errors': contract.jsonschema_errors(doc), "
                   "'after': 'jsonschema' in sys.modules}))")
    assert result == {"before": False, "errors": ["meta/generated_at: 'yesterday' is not a 'date-time'"],
                      "after": True}


def test_the_first_validation_skips_the_iri_grammar_and_leaves_its_package_importable():
    """jsonschema's iri checker (rfc3987_syntax) builds a grammar at import, 0.8-1.8 s of the first debate; no
    ClearSide schema uses it, so the first validation imports jsonschema without it, and anyone may import it
    afterwards. (Where the package is not installed, the test shows only the first half.)"""
    result = child("import importlib.util, json, sys\nfrom clearside import contract\n"
                   "v = contract.draft202012()({'type': 'string', 'format': 'date-time'}, "
                   "format_checker=contract.draft202012().FORMAT_CHECKER)\n"
                   "errors = [e.message for e in v.iter_errors('soon')]\n"
                   "loaded = 'rfc3987_syntax' in sys.modules\n"
                   "installed = importlib.util.find_spec('rfc3987_syntax') is not None\n"
                   "later = installed and __import__('rfc3987_syntax') is not None\n"
                   "print(json.dumps({'errors': errors, 'loaded': loaded, 'later': later, 'installed': installed}))")
    assert result["errors"] == ["'soon' is not a 'date-time'"] and result["loaded"] is False
    assert result["later"] == result["installed"]


@pytest.mark.parametrize("stamp", ["yesterday", "2025-13-40T00:00:00Z", "2025-01-20T18:42:00"])
def test_both_validators_reject_a_bad_date_time_by_its_format(stamp):
    from clearside.contract import base_validator, document_validator, validate_document
    from clearside.errors import InputError

    data = copy.deepcopy(fixture_dict())
    data["meta"]["generated_at"] = stamp
    for validator in (document_validator(), base_validator()):
        assert [e.validator for e in validator.iter_errors(data)] == ["format"]
    with pytest.raises(InputError, match="is not a 'date-time'"):
        validate_document(data)


def test_the_values_the_parsers_show_are_the_cores():
    from clearside import render, runtime, schema, sources
    from clearside.cli import common
    from clearside.perspectives import DEFAULT_ROUNDS
    from clearside.quality import batch, compare
    from clearside.static import personas, run

    core = {"FORMATS": render.FORMATS, "STRATEGIES": run.STRATEGIES, "ALL_ACTIONS": schema.ALL_ACTIONS,
            "PERSONAS": tuple(personas.BUILTINS), "SUITES": tuple(batch.SUITES), "COMPARE_SUITE": compare.SUITE,
            "SOURCE_LIMITS": {"files": sources.MAX_FILES, "mb": sources.MAX_BYTES // 2**20, "pages": sources.MAX_PAGES},
            "SERVER_CONCURRENCY": runtime.SERVER_CONCURRENCY, "DEFAULT_ROUNDS": DEFAULT_ROUNDS}
    assert {name: getattr(common, name) for name in core} == core
