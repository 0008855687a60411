"""python -m spdlgst --gst-plugin-path: the folder of the plugins a wheel
of gst-spdl carries, for GStreamer's own tools:

    GST_PLUGIN_PATH=$(python -m spdlgst --gst-plugin-path) gst-inspect-1.0 spdldecode

(a meson install's or the source tree's spdlgst carries none: the command
says so and fails). --version prints spdlgst's version.
"""
import argparse
import os
import sys

from . import __version__
from ._plugins import plugin_dirs


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m spdlgst",
        description="where the plugins of this spdlgst are, for GStreamer's "
                    "tools (GST_PLUGIN_PATH)")
    parser.add_argument("--gst-plugin-path", action="store_true",
                        help="print the folder(s) of the plugins this spdlgst "
                        "carries, joined by %r" % os.pathsep)
    parser.add_argument("--version", action="version", version=__version__)
    args = parser.parse_args(argv)
    if not args.gst_plugin_path:
        parser.print_help()
        return 0
    dirs = plugin_dirs()
    if not dirs:
        sys.exit("spdlgst at %s carries no plugins (installed with meson, or "
                 "the source tree): GStreamer finds them in its own plugin "
                 "folder or GST_PLUGIN_PATH" % os.path.dirname(__file__))
    print(os.pathsep.join(dirs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
