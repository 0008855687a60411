"""The ready launch lines of pipelines/, with $DATASET filled in."""
import os
import string
from typing import List

from .recipes import _quote

HERE = os.path.dirname(os.path.abspath(__file__))
# installed: spdlgst/launch/ (meson install); in the source tree: pipelines/
_DIRS = [os.path.join(HERE, "launch"), os.path.join(HERE, "..", "..", "pipelines")]
PIPELINES = next((d for d in _DIRS if os.path.isdir(d)), _DIRS[-1])


def available() -> List[str]:
    """Names of the ready pipelines (files pipelines/NAME.launch)."""
    return sorted(f[:-len(".launch")] for f in os.listdir(PIPELINES)
                  if f.endswith(".launch"))


def launch_line(name: str, dataset, **overrides) -> str:
    """The launch line of pipelines/NAME.launch for DATASET (quoted as a
    launch line needs it).

    ``overrides`` replace element properties, e.g. ``batch_size=32`` turns
    ``batch-size=256`` into ``batch-size=32`` wherever it appears.
    """
    with open(os.path.join(PIPELINES, name + ".launch")) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    location = _quote(os.fsdecode(dataset))
    # word by word: the quoted location is one word, whatever it holds
    words = [string.Template(w).substitute(DATASET=location)
             for w in " ".join(lines).split()]
    for key, value in overrides.items():
        prop = key.replace("_", "-") + "="
        words = [prop + str(value) if w.startswith(prop) else w for w in words]
    return " ".join(words)


def shard_location(base, count, prefix="train-", digits=6):
    """The location of COUNT tar shards named as tools/make-shards names
    them: ``shard_location("s3://b/in", 1024)`` is
    ``"s3://b/in/train-{000000..001023}.tar"`` (BASE a folder or a URL)."""
    if count < 1:
        raise ValueError("count must be at least 1")
    return "%s/%s{%0*d..%0*d}.tar" % (base.rstrip("/"), prefix, digits, 0,
                                       digits, count - 1)


def shard_location_from_index(folder, prefix="train-"):
    """The location of the shards listed in FOLDER/shards.idx (a local
    folder, as tools/make-shards wrote it)."""
    with open(os.path.join(folder, "shards.idx")) as f:
        names = sorted(l.split("\t", 1)[0] for l in f
                       if l.strip() and not l.startswith("#"))
    names = [n for n in names if n.startswith(prefix) and n.endswith(".tar")]
    if not names:
        raise ValueError("no %s*.tar shard in %s/shards.idx" % (prefix, folder))
    digits = len(names[0]) - len(prefix) - len(".tar")
    return shard_location(folder, len(names), prefix, digits)
