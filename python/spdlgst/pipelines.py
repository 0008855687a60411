"""The ready launch lines of pipelines/, with $DATASET filled in."""
import os
import string
from typing import List, Set

from gi.repository import GObject, Gst

from ._launchline import quote as _quote

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

    ``overrides`` set element properties, ``batch_size=32`` being
    ``batch-size=32``: they replace the value wherever the line sets that
    property, and are otherwise added to the one element of the line that
    has it; ValueError when no element or more than one has it.
    """
    Gst.init(None)
    with open(os.path.join(PIPELINES, name + ".launch")) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    location = _quote(os.fsdecode(dataset))
    # word by word: the quoted location is one word, whatever it holds
    words = [string.Template(w).substitute(DATASET=location)
             for w in " ".join(lines).split()]
    elements = _elements(words)
    for key, value in overrides.items():
        _set_property(name, elements, key.replace("_", "-"), _value(value))
    return " ! ".join(" ".join(e) for e in elements)


def _elements(words: List[str]) -> List[List[str]]:
    """The words of each element of a line: [factory, prop=value, ...]."""
    elements = [[]]
    for word in words:
        if word == "!":
            elements.append([])
        else:
            elements[-1].append(word)
    return elements


def _value(value) -> str:
    """A Python value as a launch line writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return _quote(str(value))


def _set_property(name: str, elements: List[List[str]], prop: str,
                  value: str) -> None:
    """Replaces PROP's value wherever the line sets it, or else adds it to
    the one element that takes it."""
    if not _replace(elements, prop + "=", value):
        _owner(name, elements, prop).append(f"{prop}={value}")


def _replace(elements: List[List[str]], assignment: str, value: str) -> bool:
    found = False
    for element in elements:
        for i, word in enumerate(element[1:], 1):
            if word.startswith(assignment):
                element[i] = assignment + value
                found = True
    return found


def _owner(name: str, elements: List[List[str]], prop: str) -> List[str]:
    owners = [e for e in elements if prop in _writable_properties(e[0])]
    if not owners:
        raise ValueError(f"{prop!r}: no element of {name}.launch takes it "
                         f"(its elements: {_factories(elements)})")
    if len(owners) > 1:
        raise ValueError(f"{prop!r} is not set in {name}.launch and several "
                         f"of its elements take it ({_factories(owners)}): "
                         "write a line that sets it on the one meant")
    return owners[0]


def _factories(elements: List[List[str]]) -> str:
    return ", ".join(e[0] for e in elements)


def _writable_properties(factory_name: str) -> Set[str]:
    """The properties an element of that factory can be given (none for a
    caps filter or a factory GStreamer does not find)."""
    factory = Gst.ElementFactory.find(factory_name)
    factory = factory.load() if factory is not None else None
    if factory is None:
        return set()
    return {p.name for p in GObject.list_properties(factory.get_element_type())
            if p.flags & GObject.ParamFlags.WRITABLE}


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
