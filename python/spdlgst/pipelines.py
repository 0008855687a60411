"""The ready launch lines of pipelines/, with $DATASET filled in."""
import os
import string

HERE = os.path.dirname(os.path.abspath(__file__))
PIPELINES = os.path.join(HERE, "..", "..", "pipelines")


def available():
    """Names of the ready pipelines (files pipelines/NAME.launch)."""
    return sorted(f[:-len(".launch")] for f in os.listdir(PIPELINES)
                  if f.endswith(".launch"))


def launch_line(name, dataset, **overrides):
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
