"""A wheel's spdlgst with a plugin of another version found first (an old
build tree on GST_PLUGIN_PATH, a stale install in the system's folder):
GStreamer uses that one, and spdlgst says so once at WARNING."""
import logging

from spdlgst import _plugins, __version__


class Plugin:
    def __init__(self, version, filename):
        self.version, self.filename = version, filename

    def get_version(self):
        return self.version

    def get_filename(self):
        return self.filename


class Registry:
    def __init__(self, **plugins):
        self.plugins = plugins

    def find_plugin(self, name):
        return self.plugins.get(name)


def test_another_version_found_first_is_said(caplog):
    wheel = "/venv/site-packages/spdlgst/gstreamer-1.0"
    with caplog.at_level(logging.WARNING, logger="spdlgst"):
        _plugins.warn_other_version(Registry(
            spdl=Plugin("0.0.9", "/old/build/gst/spdl/libgstspdl.so")), [wheel])
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert "/old/build/gst/spdl/libgstspdl.so" in message
    assert "0.0.9" in message and __version__ in message
    assert "GST_PLUGIN_PATH" in message


def test_the_wheels_own_or_same_version_is_not_said(caplog):
    wheel = "/venv/site-packages/spdlgst/gstreamer-1.0"
    with caplog.at_level(logging.WARNING, logger="spdlgst"):
        _plugins.warn_other_version(Registry(
            spdl=Plugin(__version__, "/build/gst/spdl/libgstspdl.so"),
            spdlcuda=Plugin("0.0.9", wheel + "/libgstspdlcuda.so")), [wheel])
        _plugins.warn_other_version(Registry(), [wheel])
    assert caplog.records == []
