"""The package's public face: what `import fanout` offers, and what it costs."""

import subprocess
import sys

import fanout


def test_every_exported_name_resolves_to_the_object_its_module_defines():
    import importlib

    for name, module in fanout._EXPORTS.items():
        assert getattr(fanout, name) is getattr(importlib.import_module(module), name), name
    assert sorted(dir(fanout)) == sorted(fanout.__all__)


def test_an_unknown_name_is_an_attribute_error():
    try:
        fanout.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert str(exc) == "module 'fanout' has no attribute 'no_such_thing'"
    else:
        raise AssertionError("fanout.no_such_thing resolved")


def test_importing_the_package_loads_none_of_its_heavy_dependencies():
    code = "import sys, fanout; print(sorted(m for m in ('openai', 'httpx', 'trafilatura', 'aiohttp') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
