"""Known bugs of the GStreamer plugins the tests run on (Debian 12's
1.22.0), as strict xfail marks that hold only for the versions that have
them: a test so marked fails once the plugin is fixed, and passes on a
fixed plugin."""
import pytest
from gi.repository import Gst


def plugin_version(name):
    """(major, minor, micro) of the GStreamer plugin @name"""
    plugin = Gst.Registry.get().find_plugin(name)
    assert plugin is not None, f"no GStreamer plugin {name}"
    return tuple(int(v) for v in plugin.get_version().split(".")[:3])


# qtdemux 1.22.0 to 1.22.2 (gst_qtdemux_loop_state_movie) adds a track's
# edit-list media offset (AAC's encoder delay: 1024 samples as FFmpeg
# writes it) to the track's position in movie time before comparing it
# with the movie's end, so it stops pushing samples that much early: the
# AAC frame an edit list ends in never reaches the decoder. GStreamer
# issue 2549, fixed in 1.22.3 (commit 8bb2d236, the revert of 9deb3c27).
QTDEMUX_EDIT_LIST_END = pytest.mark.xfail(
    plugin_version("isomp4") < (1, 22, 3), strict=True,
    reason="qtdemux 1.22.0-1.22.2 ends a track its edit list's media "
    "offset early (GStreamer issue 2549): the AAC frame an edit list ends "
    "in is dropped")
