# The version of gst-spdl: meson.build's (the plugins', the wheel's) checks
# that it is this one.
__version__ = "0.1.0"
