"""Recipe-level loaders: the pipeline of a torchvision recipe from arguments."""
from __future__ import annotations

import inspect
import math
import numbers
import os
import re
import shlex
from typing import TYPE_CHECKING, Optional, Sequence, Tuple, Union

from gi.repository import Gst

from ._launchline import quote as _quote
from ._secrets import SECRET_PROPERTIES, masked
from ._state import is_shard_pattern, is_shards_location
from .errors import LoaderError
from .loader import Loader

RECIPES = ("train", "val", "detection", "letterbox")
TASKS = ("classification", "detection")
EMPTY_IMAGES = ("keep", "drop")
# Faster R-CNN's (torchvision's detection references): shorter side 800,
# longer at most 1333; YOLO's letterbox: 640 square padded with 114
DETECTION_SIZE, DETECTION_MAX_SIZE = 800, 1333
LETTERBOX_SIZE, LETTERBOX_PAD = 640, 114
# torchvision's GeneralizedRCNNTransform's size_divisible
DETECTION_PAD_MULTIPLE = 32
DTYPES = ("uint8", "float32", "float16", "bfloat16")
# torchvision's ImageNet normalization, for mean="imagenet" / std="imagenet"
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# RandomResizedCrop's defaults
DEFAULT_SCALE = (0.08, 1.0)
DEFAULT_RATIO = (3.0 / 4.0, 4.0 / 3.0)

if TYPE_CHECKING:
    import numpy
    import torch

Size = Union[int, Tuple[int, int], Sequence[int]]
# a name ("float32"), a torch dtype, a numpy dtype or scalar type
DType = Union[str, "torch.dtype", "numpy.dtype", type]
# None (host memory), "cpu", "cuda", "cuda:N" or a torch device
Device = Union[str, "torch.device", None]
Floats = Union[str, float, Sequence[float]]
# "auto" (RANK and WORLD_SIZE), None (all the data), or (rank, world_size)
Ranks = Union[str, None, Tuple[int, int]]


def _int(name, value, low, high=None, none_ok=False):
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bounds}, not {value}")
    return int(value)


def _bool(name, value, default):
    if value is None:
        return default
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def _choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}, not {value!r}")
    return value


def _size(name, value) -> Tuple[int, int]:
    """(height, width) from an int or a (height, width) pair, as torchvision."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:         # torchvision's [size]: a square
            value = (value[0], value[0])
        if len(value) != 2:
            raise ValueError(f"{name} must be an int or (height, width), not {value!r}")
        return (_int(f"{name}[0]", value[0], 1, 65535),
                _int(f"{name}[1]", value[1], 1, 65535))
    side = _int(name, value, 1, 65535)
    return side, side


def _range(name, value, low, high) -> Tuple[float, float]:
    """(min, max) floats within [low, high], min <= max."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"{name} must be a (min, max) pair, not {value!r}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must hold numbers, not {v!r}")
        out.append(float(v))
    if not (low <= out[0] <= out[1] <= high):
        raise ValueError(f"{name} must be (min, max) with {low} <= min <= max "
                         f"<= {high}, not {tuple(value)}")
    return out[0], out[1]


def _dtype(value) -> str:
    """'uint8', 'float32', ... from a name, a torch dtype or a numpy dtype."""
    if isinstance(value, type):
        value = value.__name__          # numpy.float32 -> "float32"
    elif not isinstance(value, str):
        value = str(value)              # torch.float16, numpy.dtype("float16")
        value = value.rsplit(".", 1)[-1]
    return _choice("dtype", value, DTYPES)


def _floats(name, value, default) -> Optional[Tuple[float, ...]]:
    """One value or one per channel (3), finite."""
    if value is None:
        return None
    if isinstance(value, str):
        if value != "imagenet":
            raise ValueError(f"{name} must be numbers or 'imagenet', not {value!r}")
        return default
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = (value,)
    if not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a number or a sequence of numbers, "
                        f"not {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must hold numbers, not {v!r}")
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, not {v}")
        out.append(float(v))
    if len(out) not in (1, 3):
        raise ValueError(f"{name} must have 1 or 3 values (RGB), not {len(out)}")
    return tuple(out)


def _device(value) -> Optional[int]:
    """None for host memory, the CUDA device index otherwise."""
    if value is None:
        return None
    text = str(value)                   # torch.device("cuda:1") -> "cuda:1"
    if text == "cpu":
        return None
    if text == "cuda":
        # torchrun's process-per-GPU convention
        return int(os.environ.get("LOCAL_RANK", "0"))
    kind, _, index = text.partition(":")
    if kind != "cuda" or not index.isdigit():
        raise ValueError(f"device must be None, 'cpu', 'cuda' or 'cuda:N', not {value!r}")
    return int(index)


def _path(name, value) -> str:
    """@value (str, bytes or os.PathLike) as the UTF-8 text a GStreamer
    property takes; errors name the argument @name."""
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), not "
                        f"{type(value).__name__}")
    path = os.fspath(value)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path:
        raise ValueError(f"{name} must not be empty")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name} {path!r} is not valid UTF-8: GStreamer "
                         "properties are UTF-8 strings") from None
    return path


def _location(value) -> str:
    path = _path("location", value)
    if path.startswith(("http://", "https://", "s3://")):
        return path                 # spdlsrc lists and reads it
    if is_shard_pattern(path):
        folder = os.path.dirname(path) or "."
        if not os.path.isdir(folder):
            raise ValueError(f"location {path!r}: the shards' folder "
                             f"{folder!r} does not exist")
        return path
    if not os.path.exists(path):
        raise ValueError(f"location {path!r} does not exist (an ImageFolder "
                         "tree, a manifest file, tar shards, or an http(s):// "
                         "or s3:// location)")
    return path


def _src_properties(value) -> dict:
    """spdlsrc properties ImageLoader has no argument for: {"s3-endpoint":
    ..., "shard-cache": "", "http-timeout": 10000}; checked against the
    element when the pipeline is built."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and re.fullmatch(r"[a-z0-9-]+", k) for k in value):
        raise TypeError("src_properties must be a dict of spdlsrc property "
                        f"names to values, not {masked(repr(value))}")
    for key in ("location", "shuffle", "seed", "num-epochs", "start-epoch"):
        if key in value:
            raise ValueError(f"src_properties[{key!r}]: use the loader's own "
                             "argument")
    return dict(value)


def _ranks(value, src_properties):
    """"auto", or the (rank, world size) spdlsrc splits each epoch by."""
    if isinstance(value, str) and value == "auto":
        return value
    given = value               # what errors quote
    if value is None:
        value = (0, 1)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or \
            len(value) != 2:
        raise ValueError(f"ranks must be 'auto', None or (rank, world_size), "
                         f"not {value!r}")
    world = _int("ranks' world_size", value[1], 1, 2**31 - 1)
    rank = _int("ranks' rank", value[0], 0, world - 1)
    for key in ("shard-index", "num-shards"):
        if key in src_properties:
            raise ValueError(f"src_properties[{key!r}] and ranks={given!r}: "
                             "give the ranks once, with ranks=")
    return rank, world


def _ranks_stage(a) -> str:
    """spdlsrc's split of the epochs, unless left to the environment."""
    if a["ranks"] == "auto":
        return ""
    return f" shard-index={a['ranks'][0]} num-shards={a['ranks'][1]}"


def _start_loader(loader, args: dict) -> None:
    """Loader.__init__ for a recipe: its secrets (s3-secret-key,
    s3-session-token) set on spdlsrc after the pipeline is built rather
    than in the line parsed, which GStreamer logs (GST_PIPELINE at INFO);
    ``launch_line`` shows the whole line, the secrets masked."""
    src = args["src_properties"]
    secrets = {k: v for k, v in src.items() if k in SECRET_PROPERTIES}
    public = dict(args, src_properties={k: v for k, v in src.items()
                                        if k not in secrets})
    Loader.__init__(loader, type(loader)._build(public), output=args["output"],
                    log_limit=args["log_limit"])
    if args.get("fields"):
        loader._field_order = (args["fields"]["names"], args["fields"]["media"])
    for key, value in secrets.items():
        loader._src.set_property(key, str(value))
    loader.launch_line = masked(type(loader)._build(args))


def _warning_limit(a) -> list:
    """The elements name as many bad files on the bus as the log shows
    (``log_limit``; their warning-limit is 20 too)."""
    return [] if a["log_limit"] == 20 else [f"warning-limit={a['log_limit']}"]


FIELD_KINDS = ("int", "float", "string", "json", "bytes", "npy", "image",
               "label", "objects")
FIELD_MISSING = ("skip", "error", "empty")
IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "gif", "bmp", "tif", "tiff",
                    "ppm", "pgm", "pbm", "pnm")


def _field_parts(spec: str):
    """``"seg.png:label:empty"`` -> ("seg.png", "label", "empty") (None for
    what is not given), as spdlsrc reads a field (docs/record.md)."""
    name, *rest = spec.split(":")
    kind = missing = None
    for part in rest:
        if part in FIELD_KINDS and kind is None:
            kind = part
        elif part in FIELD_MISSING and missing is None:
            missing = part
        else:
            raise ValueError(f"fields: {spec!r}: {part!r} is no kind "
                             f"({', '.join(FIELD_KINDS)}) nor missing policy "
                             f"({', '.join(FIELD_MISSING)}), or is given twice")
    alternatives = [a.strip() for a in name.split(";")]
    if "" in alternatives:
        raise ValueError(f"fields: {spec!r} has an empty name")
    return ";".join(alternatives), kind, missing


def _fields(value, media_extensions) -> Optional[dict]:
    """``fields=`` in webdataset's ``to_tuple`` spelling: the media item (the
    first field naming one of @media_extensions, else the first field) and
    the others, spdlsrc's ``fields``. None without fields."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split()       # to_tuple("jpg;png json")
    if not isinstance(value, (tuple, list)) or not value or \
            not all(isinstance(v, str) for v in value):
        raise TypeError("fields must be a tuple of field names, e.g. "
                        "(\"jpg;png\", \"txt\", \"json\")")
    parts = []
    for spec in value:
        spec = spec.strip()
        if "," in spec or not spec:
            raise ValueError(f"fields: {spec!r}: one field per item, "
                             "without ','")
        parts.append(_field_parts(spec))
    names = [p[0] for p in parts]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"fields: {name!r} is asked for twice")

    def names_media(part):
        name, kind, _ = part
        if kind not in (None, "image"):
            return False
        last = name.split(";")[-1].lower()
        return "." not in last and last in media_extensions
    media = next((i for i, p in enumerate(parts) if names_media(p)), None)
    # a manifest's path column ("image", ...) wherever it stands
    column = next((i for i, p in enumerate(parts)
                   if p[0] in PATH_COLUMNS and p[1] is None), None)
    at = media if media is not None else column if column is not None else 0
    if parts[at][1] not in (None, "image") or parts[at][2] is not None:
        raise ValueError(f"fields: {value[at].strip()!r} names the media item: "
                         "it takes no kind or missing policy (bad media files "
                         "are skipped as always; see max_errors)")

    def spec(part):
        return ":".join(x for x in part if x is not None)
    return _Fields(names=names, media=at, media_key=names[at],
                   media_named=media is not None,
                   specs=tuple(v.strip() for v in value),
                   src=",".join(spec(p) for i, p in enumerate(parts) if i != at))


class _Fields(dict):
    """``fields=`` checked: shown as the tuple given (the loaders' repr)."""

    def __repr__(self) -> str:
        return repr(self["specs"])


TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson")
# spdlsrc's path-column defaults
PATH_COLUMNS = ("path", "image", "filepath", "file_name", "filename", "file",
                "audio_filepath", "audio_filename", "video")


def _fields_stage(a) -> list:
    """spdlsrc's properties for ``fields=`` (and the string fields of
    VideoLoader's ``captions=`` and AudioLoader's ``text=``)."""
    f = a.get("fields")
    extra = [f"{a['captions']}:string"] if a.get("captions") else []
    if a.get("text"):
        extra.append("text")        # spdlsrc: text, text_filepath, ...
    if not f:
        return [f"fields={_quote(','.join(extra))}"] if extra else []
    manifest = a["location"].lower().endswith(TABLE_SUFFIXES) or (
        a["location"].lower().endswith(".json") and "text" in a)
    if manifest and not f["media_named"] and \
            f["media_key"] not in PATH_COLUMNS and \
            "path-column" not in a["src_properties"]:
        # the first field would be taken for the media and never given
        raise ValueError(
            f"fields: none names the media (an extension such as 'wav', "
            f"'audio', 'video' or 'jpg', or the manifest's path column): "
            f"{f['media_key']!r} would be taken for it; name the media first, "
            f"e.g. fields=('audio', {f['media_key']!r})")
    out = []
    if f["src"] or extra:
        specs = ([f["src"]] if f["src"] else []) + extra
        out.append(f"fields={_quote(','.join(specs))}")
    if is_shards_location(a["location"]) and \
            "image-key" not in a["src_properties"]:
        out.append(f"image-key={_quote(f['media_key'])}")
    if not f["media_named"] and \
            a["location"].lower().endswith(TABLE_SUFFIXES) and \
            "path-column" not in a["src_properties"]:
        # fields=("image", "caption") on a CSV: its media is that column
        out.append(f"path-column={_quote(f['media_key'])}")
    return out


def _resize_stage(a) -> list:
    """spdldecode's resize and crop properties for the recipe."""
    recipe = a["recipe"]
    if recipe == "detection":
        sizes = a["size"]
        size = (f"resize-shorter={sizes[0]}" if len(sizes) == 1
                else f"sizes={_array(sizes)}")
        return ["mode=shorter", size, f"max-size={a['max_size']}"]
    height, width = a["size"]
    out = [f"width={width} height={height}"]
    if recipe == "letterbox":
        return out + ["mode=letterbox", f"pad-value={a['pad_value']}"]
    if recipe == "val":
        return out + ["mode=center-crop", f"resize-shorter={a['resize']}"]
    out.append("mode=random-resized-crop")
    # spdldecode's defaults are torchvision's: only other values
    if a["scale"] != DEFAULT_SCALE:
        out.append(f"scale-min={a['scale'][0]!r} scale-max={a['scale'][1]!r}")
    if a["ratio"] != DEFAULT_RATIO:
        out.append(f"ratio-min={a['ratio'][0]!r} ratio-max={a['ratio'][1]!r}")
    return out


def _objects_src_stage(a) -> list:
    """spdlsrc's properties for task="detection": the COCO instances file
    (its samples' fields are ``objects`` and ``image_id``), or the shards'
    member with each image's annotations (the ``objects`` field) and the
    image id in it (-1 where it has none)."""
    if a.get("task") != "detection":
        return []
    if a["annotations"] is not None:
        out = [f"annotations={_quote(a['annotations'])}"]
        if a["empty_images"] != "keep":
            out.append(f"empty-images={a['empty_images']}")
        return out
    key = a["annotations_key"]
    return [f"fields={_quote(f'{key}:objects,{key}#image_id:int:empty')}"]


def _objects_field(a) -> str:
    """The name of the objects field of a detection loader's batches."""
    return "objects" if a["annotations"] is not None else a["annotations_key"]


def _array(values) -> str:
    return '"<' + ",".join(repr(v) for v in values) + '>"'


def _detection_sizes(value) -> Tuple[int, ...]:
    """recipe="detection"'s shorter sides: one int, or a list to draw one
    from per image (DETR's multi-scale)."""
    if isinstance(value, (tuple, list)):
        if not value:
            raise ValueError("size must be an int or a non-empty list of ints")
        return tuple(_int(f"size[{i}]", v, 1, 65535)
                     for i, v in enumerate(value))
    return (_int("size", value, 1, 65535),)


def _annotations(value) -> str:
    """A COCO instances file: local (it must exist), http(s):// or s3://."""
    path = _path("annotations", value)
    if path.startswith(("http://", "https://", "s3://")):
        return path
    if not os.path.isfile(path):
        raise ValueError(f"annotations {path!r} is not a file (a COCO "
                         "instances JSON file, local, http(s):// or s3://)")
    return path


def _detection_checked(a, annotations, max_size, masks, empty_images,
                       sanitize, pad_value, annotations_key, resize) -> dict:
    """task="detection"'s own arguments, checked against the others in @a."""
    recipe = a["recipe"]
    shards = is_shards_location(a["location"])
    if a["fields"] is not None:
        raise ValueError("fields is for task='classification': detection "
                         "batches are (images, targets); WebDataset shards "
                         "name their COCO-layout JSON member with "
                         "annotations_key")
    out = dict(task="detection", annotations=None, annotations_key=None)
    if shards:
        if annotations is not None:
            raise ValueError("annotations= is a COCO instances file beside an "
                             "image folder: tar shards carry each image's "
                             "annotations in a member (annotations_key)")
        key = "json" if annotations_key is None else annotations_key
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
            raise ValueError(f"annotations_key must be a member's extension "
                             f"like 'json', not {key!r}")
        out["annotations_key"] = key
    else:
        if annotations_key is not None:
            raise ValueError("annotations_key is for WebDataset tar shards")
        if annotations is None:
            raise ValueError("task='detection' needs annotations= (a COCO "
                             "instances file; location is then the image "
                             "folder), or WebDataset tar shards as location")
        out["annotations"] = _annotations(annotations)
    if recipe in ("detection", "letterbox") and resize is not None:
        raise ValueError(f"resize is for recipe='val' (recipe={recipe!r} "
                         "takes size)")
    if recipe == "detection":
        if max_size is None:
            max_size = DETECTION_MAX_SIZE
        out["max_size"] = _int("max_size", max_size, 0, 65535)
        if out["max_size"] and out["max_size"] <= max(a["size"]):
            raise ValueError(f"max_size ({out['max_size']}) must be above "
                             f"size ({max(a['size'])}), as torchvision's "
                             "Resize; 0: no limit")
    elif max_size is not None:
        raise ValueError("max_size is for recipe='detection'")
    if recipe == "letterbox":
        out["pad_value"] = _int("pad_value", LETTERBOX_PAD if pad_value is None
                                else pad_value, 0, 255)
    elif pad_value is not None:
        raise ValueError("pad_value is for recipe='letterbox'")
    out["masks"] = _bool("masks", masks, False)
    out["empty_images"] = _choice("empty_images", empty_images, EMPTY_IMAGES)
    if shards and out["empty_images"] == "drop":
        raise ValueError("empty_images='drop' needs a COCO instances file "
                         "(tar shards are not listed ahead: filter targets "
                         "with no boxes in the loop)")
    out["sanitize"] = _bool("sanitize", sanitize, True)
    return out


def _checked(location, batch_size, recipe, size, resize, scale, ratio, flip,
             shuffle, seed, epochs, start_epoch, drop_last, threads, dtype, mean,
             std, device, output, exact=True, layout="nchw", max_errors=None,
             shuffle_buffer=None, src_properties=None, ranks="auto",
             skip_recovered=False, max_pixels=None,
             max_decode_memory=None, log_limit=20, fields=None,
             annotations=None, task=None, max_size=None, masks=False,
             empty_images="keep", sanitize=True, pad_value=None,
             annotations_key=None) -> dict:
    """The arguments of ImageLoader, checked and normalized."""
    if task is None:
        task = "detection" if annotations is not None or \
            annotations_key is not None else "classification"
    task = _choice("task", task, TASKS)
    detection = task == "detection"
    if recipe is None:
        recipe = "detection" if detection else "val"
    recipe = _choice("recipe", recipe, RECIPES)
    if recipe in ("detection", "letterbox") and not detection:
        raise ValueError(f"recipe={recipe!r} is for task='detection' (with "
                         "annotations=)")
    train = recipe == "train"
    if size is None:
        size = (224 if not detection else DETECTION_SIZE
                if recipe == "detection" else LETTERBOX_SIZE)
    if isinstance(layout, str):
        layout = layout.lower()     # "NCHW" as VideoLoader takes "tchw"
    args = dict(
        location=_location(location),
        batch_size=_int("batch_size", batch_size, 1, 2**31 - 1),
        recipe=recipe,
        size=_detection_sizes(size) if recipe == "detection" else
        _size("size", size),
        resize=_int("resize", resize, 1, 65535, none_ok=True),
        flip=_bool("flip", flip, recipe in ("train", "detection")),
        shuffle=_bool("shuffle", shuffle, recipe in ("train", "detection")),
        seed=_int("seed", seed, 0, 2**64 - 1),
        epochs=_int("epochs", epochs, 1, 2**31 - 1, none_ok=True),
        start_epoch=_int("start_epoch", start_epoch, 0, 2**31 - 1),
        drop_last=_bool("drop_last", drop_last, False),
        threads=_int("threads", threads, 1, 256, none_ok=True),
        dtype=_dtype(dtype),
        mean=_floats("mean", mean, IMAGENET_MEAN),
        std=_floats("std", std, IMAGENET_STD),
        device=_device(device),
        output=_choice("output", output, ("torch", "numpy")),
        exact=_bool("exact", exact, True),
        layout=_choice("layout", layout, ("nchw", "nhwc")),
        max_errors=_int("max_errors", max_errors, 0, 2**31 - 1, none_ok=True),
        shuffle_buffer=_int("shuffle_buffer", shuffle_buffer, 0, 2**31 - 1,
                            none_ok=True),
        src_properties=_src_properties(src_properties),
        skip_recovered=_bool("skip_recovered", skip_recovered, False),
        max_pixels=_int("max_pixels", max_pixels, 0, 2**64 - 1, none_ok=True),
        max_decode_memory=_int("max_decode_memory", max_decode_memory, 0,
                               2**64 - 1, none_ok=True),
        log_limit=_int("log_limit", log_limit, 0, 2**32 - 1),
        fields=_fields(fields, IMAGE_EXTENSIONS),
    )
    args["ranks"] = _ranks(ranks, args["src_properties"])
    if detection:
        args.update(_detection_checked(args, annotations, max_size, masks,
                                       empty_images, sanitize, pad_value,
                                       annotations_key, resize))
    else:
        for name, value, default in (
                ("annotations", annotations, None), ("max_size", max_size, None),
                ("masks", masks, False), ("empty_images", empty_images, "keep"),
                ("sanitize", sanitize, True), ("pad_value", pad_value, None),
                ("annotations_key", annotations_key, None)):
            if value != default:
                raise ValueError(f"{name} is for task='detection'")
    if train:
        if resize is not None:
            raise ValueError("resize is for recipe='val' (train uses "
                             "RandomResizedCrop's scale and ratio)")
        args["scale"] = _range("scale", scale, 0.0, 1.0)
        args["ratio"] = _range("ratio", ratio, 0.01, 100.0)
        if args["scale"][1] == 0.0:
            raise ValueError("scale's max must be above 0")
    elif recipe == "val" and args["resize"] is None:
        # torchvision's ImageNet evaluation: Resize(256) for CenterCrop(224)
        args["resize"] = int(round(min(args["size"]) * 256 / 224))
    if (args["mean"] is None) != (args["std"] is None):
        raise ValueError("mean and std go together (as torchvision's "
                         "Normalize): give both, or neither")
    if args["dtype"] == "uint8" and (args["mean"] or args["std"]):
        raise ValueError("mean and std need a float dtype "
                         "(dtype='float32', 'float16' or 'bfloat16')")
    if args["std"] is not None and 0.0 in args["std"]:
        raise ValueError("std must not be 0")
    if args["dtype"] == "bfloat16" and args["output"] == "numpy":
        raise ValueError("numpy has no bfloat16: use output='torch' "
                         "(or dtype='float16' or 'float32')")
    if args["device"] is not None and args["layout"] != "nchw":
        raise ValueError("device='cuda:N' takes layout='nchw' (spdlcudaupload "
                         "normalizes planes)")
    if args["device"] is not None and args["output"] != "torch":
        raise ValueError("device='cuda:N' gives CUDA tensors: it needs "
                         "output='torch'")
    return args


class _RecipeLoader(Loader):
    """What the recipe loaders share: their arguments checked by
    ``_checked`` into ``_args``, the launch line ``_build`` makes of them,
    the repr."""

    _checked = None

    @classmethod
    def launch_line_for(cls, location, **kwargs) -> str:
        """The launch line ``cls(location, **kwargs)`` runs, checked the
        same way, without building a pipeline."""
        bound = inspect.signature(cls.__init__).bind(None, location, **kwargs)
        bound.apply_defaults()
        args = dict(bound.arguments)
        args.pop("self")
        return masked(cls._build(cls._checked(**args)))

    @staticmethod
    def _build(a) -> str:
        raise NotImplementedError

    @property
    def gst_launch_command(self) -> str:
        """The same pipeline for a shell, into fakesink: gst-launch-1.0 ..."""
        return gst_launch_command(self.launch_line)

    def __repr__(self) -> str:
        """``ImageLoader('s3://...', batch_size=256, ...): running, 12
        batches``: the arguments, credentials masked (frameworks log their
        loaders' repr), then its state and the batches handed out."""
        a = self._args
        shown = ", ".join(f"{k}={v!r}" for k, v in a.items()
                          if k != "location" and v is not None)
        return (masked(f"{type(self).__name__}({a['location']!r}, {shown})")
                + f": {self._status()}")


class ImageLoader(_RecipeLoader):
    """Loads an image classification dataset with a torchvision recipe.

    ``recipe="val"`` is ``Resize(resize) + CenterCrop(size)`` (resize
    defaults to 256 for size 224, the same 0.875 ratio for other sizes);
    ``recipe="train"`` is ``RandomResizedCrop(size, scale, ratio) +
    RandomHorizontalFlip()``, shuffled each epoch. Batches are
    ``(images, labels)``: images ``N x 3 x H x W`` (uint8 0-255, or with a
    float ``dtype`` ``(x / 255 - mean) / std`` as ``Normalize(mean, std)``
    after ``ToTensor()``), labels int64 class indices as torchvision's
    ImageFolder assigns them.

    Arguments (all checked before any pipeline is built; a bad one raises
    ValueError or TypeError naming it):

    - ``location``: whatever spdlsrc takes: an ImageFolder tree (one folder
      per class), a manifest file (``relative/path<TAB>label`` per line),
      WebDataset tar shards (``/data/train-{000000..000099}.tar``), each of
      them local, over ``http(s)://`` or in ``s3://`` (see docs/remote.md).
    - ``batch_size``: samples per batch (256).
    - ``recipe``: "val" (default) or "train".
    - ``size``: output side, or (height, width) (224).
    - ``resize``: val only: shorter side before the center crop.
    - ``scale``, ``ratio``: train only: RandomResizedCrop's area share and
      aspect-ratio ranges ((0.08, 1.0) and (3/4, 4/3)).
    - ``flip``: random horizontal flip (default: train only).
    - ``shuffle``: a new order each epoch (default: train only).
    - ``seed``: seed of the shuffle and of the random crops; epoch E's order
      and crops depend only on (seed, E).
    - ``epochs``: epochs before the loader ends; None (default) runs until
      closed, and each ``for`` loop is one epoch.
    - ``start_epoch``: number of the first epoch (resume from a checkpoint
      taken at an epoch's end).
    - ``drop_last``: drop each epoch's last incomplete batch (False).
    - ``threads``: decoding threads (None: one per CPU).
    - ``dtype``: "uint8" (default), "float32", "float16" or "bfloat16" (or
      the torch dtype).
    - ``mean``, ``std``: normalization for a float dtype: one value or one
      per channel, in units of x / 255; "imagenet" for torchvision's
      ImageNet values.
    - ``device``: None (host memory) or "cuda:N" ("cuda": torchrun's
      LOCAL_RANK): batches are uploaded by spdlcudaupload and arrive as CUDA
      tensors.
    - ``output``: "torch" (default) or "numpy".
    - ``layout``: "nchw" (default, ``N x 3 x H x W``) or "nhwc" (channels
      last, ``N x H x W x 3``, as ``torch.channels_last`` memory wants).
    - ``max_errors``: bad samples (unreadable, undecodable) skipped before
      the loader fails, per element; None (default): no limit (each is
      warned about and counted, see :meth:`skipped`).
    - ``skip_recovered``: images whose data is damaged but decodes all the
      same, as PIL decodes it (a JPEG with a few corrupt bytes in its
      scan), are delivered as PIL delivers them, each warned about (reason
      ``recovered``) and counted (:meth:`Loader.recovered`); True skips them
      instead, counted in :meth:`skipped` as ``recovered``.
    - ``max_pixels``: images with more pixels are skipped (``too-large``)
      before any pixel memory is allocated; None: spdldecode's default,
      PIL's decompression bomb limit (178,956,970, above every photo a
      phone or camera makes); 0: no limit.
    - ``max_decode_memory``: bytes one decode may use for an image decoded
      whole (progressive JPEG, interlaced PNG, WebP...); larger ones are
      skipped as ``too-large``. None: spdldecode's default, enough for any
      image under the default ``max_pixels``; 0: no limit. Each decoding
      thread holds at most this.
    - ``shuffle_buffer``: tar shards: samples mixed when shuffling
      (spdlsrc's shuffle-buffer; None: its default).
    - ``src_properties``: other spdlsrc properties, e.g. ``{"s3-endpoint":
      "http://127.0.0.1:9000", "s3-profile": "train", "shard-cache": "",
      "http-timeout": 10000}`` (an unknown name or a bad value is a
      LoaderError naming it). ``s3-secret-key`` and ``s3-session-token``
      are set on spdlsrc, never in the line parsed (GStreamer logs it), and
      shown masked.
    - ``ranks``: how each epoch is split between distributed ranks:
      "auto" (default): by RANK and WORLD_SIZE when torchrun set them
      (logged once at INFO), else not; None: not split (a validation
      loader built on rank 0 only reads all of the data); (rank,
      world_size): as given (spdlsrc's shard-index and num-shards).
    - ``fields``: what each sample carries beside its image, in
      webdataset's ``to_tuple`` spelling (docs/record.md): e.g.
      ``("jpg;png", "txt", "json")`` from shards, ``("jpg", "caption",
      "score:float")`` from a CSV, ``("jpg", "seg.png:label")`` with
      masks beside images in a folder. Each batch is then that tuple: the
      field naming an image extension (or a manifest's path column) is the
      images, strings are ``list[str]``, JSON Python objects, int and
      float fields int64/float64 tensors, npy arrays one tensor (or a list
      when shapes differ), label images ``[B, H, W]`` through the same
      crop and flip; ``batch["txt"]``, ``batch.fields``, ``batch.labels``
      and ``batch.geometry`` (crop boxes in source pixels, flips) too.
      None (default): ``(images, labels)``.
    - ``log_limit``: bad samples named one by one in the ``spdlgst`` log
      per element and epoch (20; the rest are counted in the epoch's
      summary); spdlsrc's and spdldecode's ``warning-limit`` follow it, so
      that past 20 the files are still named.
    - ``exact``: True (default): pixels are torchvision's (PIL's decode
      and resize), bit for bit.
      False: JPEGs at least 2x the size asked for are downscaled in the
      DCT domain, faster (1.3x to 1.5x on photos of a few megapixels; no
      faster on images under 2x the target, such as ImageNet's 500x375 at
      224), with pixels that differ slightly from PIL's (well under a level
      on average); crops, flips, sizes and order stay the same.

    ``launch_line`` is the pipeline it runs (for gst-launch-1.0 or
    :class:`Loader`), credentials masked as in the repr (docs/remote.md).
    Under torchrun, RANK and WORLD_SIZE shard the dataset (see ``ranks``).

    For augmentation of your own, keep ``dtype="uint8"``, augment the batch
    in the loop (CPU or GPU), then :func:`spdlgst.normalize` it: a float
    batch normalized here would be clamped by augmentations that expect
    values in [0, 1] or [0, 255].

    **Detection** (docs/detection.md): ``task="detection"`` (the default
    when ``annotations`` is given) loads boxes, labels and optionally
    instance masks with each image, through the image's own resize, crop
    and flip exactly as torchvision's transforms v2 move
    ``tv_tensors.BoundingBoxes`` and ``Mask``. Batches are
    :class:`spdlgst.batch.DetectionBatch`: ``images, targets = batch``
    with ``targets`` one dict per image (``boxes`` float32 ``[N, 4]``
    x1, y1, x2, y2 pixels, ``labels`` int64 COCO ``category_id``,
    ``image_id`` int64, ``area`` float32, ``iscrowd`` int64, ``masks``
    uint8 ``[N, h, w]`` with ``masks=True``), views of the batch's flat
    tensors, as torchvision's detection models take them.

    - ``task``: "classification" (default without ``annotations``) or
      "detection" (default with them, and with ``annotations_key``).
    - ``annotations``: a COCO instances file (local, http(s):// or
      s3://); ``location`` is then the image folder (or URL prefix). The
      samples are its images in image id order (torchvision's
      CocoDetection's order).
    - ``annotations_key``: WebDataset tar shards as ``location``: the
      member holding each image's annotations in the COCO layout (a list
      of annotations, or an object with them as ``annotations`` and the
      image's ``image_id``) ("json" by default).
    - Detection's ``recipe``: "detection" (the default): random
      horizontal flip, then the shorter side to ``size`` with the longer
      at most ``max_size`` (torchvision's ``Resize(size, max_size)``);
      ``size`` a list draws one per image (DETR's multi-scale). Images of
      a batch are padded with zeros to its largest, rounded up to a
      multiple of 32; ``batch.image_sizes`` and ``batch.padding_mask``
      say where. "letterbox": the aspect ratio kept into ``size`` x
      ``size`` (640), centered, padded with ``pad_value`` (114), as YOLO
      trainers do. "train": RandomResizedCrop(size) + flip, boxes clamped
      to the crop. "val": Resize + CenterCrop as for classification.
    - Detection's ``size``: "detection": the shorter side (800) or a list of them;
      "letterbox": the square side (640) or (height, width).
    - ``max_size``: "detection" only: the longer side at most (1333; 0: no
      limit); more than the largest ``size``.
    - ``masks``: also each object's instance mask (polygons and RLE
      rasterized as pycocotools' annToMask does, then resized nearest)
      (False).
    - ``empty_images``: "keep" (default: N = 0, as CocoDetection) or
      "drop" (left out when the file is listed: ``len()`` counts without
      them; instances files only).
    - ``sanitize``: SanitizeBoundingBoxes(min_size=1, min_area=1) after
      the geometry, removing a box with its label, area, iscrowd and mask
      (True); False keeps every object.
    - ``pad_value``: "letterbox" only: the padding's value (114).
    - Detection's ``batch_size`` is 256 unless given: give them a
      smaller one (2 to 16 as detection trainers use).
    """

    def __init__(self, location: Union[str, os.PathLike], *,
                 batch_size: int = 256, recipe: Optional[str] = None,
                 size: Optional[Union[Size, Sequence[int]]] = None,
                 resize: Optional[int] = None,
                 scale: Tuple[float, float] = DEFAULT_SCALE,
                 ratio: Tuple[float, float] = DEFAULT_RATIO,
                 flip: Optional[bool] = None, shuffle: Optional[bool] = None,
                 seed: int = 0, epochs: Optional[int] = None,
                 start_epoch: int = 0, drop_last: bool = False,
                 threads: Optional[int] = None, dtype: DType = "uint8",
                 mean: Optional[Floats] = None, std: Optional[Floats] = None,
                 device: Device = None, output: str = "torch",
                 exact: bool = True, layout: str = "nchw",
                 max_errors: Optional[int] = None,
                 shuffle_buffer: Optional[int] = None,
                 src_properties: Optional[dict] = None,
                 ranks: Ranks = "auto", log_limit: int = 20,
                 skip_recovered: bool = False,
                 max_pixels: Optional[int] = None,
                 max_decode_memory: Optional[int] = None,
                 fields: Optional[Sequence[str]] = None,
                 annotations: Optional[Union[str, os.PathLike]] = None,
                 task: Optional[str] = None, max_size: Optional[int] = None,
                 masks: bool = False, empty_images: str = "keep",
                 sanitize: bool = True, pad_value: Optional[int] = None,
                 annotations_key: Optional[str] = None):
        args = _checked(**{k: v for k, v in locals().items()
                           if k not in ("self", "__class__")})
        if args["device"] is not None:
            Gst.init(None)
            if Gst.ElementFactory.find("spdlcudaupload") is None:
                raise LoaderError(
                    f"device={device!r} needs the spdlcudaupload element "
                    "(plugin spdlcuda, built where the CUDA toolkit is found), "
                    "which GStreamer does not find")
        self._args = args
        _start_loader(self, args)

    _checked = staticmethod(_checked)

    def _convert(self, sample: Gst.Sample):
        batch = super()._convert(sample)
        if self._args.get("task") != "detection":
            return batch
        from .batch import detection_batch

        return detection_batch(batch, _objects_field(self._args))

    @staticmethod
    def _build(a) -> str:
        src = [f"spdlsrc location={_quote(a['location'])}",
               f"shuffle={'true' if a['shuffle'] else 'false'}", f"seed={a['seed']}",
               f"num-epochs={a['epochs'] if a['epochs'] is not None else -1}"]
        if a["start_epoch"]:
            src.append(f"start-epoch={a['start_epoch']}")
        if a["shuffle_buffer"] is not None:
            src.append(f"shuffle-buffer={a['shuffle_buffer']}")
        if a["max_errors"] is not None:
            src.append(f"max-errors={a['max_errors']}")
        limit = _warning_limit(a)
        src += limit
        src += _fields_stage(a)
        src += _objects_src_stage(a)
        for key, value in a["src_properties"].items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            src.append(f"{key}={_quote(str(value))}")
        dec = ["spdldecode"] + _resize_stage(a)
        if a["flip"]:
            dec.append("flip=random-horizontal")
        dec.append(f"seed={a['seed']}")
        if a.get("masks"):
            dec.append("instance-masks=true")
        if a.get("task") == "detection" and not a["sanitize"]:
            dec.append("box-min-size=0 box-min-area=0")
        if a["threads"] is not None:
            dec.append(f"threads={a['threads']}")
        if not a["exact"]:
            dec.append("exact=false")
        if a["max_errors"] is not None:
            dec.append(f"max-errors={a['max_errors']}")
        if a["skip_recovered"]:
            dec.append("skip-recovered=true")
        dec += limit
        if a["max_pixels"] is not None:
            dec.append(f"max-pixels={a['max_pixels']}")
        if a["max_decode_memory"] is not None:
            dec.append(f"max-decode-memory={a['max_decode_memory']}")
        batch = [f"spdlbatch batch-size={a['batch_size']}"]
        if a["drop_last"]:
            batch.append("drop-last=true")
        batch.append(f"layout={a['layout']}")
        if a["recipe"] == "detection":
            batch.append(f"pad-multiple={DETECTION_PAD_MULTIPLE}")
        if a["dtype"] != "uint8":
            batch.append(f"dtype={a['dtype']}")
        if a["mean"] is not None:
            batch.append(f"mean={_array(a['mean'])}")
        if a["std"] is not None:
            batch.append(f"std={_array(a['std'])}")
        stages = [" ".join(src) + _ranks_stage(a), " ".join(dec),
                  " ".join(batch)]
        if a["device"] is not None:
            stages.append(f"spdlcudaupload cuda-device-id={a['device']}")
        stages.append("spdlappsink name=sink")
        return " ! ".join(stages)


VIDEO_EXTENSIONS = ("mp4", "mkv", "webm", "mov", "avi")
VIDEO_LAYOUTS = ("TCHW", "CTHW", "THWC")
SAMPLINGS = ("random", "uniform")
CROPS = ("random", "center")
SHORT_VIDEOS = ("repeat-last", "wrap", "skip", "error")


def _extensions(value, default=VIDEO_EXTENSIONS) -> Tuple[str, ...]:
    if value is None:
        return default
    if isinstance(value, str):
        value = value.split(",")
    out = []
    for v in value:
        if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9]+", v.lstrip(".")):
            raise ValueError(f"extensions must be file extensions like 'mp4', "
                             f"not {v!r}")
        out.append(v.lstrip(".").lower())
    if not out:
        raise ValueError("extensions must not be empty")
    return tuple(out)


def _frame_rate(value) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"frame_rate must be a number, not {value!r}")
    if not math.isfinite(value) or not 0 < value <= 1000:
        raise ValueError(f"frame_rate must be in (0, 1000] frames per second, "
                         f"not {value}")
    return float(value)


def _video_checked(location, batch_size, frames, stride, frame_rate,
                   clips_per_video, sampling, size, resize, crop, flip,
                   short_videos, shuffle, seed, epochs, start_epoch, drop_last,
                   threads, layout, output, max_errors, extensions,
                   src_properties, audio=False, sample_rate=16000,
                   audio_channels=1, ranks="auto", autorotate=True,
                   max_decode_frames=2000, log_limit=20, fields=None,
                   captions=None) -> dict:
    """The arguments of VideoLoader, checked and normalized."""
    if isinstance(layout, str):
        layout = layout.upper()
    args = dict(
        location=_location(location),
        batch_size=_int("batch_size", batch_size, 1, 2**31 - 1),
        frames=_int("frames", frames, 1, 1024),
        stride=_int("stride", stride, 1, 1024),
        frame_rate=_frame_rate(frame_rate),
        clips_per_video=_int("clips_per_video", clips_per_video, 1, 1024),
        sampling=_choice("sampling", sampling, SAMPLINGS),
        size=_int("size", size, 1, 65535, none_ok=True),
        resize=_int("resize", resize, 1, 65535, none_ok=True),
        crop=_choice("crop", crop, CROPS),
        autorotate=_bool("autorotate", autorotate, True),
        max_decode_frames=_int("max_decode_frames", max_decode_frames, 0,
                               2**32 - 1),
        short_videos=_choice("short_videos", short_videos, SHORT_VIDEOS),
        seed=_int("seed", seed, 0, 2**64 - 1),
        epochs=_int("epochs", epochs, 1, 2**31 - 1, none_ok=True),
        start_epoch=_int("start_epoch", start_epoch, 0, 2**31 - 1),
        drop_last=_bool("drop_last", drop_last, False),
        threads=_int("threads", threads, 1, 256, none_ok=True),
        layout=_choice("layout", layout, VIDEO_LAYOUTS),
        output=_choice("output", output, ("torch", "numpy")),
        max_errors=_int("max_errors", max_errors, 0, 2**31 - 1, none_ok=True),
        extensions=_extensions(extensions),
        src_properties=_src_properties(src_properties),
        audio=_bool("audio", audio, False),
        sample_rate=_int("sample_rate", sample_rate, 1000, 384000),
        audio_channels=_int("audio_channels", audio_channels, 1, 64),
        fields=_fields(fields, VIDEO_EXTENSIONS + ("video",)),
        log_limit=_int("log_limit", log_limit, 0, 2**32 - 1),
        captions=_column("captions", captions),
    )
    if args["captions"] and args["fields"] and \
            args["captions"] in args["fields"]["names"]:
        raise ValueError(f"captions={args['captions']!r} is in fields too: "
                         "give it once")
    args["ranks"] = _ranks(ranks, args["src_properties"])
    if "extensions" in args["src_properties"]:
        raise ValueError("src_properties['extensions']: use VideoLoader's own "
                         "argument")
    if args["audio"] and args["frame_rate"] is None:
        raise ValueError("audio=True needs a frame_rate: a clip's audio lasts "
                         "frames x stride / frame_rate seconds, the same for "
                         "every video of a batch")
    # training draws (random starts, random crops) flip and shuffle too
    args["flip"] = _bool("flip", flip, args["crop"] == "random")
    args["shuffle"] = _bool("shuffle", shuffle, args["sampling"] == "random")
    if args["size"] is not None and args["resize"] is not None and \
            args["resize"] < args["size"]:
        raise ValueError(f"resize ({args['resize']}) must be at least size "
                         f"({args['size']}): the crop is taken from the "
                         "resized frames")
    return args


def _column(name, value) -> Optional[str]:
    """A manifest column's name, as spdlsrc's fields take it."""
    if value is None:
        return None
    if not isinstance(value, str) or \
            not re.fullmatch(r"[A-Za-z0-9_.-]+", value):
        raise ValueError(f"{name} must name a manifest column (letters, "
                         f"digits, '_', '.', '-'), not {value!r}")
    return value


def _src_stage(a) -> str:
    """spdlsrc of a clip loader's launch line."""
    src = [f"spdlsrc location={_quote(a['location'])}",
           f"extensions={','.join(a['extensions'])}",
           f"shuffle={'true' if a['shuffle'] else 'false'}", f"seed={a['seed']}",
           f"num-epochs={a['epochs'] if a['epochs'] is not None else -1}"]
    if a["start_epoch"]:
        src.append(f"start-epoch={a['start_epoch']}")
    if a["max_errors"] is not None:
        src.append(f"max-errors={a['max_errors']}")
    src += _warning_limit(a)
    src += _fields_stage(a)
    if is_shards_location(a["location"]) and not a.get("fields") and \
            "image-key" not in a["src_properties"]:
        # a shard group's sample is its member of one of these extensions
        # (spdlsrc's image-key; its default picks images)
        src.append(f"image-key={_quote(';'.join(a['extensions']))}")
    if a.get("buckets"):
        src.append(f"buckets={a['buckets']}")
        if a["bucket_window"] != 10000:
            src.append(f"bucket-window={a['bucket_window']}")
    if a.get("batch_duration") is not None:
        src.append(f"batch-duration={a['batch_duration']!r}")
    if a.get("buckets") or a.get("batch_duration") is not None:
        # spdlsrc makes the batches (spdlbatch cuts at their ends): the
        # most samples one holds
        src.append(f"batch-size={a['batch_size']}")
    if a.get("max_duration") is not None:
        # a manifest's spans too long: skipped unread, in no batch's plan
        # (spdlaudiodecode's max-span: whole files)
        src.append(f"max-span={a['max_duration']!r}")
    for key, value in a["src_properties"].items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        src.append(f"{key}={_quote(str(value))}")
    return " ".join(src) + _ranks_stage(a)


def _batch_stage(a) -> str:
    batch = [f"spdlbatch batch-size={a['batch_size']}"]
    if a["drop_last"]:
        batch.append("drop-last=true")
    return " ".join(batch)


class _ClipLoader(_RecipeLoader):
    """What VideoLoader and AudioLoader share: batches of ``_make_batch``,
    paths from the listing."""

    _make_batch = None

    def __init__(self, args: dict):
        self._args = args
        self._samples_cache = None
        _start_loader(self, args)

    def _paths_of(self, indices):
        if self._samples_cache is None:
            try:
                self._samples_cache = self.samples
            except TypeError:       # tar shards: no listing by index
                self._samples_cache = False
        if self._samples_cache is False:
            return None
        return [self._samples_cache[i][0] for i in indices]

    def _convert(self, sample: Gst.Sample):
        from .batch import host_tensors

        torch = self._import_torch() if self.output == "torch" else None
        return type(self)._make_batch(sample, host_tensors(sample, torch),
                                      self._paths_of)


class VideoLoader(_ClipLoader):
    """Loads a video classification dataset as batches of clips.

    Each video gives ``clips_per_video`` clips of ``frames`` frames per
    epoch, decoded by GStreamer's demuxers and decoders
    (spdlvideodecode), resized so the shorter side is ``resize``, cropped
    to ``size`` x ``size`` (the crop and flip drawn once per clip), then
    batched by spdlbatch. Batches are :class:`spdlgst.batch.ClipBatch`:
    ``clips, labels = batch``, with ``batch.clips`` uint8
    ``[B, T, 3, H, W]`` (layout "CTHW": ``[B, 3, T, H, W]``, what
    torchvision's video models take; "THWC": ``[B, T, H, W, 3]``),
    ``batch.labels`` int64 ``[B]`` (as torchvision's folder datasets
    number the class folders), ``batch.pts`` float64 ``[B, T]`` (each
    frame's presentation time in seconds), ``batch.paths``.

    Arguments (all checked before any pipeline is built; a bad one raises
    ValueError or TypeError naming it):

    - ``location``: a folder of class folders of videos, a manifest or
      WebDataset tar shards, local, http(s):// or s3://, as for
      :class:`ImageLoader`. In shards the video is the member with one of
      ``extensions`` (spdlsrc's image-key, unless ``src_properties`` has
      one), the label the ``.cls`` member (``{"label-key": "json"}`` for
      JSON labels); ``batch.paths`` is None.
    - ``batch_size``: clips per batch (8).
    - ``frames``: frames per clip (16); ``stride``: take every stride-th
      frame (1).
    - ``frame_rate``: None (default): the video's own frames; F: the frame
      shown at start + k x stride / F, so clips of variable-frame-rate
      videos are evenly timed and every video's clip lasts as long.
    - ``clips_per_video``: clips from each video per epoch (1).
    - ``sampling``: "random" (default: starts drawn from (seed, epoch,
      video, clip)) or "uniform" (spaced evenly over the video).
    - ``size``: square crop side (112; None: no crop); ``resize``: the
      shorter side first (128; None: size, or the decoded size without
      size: clips of different sizes in one batch are then an error).
    - ``crop``: "random" (default) or "center".
    - ``flip``: random horizontal flip (default: with crop="random").
    - ``autorotate``: frames as players and FFmpeg show them (True,
      default): a rotation in the container (an MP4 display matrix, as
      phones record portrait video) is applied before resize and crop;
      False: frames as stored.
    - ``max_decode_frames``: a clip that needs more frames decoded from
      its keyframes (a long GOP, a clip far after its keyframe) is left
      out, counted as "too-many-decode-frames" (2000; 0: no limit). It
      bounds each clip's work, not the video's.
    - ``short_videos``: a video shorter than a clip: "repeat-last"
      (default, the last frame repeated), "wrap", "skip" (warned,
      counted), "error".
    - ``shuffle``: a new video order each epoch (default: with
      sampling="random"); ``seed``: of the order, starts, crops and flips.
    - ``epochs``, ``start_epoch``, ``drop_last``, ``threads``,
      ``max_errors``, ``src_properties``, ``output``, ``ranks``,
      ``log_limit``: as for :class:`ImageLoader`.
    - ``fields``: as for :class:`ImageLoader`; the field naming a video
      extension (or a manifest's path column) is the clips.
    - ``layout``: "TCHW" (default), "CTHW" or "THWC".
    - ``extensions``: of the video files a folder lists, and of the
      video members of tar shards (mp4, mkv, webm, mov, avi).
    - ``captions``: a manifest column holding each entry's caption
      (WebVid's "name"): ``batch.captions`` (and ``batch[captions]``) is
      then a ``list[str]`` of them, as the manifest has them.

    Video-text manifests (docs/speech.md): a CSV/TSV/JSONL with a path
    column and a ``start`` (or ``offset``) column in seconds, optionally
    ``end`` (or ``duration``), gives each entry's clip from its start:
    ``sampling`` does not move it (with ``frame_rate``, the frames shown
    at start + k x stride / frame_rate). Several entries of one video are
    separate samples.
    - ``audio``: also each clip's span of the video's audio (False):
      ``batch.audio`` float32 ``[B, audio_channels, N]`` from the clip's
      first frame's pts for frames x stride / frame_rate seconds (needs
      ``frame_rate``), N = round(that x sample_rate), decoded from the same
      file in memory; ``batch.has_audio`` bool ``[B]`` is False (and the
      audio zeros) for a video without an audio stream. ``sample_rate``:
      Hz (16000); ``audio_channels``: 1 (default) or more, mixed as
      :class:`AudioLoader` mixes ``channels``. AAC in MP4 ends where its
      edit list ends, except with GStreamer 1.22.0 to 1.22.2 (Debian
      12's), whose qtdemux drops the frame the edit list ends in (the
      last 512 samples at 48 kHz of a 4 s video are zeros in its clip).

    ``launch_line`` is the pipeline it runs. ``state_dict`` and
    ``load_state_dict`` resume as for images (a clip is chosen from seed,
    epoch, video and clip number only): with one clip per video, exactly
    the rest of the epoch; with several, a video whose clips a checkpoint
    splits gives all its clips again.
    """

    def __init__(self, location: Union[str, os.PathLike], *,
                 batch_size: int = 8, frames: int = 16, stride: int = 1,
                 frame_rate: Optional[float] = None, clips_per_video: int = 1,
                 sampling: str = "random", size: Optional[int] = 112,
                 resize: Optional[int] = 128, crop: str = "random",
                 flip: Optional[bool] = None,
                 short_videos: str = "repeat-last",
                 shuffle: Optional[bool] = None, seed: int = 0,
                 epochs: Optional[int] = None, start_epoch: int = 0,
                 drop_last: bool = False, threads: Optional[int] = None,
                 layout: str = "TCHW", output: str = "torch",
                 max_errors: Optional[int] = None,
                 extensions: Optional[Sequence[str]] = None,
                 src_properties: Optional[dict] = None, audio: bool = False,
                 sample_rate: int = 16000, audio_channels: int = 1,
                 ranks: Ranks = "auto", autorotate: bool = True,
                 max_decode_frames: int = 2000, log_limit: int = 20,
                 fields: Optional[Sequence[str]] = None,
                 captions: Optional[str] = None):
        args = _video_checked(**{k: v for k, v in locals().items()
                                 if k not in ("self", "__class__")})
        super().__init__(args)

    _checked = staticmethod(_video_checked)

    def _convert(self, sample: Gst.Sample):
        batch = super()._convert(sample)
        if self._args["captions"]:
            batch.captions = batch.fields[self._args["captions"]]
        return batch

    @staticmethod
    def _make_batch(sample, tensors, paths_of):
        from .batch import clip_batch

        return clip_batch(sample, tensors, paths_of)

    @staticmethod
    def _build(a) -> str:
        dec = [f"spdlvideodecode frames={a['frames']} stride={a['stride']}"]
        if a["frame_rate"] is not None:
            dec.append(f"frame-rate={a['frame_rate']!r}")
        dec += [f"clips-per-video={a['clips_per_video']}",
                f"sampling={a['sampling']}",
                f"size={a['size'] or 0} resize={a['resize'] or 0}",
                f"crop={a['crop']}", f"flip={'true' if a['flip'] else 'false'}",
                f"autorotate={'true' if a['autorotate'] else 'false'}",
                f"max-decode-frames={a['max_decode_frames']}",
                f"short-videos={a['short_videos']}", f"seed={a['seed']}",
                f"layout={a['layout'].lower()}"]
        if a.get("audio"):
            dec.append(f"audio=true sample-rate={a['sample_rate']} "
                       f"channels={a['audio_channels']}")
        if a["threads"] is not None:
            dec.append(f"threads={a['threads']}")
        if a["max_errors"] is not None:
            dec.append(f"max-errors={a['max_errors']}")
        dec += _warning_limit(a)
        return " ! ".join([_src_stage(a), " ".join(dec), _batch_stage(a),
                           "spdlappsink name=sink"])


AUDIO_EXTENSIONS = ("wav", "flac", "mp3", "ogg", "opus", "m4a")
AUDIO_SAMPLINGS = ("random", "uniform", "start")
SHORT_FILES = ("pad", "repeat", "skip", "error")


def _duration(value) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"duration must be a number of seconds or None, "
                        f"not {value!r}")
    if not math.isfinite(value) or not 0 < value <= 86400:
        raise ValueError(f"duration must be in (0, 86400] seconds (None: "
                         f"whole files), not {value}")
    return float(value)


def _seconds(name, value, none_ok=True) -> Optional[float]:
    """Seconds > 0 (None where @none_ok)."""
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds"
                        f"{' or None' if none_ok else ''}, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a number of seconds above 0, "
                         f"not {value}")
    return float(value)


# where spdlsrc reads an entry's transcript from, first found first
TEXT_COLUMNS = ("text", "text_filepath", "normalized_text")


# JSON Lines entries looked at for a transcript key (each row has its own
# keys: a first entry without one does not make a manifest of none)
TRANSCRIPT_PROBE_LINES = 1000


def _has_transcripts(location: str) -> bool:
    """Whether a local manifest has a transcript column: a table's header,
    or any of the first JSON Lines objects; True for remote manifests,
    which are not read here."""
    import csv
    import itertools
    import json

    if location.startswith(("http://", "https://", "s3://")):
        return True
    try:
        with open(location, encoding="utf-8-sig", newline="") as f:
            lines = [line for line in itertools.islice(
                (line for line in f if line.strip()), TRANSCRIPT_PROBE_LINES)]
    except (OSError, UnicodeDecodeError):
        return True             # spdlsrc names what is wrong with it
    if location.lower().endswith((".csv", ".tsv")):
        delimiter = "\t" if location.lower().endswith(".tsv") else ","
        columns = next(csv.reader(lines[:1], delimiter=delimiter), [])
        return any(c.strip() in TEXT_COLUMNS for c in columns)
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            return True
        if not isinstance(entry, dict) or \
                any(c in entry for c in TEXT_COLUMNS):
            return True
    return False


# spdlbatch's most samples a batch holds when batch_duration cuts batches
# and batch_size is not given
BATCH_DURATION_CAP = 1024


def _audio_checked(location, batch_size, sample_rate, channels, duration,
                   clips_per_file, sampling, short_files, shuffle, seed,
                   epochs, start_epoch, drop_last, threads, quality, exact,
                   output, max_errors, extensions, src_properties,
                   ranks="auto", log_limit=20, fields=None,
                   max_duration=None, buckets=0, bucket_window=10000,
                   batch_duration=None, text=None) -> dict:
    """The arguments of AudioLoader, checked and normalized."""
    batch_duration = _seconds("batch_duration", batch_duration)
    if batch_size is None:
        batch_size = 32 if batch_duration is None else BATCH_DURATION_CAP
    args = dict(
        location=_location(location),
        batch_size=_int("batch_size", batch_size, 1, 2**31 - 1),
        sample_rate=_int("sample_rate", sample_rate, 1000, 384000),
        channels=_int("channels", channels, 1, 64),
        duration=_duration(duration),
        clips_per_file=_int("clips_per_file", clips_per_file, 1, 1024),
        sampling=_choice("sampling", sampling, AUDIO_SAMPLINGS),
        short_files=_choice("short_files", short_files, SHORT_FILES),
        seed=_int("seed", seed, 0, 2**64 - 1),
        epochs=_int("epochs", epochs, 1, 2**31 - 1, none_ok=True),
        start_epoch=_int("start_epoch", start_epoch, 0, 2**31 - 1),
        drop_last=_bool("drop_last", drop_last, False),
        threads=_int("threads", threads, 1, 256, none_ok=True),
        quality=_int("quality", quality, 0, 10),
        exact=_bool("exact", exact, True),
        output=_choice("output", output, ("torch", "numpy")),
        max_errors=_int("max_errors", max_errors, 0, 2**31 - 1, none_ok=True),
        extensions=_extensions(extensions, AUDIO_EXTENSIONS),
        src_properties=_src_properties(src_properties),
        log_limit=_int("log_limit", log_limit, 0, 2**32 - 1),
        fields=_fields(fields, AUDIO_EXTENSIONS + ("audio",)),
        max_duration=_seconds("max_duration", max_duration),
        buckets=_int("buckets", buckets, 0, 2**31 - 1),
        bucket_window=_int("bucket_window", bucket_window, 1, 2**31 - 1),
        batch_duration=batch_duration,
    )
    args["ranks"] = _ranks(ranks, args["src_properties"])
    if "extensions" in args["src_properties"]:
        raise ValueError("src_properties['extensions']: use AudioLoader's own "
                         "argument")
    for key in ("buckets", "bucket-window", "batch-duration"):
        if key in args["src_properties"]:
            raise ValueError(f"src_properties[{key!r}]: use AudioLoader's "
                             f"own argument ({key.replace('-', '_')}=)")
    if args["duration"] is not None and \
            (args["buckets"] or args["batch_duration"] is not None):
        raise ValueError("buckets and batch_duration group whole segments "
                         "by their manifest durations: they need "
                         "duration=None")
    named = args["fields"]["names"] if args["fields"] else ()
    manifest = args["location"].lower().endswith((".json",) + TABLE_SUFFIXES)
    args["text"] = _bool("text", text, args["duration"] is None and manifest
                         and "text" not in named and
                         _has_transcripts(args["location"]))
    if args["text"] and "text" in named:
        raise ValueError("text=True and 'text' in fields: give it once")
    if args["duration"] is None and args["clips_per_file"] != 1:
        raise ValueError(f"clips_per_file must be 1 with duration=None "
                         f"(whole files), not {args['clips_per_file']}")
    if args["duration"] is not None and \
            round(args["duration"] * args["sample_rate"]) < 1:
        raise ValueError(f"duration {args['duration']} s is less than one "
                         f"sample at {args['sample_rate']} Hz")
    args["shuffle"] = _bool("shuffle", shuffle, args["sampling"] == "random")
    return args


class AudioLoader(_ClipLoader):
    """Loads an audio dataset as batches of fixed-length clips at one
    sample rate (classification), or of whole utterances with their
    transcripts (speech recognition: ``duration=None`` on a manifest).

    Each file gives ``clips_per_file`` clips of ``duration`` seconds per
    epoch, decoded by their codec's library (WAV, FLAC, MP3, Ogg Opus and
    Vorbis) or else by GStreamer's demuxers and decoders, mixed to
    ``channels`` and resampled to ``sample_rate`` (spdlaudiodecode; only a
    clip's span is decoded), then batched by spdlbatch. Batches are
    :class:`spdlgst.batch.AudioBatch`: ``audio, labels = batch``, with
    ``batch.audio`` float32 ``[B, C, N]`` (N = duration x sample_rate,
    values in [-1, 1]), ``batch.labels`` int64 ``[B]`` (as torchvision's
    folder datasets number the class folders), ``batch.start`` float64
    ``[B]`` (each clip's start in seconds in its file), ``batch.lengths``
    int64 ``[B]`` (samples from the file; the rest of the row is zeros),
    ``batch.paths``.

    Arguments (all checked before any pipeline is built; a bad one raises
    ValueError or TypeError naming it):

    - ``location``: a folder of class folders of audio files, a manifest
      or WebDataset tar shards, local, http(s):// or s3://, as for
      :class:`ImageLoader`; in shards the audio file is the member with
      one of ``extensions``, as for :class:`VideoLoader`.
    - ``batch_size``: clips per batch (32; see ``batch_duration``).
    - ``sample_rate``: output rate in Hz (16000); ``channels``: output
      channels (1). Fewer than the file's are audioconvert's default mix
      by channel position: every channel kept, scaled so that no sum
      clips; stereo to mono is the mean, 5.1 to stereo keeps the centre
      and surrounds (left = 0.31 FL + 0.22 FC + 0.31 LFE + 0.16 SL), 5.1
      to mono includes the LFE (FFmpeg's ``-ac`` leaves it out and does
      not scale). A mono file is copied to every channel; more channels
      than the file's: channel k of the file in channel k, the rest
      silent.
    - ``duration``: seconds per clip (1.0); None: whole files, padded with
      zeros to the longest of their batch (``lengths`` tells).
    - ``clips_per_file``: clips from each file per epoch (1).
    - ``sampling``: "random" (default: starts drawn from (seed, epoch,
      file, clip)), "uniform" (spaced evenly over the file) or "start".
    - ``short_files``: a file shorter than a clip: "pad" (default, zeros;
      ``lengths`` tells), "repeat", "skip" (warned, counted), "error".
    - ``shuffle``: a new file order each epoch (default: with
      sampling="random"); ``seed``: of the order and the starts.
    - ``quality``: of the resampler, 0 to 10 (4).
    - ``exact``: a clip of a lossy file equals the same samples of the file
      decoded from its start, within 1e-4 (True). False: Ogg Opus clips
      are decoded from Opus's own 80 ms pre-roll, as FFmpeg seeks, with
      less CPU (1.08 s decoded for a 1 s clip rather than 1.6 s); they
      are then up to 0.03 off on low-bitrate speech, the same from run to
      run.
    - ``epochs``, ``start_epoch``, ``drop_last``, ``threads``,
      ``max_errors``, ``src_properties``, ``output``, ``ranks``,
      ``log_limit``: as for :class:`ImageLoader`.
    - ``fields``: as for :class:`ImageLoader`; the field naming an audio
      extension, ``"audio"`` or a manifest's path column is the audio (a
      manifest's other keys: ``fields=("audio", "lang")``; on a manifest,
      fields none of which names the audio are an error).
    - ``extensions``: of the audio files a folder lists, and of the audio
      members of tar shards (wav, flac, mp3, ogg, opus, m4a).

    Speech recognition (docs/speech.md): ``location`` a manifest of
    utterances, NeMo's JSON Lines (``.json`` or ``.jsonl``:
    ``audio_filepath``, ``duration``, optional ``offset``, ``text``) or a
    CSV/TSV/JSONL with a path column, ``offset`` or ``start`` and
    ``duration`` or ``end`` (seconds), paths relative to the manifest's
    folder. Several entries of one file are separate samples, each
    decoded from its own offset. With ``duration=None`` each entry's
    whole segment ``[offset, offset + duration)`` is one row of
    ``batch.audio``, padded with zeros to the longest of its batch,
    ``batch.lengths`` its samples, ``batch["text"]`` the transcripts
    (``list[str]``, as the manifest has them).

    - ``text``: each entry's transcript as ``batch["text"]``: NeMo's
      ``text``, else the file ``text_filepath`` names, else
      ``normalized_text``; a table's ``text`` column. Default: True for
      whole segments (``duration=None``) of a manifest with one of those
      (a table's header; any of the first 1000 JSON Lines entries;
      remote manifests: True); an
      entry without one is then skipped, warned and counted
      (``missing-field``).

    - ``max_duration``: entries longer than this many seconds are skipped
      before decoding (a manifest's, before reading, and left out of the
      buckets' batches), counted in :meth:`skipped` as ``too-long``
      (None: no limit).
    - ``buckets``: 0 (default) or the number of duration buckets (bounds
      at quantiles of the epoch's durations): each batch holds entries of
      one bucket, drawn within windows of ``bucket_window`` entries of the
      shuffled epoch (10000), so padding stays small. Deterministic from
      ``seed`` and the epoch, resumable like every order.
    - ``batch_duration``: seconds of audio per batch rather than a count:
      a batch closes before the entry that would take its total (the
      manifest's durations) past this; ``batch_size`` stays the most a
      batch holds (with ``batch_duration`` and no ``batch_size``: 1024).
      ``len()`` counts the batches the epoch's order makes.

    ``launch_line`` is the pipeline it runs. ``state_dict`` and
    ``load_state_dict`` resume as for images (a clip is chosen from seed,
    epoch, file and clip number only): with one clip per file, exactly the
    rest of the epoch; with several, a file whose clips a checkpoint
    splits gives all its clips again. With ``buckets`` or
    ``batch_duration`` a resumed epoch gives the same batches as an
    uninterrupted one.
    """

    def __init__(self, location: Union[str, os.PathLike], *,
                 batch_size: Optional[int] = None, sample_rate: int = 16000,
                 channels: int = 1, duration: Optional[float] = 1.0,
                 clips_per_file: int = 1, sampling: str = "random",
                 short_files: str = "pad", shuffle: Optional[bool] = None,
                 seed: int = 0, epochs: Optional[int] = None,
                 start_epoch: int = 0, drop_last: bool = False,
                 threads: Optional[int] = None, quality: int = 4,
                 exact: bool = True,
                 output: str = "torch", max_errors: Optional[int] = None,
                 extensions: Optional[Sequence[str]] = None,
                 src_properties: Optional[dict] = None,
                 ranks: Ranks = "auto", log_limit: int = 20,
                 fields: Optional[Sequence[str]] = None,
                 max_duration: Optional[float] = None, buckets: int = 0,
                 bucket_window: int = 10000,
                 batch_duration: Optional[float] = None,
                 text: Optional[bool] = None):
        args = _audio_checked(**{k: v for k, v in locals().items()
                                 if k not in ("self", "__class__")})
        super().__init__(args)

    _checked = staticmethod(_audio_checked)

    @staticmethod
    def _make_batch(sample, tensors, paths_of):
        from .batch import audio_batch

        return audio_batch(sample, tensors, paths_of)

    @staticmethod
    def _build(a) -> str:
        dec = [f"spdlaudiodecode sample-rate={a['sample_rate']}",
               f"channels={a['channels']}",
               f"duration={a['duration'] or 0!r}",
               f"clips-per-file={a['clips_per_file']}",
               f"sampling={a['sampling']}",
               f"short-files={a['short_files']}", f"seed={a['seed']}"]
        if a["quality"] != 4:
            dec.append(f"quality={a['quality']}")
        if not a["exact"]:
            dec.append("exact=false")
        if a["max_duration"] is not None:
            dec.append(f"max-span={a['max_duration']!r}")
        if a["threads"] is not None:
            dec.append(f"threads={a['threads']}")
        if a["max_errors"] is not None:
            dec.append(f"max-errors={a['max_errors']}")
        dec += _warning_limit(a)
        return " ! ".join([_src_stage(a), " ".join(dec), _batch_stage(a),
                           "spdlappsink name=sink"])


def gst_launch_command(launch_line: str) -> str:
    """A shell command running @launch_line with gst-launch-1.0, the
    spdlappsink at its end replaced by fakesink."""
    line = launch_line.replace("spdlappsink name=sink", "fakesink")
    return "gst-launch-1.0 " + " ".join(
        w if w == "!" else shlex.quote(w) for w in _words(line))


def _words(line: str):
    """The launch line's words, quotes kept together (for shell quoting)."""
    words, word, quoted = [], "", False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and quoted and i + 1 < len(line):
            word += line[i + 1]
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == " " and not quoted:
            if word:
                words.append(word)
            word = ""
        else:
            word += c
        i += 1
    if word:
        words.append(word)
    return words
