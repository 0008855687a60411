"""gst-spdl's Python loader: GStreamer pipelines as PyTorch-style data loaders.

    import spdlgst

    loader = spdlgst.ImageLoader("/data/imagenet/train", recipe="train")
    for epoch in range(90):
        for images, labels in loader:      # one epoch per loop
            ...

:class:`ImageLoader` builds the pipeline of torchvision's ImageNet recipes
(``loader.launch_line`` shows it); :class:`Loader` runs any launch line that
ends in spdlappsink. Batches arrive as torch tensors or numpy arrays that
share memory with the GStreamer buffers: nothing is copied, and each buffer
stays alive while a tensor made from it does. The heavy stages run as
native threads that never hold the GIL. Element warnings (skipped samples)
go to the ``spdlgst`` logger.

Normalized batches (spdlbatch dtype=float32/float16/bfloat16) come as
arrays of that type; bfloat16 is torch.bfloat16 with ``output="torch"`` and,
numpy having no bfloat16, its raw bits as uint16 with numpy output.

Installed with pip, spdlgst carries the plugins and adds them to
GStreamer's registry at import (a plugin of the same name found through
GST_PLUGIN_PATH wins); ``python -m spdlgst --gst-plugin-path`` prints their
folder for gst-launch-1.0 and gst-inspect-1.0.
"""
import gi

# before any module of the package imports gi.repository.Gst
gi.require_version("Gst", "1.0")

from ._gi import require_gst_overrides  # noqa: E402
from ._version import __version__  # noqa: E402,F401
from ._plugins import register as _register_plugins  # noqa: E402

require_gst_overrides()
_register_plugins()

from . import pipelines  # noqa: E402,F401  (spdlgst.pipelines.launch_line)
from ._buslog import EPOCH_END, logger  # noqa: E402,F401
from ._state import combine as combine_states  # noqa: E402
from .batch import Batch  # noqa: E402
from .errors import LoaderError  # noqa: E402
from .loader import Loader  # noqa: E402
from .normalize import normalize  # noqa: E402
from .recipes import AudioLoader, ImageLoader, VideoLoader  # noqa: E402

__all__ = ["Loader", "ImageLoader", "VideoLoader", "AudioLoader",
           "LoaderError", "Batch", "logger", "combine_states", "normalize"]
