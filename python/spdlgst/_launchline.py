"""Launch-line syntax shared by the recipes and the ready pipelines."""


def quote(value: str) -> str:
    """A launch-line value: quoted when it has spaces or special characters."""
    if value and all(c.isalnum() or c in "/._-+,:@%" for c in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
