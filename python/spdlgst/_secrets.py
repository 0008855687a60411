"""Credentials masked wherever spdlgst shows text: reprs, errors, warnings,
the launch lines it displays.

Training frameworks log their data loaders' repr and the errors they raise
(hydra configs, Lightning summaries, experiment trackers), so nothing
spdlgst prints may hold a secret. The secret key and session token become
``***``; the access key ID keeps its last four characters, as
``aws configure list`` shows it (it names the key, it signs nothing); in
URLs, a userinfo password and the query parameters that carry a
signature or a token (presigned S3 URLs, SAS tokens) become ``***``.
"""
from __future__ import annotations

import re
from typing import Optional

MASK = "***"
# spdlsrc's properties that hold a secret, masked entirely
SECRET_PROPERTIES = ("s3-secret-key", "s3-session-token")
# the property that names a key: masked but for its last 4 characters
KEY_ID_PROPERTIES = ("s3-access-key",)

_NAMES = "|".join(re.escape(n) for n in SECRET_PROPERTIES + KEY_ID_PROPERTIES)
# name=value in a launch line (quoted or not), 'name': 'value' in a dict's
# repr
_ASSIGNED = re.compile(
    r"""(?P<name>\b(?:%s))(?P<sep>\s*=\s*)(?P<value>"(?:[^"\\]|\\.)*"|[^\s!]+)"""
    % _NAMES)
_IN_DICT = re.compile(
    r"""(?P<name>(?P<q>['"])(?:%s)(?P=q))(?P<sep>\s*:\s*)"""
    r"""(?P<value>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^,}\s]+)""" % _NAMES)
# secret query parameters of presigned and SAS URLs, and a userinfo password;
# the C side masks the same in its messages and logs
# (gst-libs/gst/spdldata/gstspdlredact.c): the two must agree, as
# tests/python/test_remote.py::test_presigned_url_secret_never_printed_by_spdlsrc
# checks
_QUERY = re.compile(r"(?i)(?P<name>[?&](?:x-amz-signature|x-amz-security-token|"
                    r"x-amz-credential|signature|sig|x-goog-signature|token|"
                    r"access_token)=)(?P<value>[^&#\s\"']+)")
_USERINFO = re.compile(r"(?P<name>\b[a-z][a-z0-9+.-]*://[^/@\s:\"']*:)"
                       r"(?P<value>[^/@\s\"']+)(?=@)")


def _shown(name: str, value: str) -> str:
    """@value of property @name as it may be shown."""
    quote = value[0] if value[:1] in ("'", '"') and len(value) >= 2 else ""
    inner = value[1:-1] if quote else value
    if any(name.strip("'\"") == k for k in KEY_ID_PROPERTIES) and len(inner) > 4:
        inner = MASK + inner[-4:]
    else:
        inner = MASK
    return f"{quote}{inner}{quote}"


def masked(text: Optional[str]) -> Optional[str]:
    """@text with every credential in it masked (None stays None)."""
    if not text:
        return text
    text = _ASSIGNED.sub(lambda m: m["name"] + m["sep"]
                         + _shown(m["name"], m["value"]), text)
    text = _IN_DICT.sub(lambda m: m["name"] + m["sep"]
                        + _shown(m["name"], m["value"]), text)
    text = _QUERY.sub(lambda m: m["name"] + MASK, text)
    return _USERINFO.sub(lambda m: m["name"] + MASK, text)
