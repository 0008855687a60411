"""The ready launch lines of pipelines/, with $DATASET filled in."""
import os
import string
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
# installed: spdlgst/launch/ (meson install); in the source tree: pipelines/
_DIRS = [os.path.join(HERE, "launch"), os.path.join(HERE, "..", "..", "pipelines")]
PIPELINES = next((d for d in _DIRS if os.path.isdir(d)), _DIRS[-1])


def available() -> List[str]:
    """Names of the ready pipelines (files pipelines/NAME.launch)."""
    return sorted(f[:-len(".launch")] for f in os.listdir(PIPELINES)
                  if f.endswith(".launch"))


def launch_line(name: str, dataset, **overrides) -> str:
    """The launch line of pipelines/NAME.launch for DATASET.

    ``overrides`` replace element properties, e.g. ``batch_size=32`` turns
    ``batch-size=256`` into ``batch-size=32`` wherever it appears.
    """
    with open(os.path.join(PIPELINES, name + ".launch")) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    line = string.Template(" ".join(lines)).substitute(DATASET=dataset)
    words = line.split()
    for key, value in overrides.items():
        prop = key.replace("_", "-") + "="
        words = [prop + str(value) if w.startswith(prop) else w for w in words]
    return " ".join(words)
