"""The entry point loads the plugin object, and loading it imports nothing heavy."""

from importlib.metadata import entry_points


def test_entry_point_loads_the_plugin():
    (point,) = [p for p in entry_points(group="cao") if p.name == "console"]
    from cao_console.plugin import plugin

    assert point.load() is plugin
