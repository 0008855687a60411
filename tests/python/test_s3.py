"""spdlsrc on S3: moto_server on 127.0.0.1 with its signature checks on.

The bucket is written while moto accepts anything; then its authentication
is switched on (POST /moto-api/reset-auth 0) and every request must carry a
SigV4 signature of an IAM user's key that its policy allows, as on AWS."""
import http.server
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from gi.repository import Gst

from test_remote import (Server, data, proxy, read_log,  # noqa: F401
                         N_SAMPLES)
from test_shards import run_src, key_of

REGION = "eu-west-1"


def venv_python():
    python = os.path.join(os.environ.get("SPDL_TEST_VENV", ""), "bin", "python")
    if not os.path.exists(python):
        pytest.skip("no test venv with moto (tools/make-test-venv)")
    return python


# Runs in the test venv (boto3) while moto checks nothing: users, keys,
# policies, a role, the bucket and its objects; prints the keys as JSON.
SETUP = """
import json, os, sys, boto3
url, root, region = sys.argv[1], sys.argv[2], sys.argv[3]
kw = dict(endpoint_url=url, region_name=region,
          aws_access_key_id="AKIDSETUP", aws_secret_access_key="setup")
iam = boto3.client("iam", **kw)
def policy(actions, resources=None):
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": actions,
        "Resource": resources or ["arn:aws:s3:::data", "arn:aws:s3:::data/*"]}]})
keys = {}
for user, actions, resources in (
        ("loader", ["s3:GetObject", "s3:ListBucket"], None),
        ("admin", ["s3:*"], None), ("stranger", None, None),
        # a training role that may read the shards and nothing else (no
        # ListBucket): S3 answers it AccessDenied for any other key,
        # present or not
        ("shards-only", ["s3:GetObject"], ["arn:aws:s3:::data/ds/shards/*.tar"]),
        # a user that may only assume roles (a profile's source_profile)
        ("assumer", ["sts:AssumeRole"], ["*"])):
    iam.create_user(UserName=user)
    if actions:
        iam.put_user_policy(UserName=user, PolicyName="data",
                            PolicyDocument=policy(actions, resources))
    k = iam.create_access_key(UserName=user)["AccessKey"]
    keys[user] = [k["AccessKeyId"], k["SecretAccessKey"]]
# any bucket, for the missing-bucket test
iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
     "Action": ["s3:*"], "Resource": ["*"]}]}))
iam.create_role(RoleName="reader", AssumeRolePolicyDocument=json.dumps({
    "Version": "2012-10-17", "Statement": [{"Effect": "Allow",
    "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}))
iam.put_role_policy(RoleName="reader", PolicyName="data",
                    PolicyDocument=policy(["s3:GetObject", "s3:ListBucket"]))
# a role that only callers naming its external id may assume
iam.create_role(RoleName="partner", AssumeRolePolicyDocument=json.dumps({
    "Version": "2012-10-17", "Statement": [{"Effect": "Allow",
    "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole",
    "Condition": {"StringEquals": {"sts:ExternalId": "team-42"}}}]}))
iam.put_role_policy(RoleName="partner", PolicyName="data",
                    PolicyDocument=policy(["s3:GetObject", "s3:ListBucket"]))
s3 = boto3.client("s3", **kw)
s3.create_bucket(Bucket="data",
                 CreateBucketConfiguration={"LocationConstraint": region})
for dirpath, _, files in os.walk(root):
    for f in files:
        path = os.path.join(dirpath, f)
        s3.upload_file(path, "data", "ds/" + os.path.relpath(path, root))
sts = boto3.client("sts", **kw)
role = sts.assume_role(RoleArn="arn:aws:iam::123456789012:role/reader",
                       RoleSessionName="spdl")["Credentials"]
keys["role"] = [role["AccessKeyId"], role["SecretAccessKey"],
                role["SessionToken"]]
print(json.dumps(keys))
"""


class MotoServer:
    """moto_server on a free port of 127.0.0.1, up once it accepts."""

    def __init__(self, python):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = subprocess.Popen(
            [python, "-c", "import sys; from moto.server import main; "
             "main(['-H', '127.0.0.1', '-p', '%d'])" % self.port],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return
            except OSError:
                assert self.proc.poll() is None, "moto_server exited"
                time.sleep(0.1)
        self.stop()
        raise AssertionError("moto_server did not start")

    def require_signatures(self):
        req = urllib.request.Request(self.url + "/moto-api/reset-auth",
                                     data=b"0", method="POST",
                                     headers={"Content-Type": "text/plain"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200

    def stop(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def s3(data):
    python = venv_python()
    base, truth, pattern, _ = data
    server = MotoServer(python)
    try:
        out = subprocess.run([python, "-c", SETUP, server.url, str(base), REGION],
                             check=True, timeout=180, capture_output=True,
                             text=True).stdout
        server.keys = json.loads(out)
        server.require_signatures()
        yield server
    finally:
        server.stop()


def s3_env(monkeypatch, server, user="loader"):
    """The user's key in the AWS_* variables, nothing else in the chain."""
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.url)
    monkeypatch.setenv("AWS_REGION", REGION)
    key = server.keys[user]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key[1])
    if len(key) > 2:
        monkeypatch.setenv("AWS_SESSION_TOKEN", key[2])


def test_signature_checks_are_on(data, s3):
    """The fixture's premise: moto refuses a request without a signature
    (with 403, or 500 where its check trips over the missing header)."""
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(s3.url + "/data/ds/folder/c0/", timeout=10)
    assert e.value.code in (403, 500)


def test_s3_image_folder_and_shards(data, s3, monkeypatch):
    base, truth, pattern, _ = data
    s3_env(monkeypatch, s3)
    out, warnings, error, _ = run_src('location="s3://data/ds/folder/"')
    assert error is None and warnings == [] and len(out) == N_SAMPLES
    for _, label, _, p, d in out:
        assert p.startswith("s3://data/ds/folder/")
        key = p.split("/folder/", 1)[1].rsplit(".", 1)[0]
        assert (label, d) == truth[key]
    out, warnings, error, _ = run_src('location="s3://data/ds/shards/%s" shuffle=true' % pattern)
    assert error is None and warnings == []
    assert sorted(o[0] for o in out) == list(range(N_SAMPLES))
    for _, label, _, p, d in out:
        assert (label, d) == truth[key_of(p)]


def test_s3_session_token_is_signed(data, s3, monkeypatch):
    """Temporary credentials (an assumed role): the token travels signed."""
    base, truth, pattern, _ = data
    s3_env(monkeypatch, s3, "role")
    out, warnings, error, _ = run_src('location="s3://data/ds/folder/"')
    assert error is None and warnings == [] and len(out) == N_SAMPLES
    monkeypatch.setenv("AWS_SESSION_TOKEN", "not-the-token")
    out, warnings, error, _ = run_src('location="s3://data/ds/folder/"')
    assert error is not None and out == []
    assert "not-the-token" not in error


def test_s3_manifest_of_urls(data, s3, monkeypatch, tmp_path):
    base, truth, _, _ = data
    s3_env(monkeypatch, s3)
    path = tmp_path / "s3.tsv"
    path.write_text("".join("s3://data/ds/folder/%s.jpg\t%d\n" % (k, label)
                            for k, (label, _) in sorted(truth.items())))
    out, warnings, error, _ = run_src('location="%s"' % path)
    assert error is None and warnings == [] and len(out) == N_SAMPLES
    for _, label, _, p, d in out:
        assert (label, d) == truth[p.split("/folder/", 1)[1].rsplit(".", 1)[0]]


@pytest.mark.parametrize("case", ["wrong-secret", "unknown-key", "denied"])
def test_s3_refusals_say_why(data, s3, monkeypatch, case):
    """S3's error code and message, and where the key came from; never the
    secret, never blamed on an index file."""
    s3_env(monkeypatch, s3, "stranger" if case == "denied" else "loader")
    if case == "wrong-secret":
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-SECRET-value")
    elif case == "unknown-key":
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUNKNOWNKEY000000")
    for location in ("s3://data/ds/folder/", "s3://data/ds/shards/%s" % data[2]):
        out, warnings, error, _ = run_src('location="%s"' % location)
        assert error is not None and out == [], location
        code = {"wrong-secret": "SignatureDoesNotMatch",
                "unknown-key": "InvalidAccessKeyId",
                "denied": "AccessDenied"}[case]
        assert code in error, error
        assert "AWS_ACCESS_KEY_ID" in error, error
        assert "make-shards" not in error, error     # not a missing index
        assert os.environ["AWS_SECRET_ACCESS_KEY"] not in error


def test_s3_missing_bucket_and_key(data, s3, monkeypatch):
    """(A key allowed every bucket: S3 tells others only AccessDenied.)"""
    s3_env(monkeypatch, s3, "admin")
    out, warnings, error, _ = run_src('location="s3://no-such-bucket/ds/folder/"')
    assert error is not None and "NoSuchBucket" in error, error
    out, warnings, error, _ = run_src('location="s3://no-such-bucket/t-{0..1}.tar"')
    assert error is not None and "NoSuchBucket" in error, error
    assert "make-shards" not in error, error


def test_s3_properties_override_environment(data, s3, monkeypatch):
    base, truth, pattern, _ = data
    s3_env(monkeypatch, s3)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    out, _, error, _ = run_src('location="s3://data/ds/folder/" s3-endpoint=%s' % s3.url)
    assert error is None and len(out) == N_SAMPLES
    # the key's properties win over the environment's (wrong) key
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUNKNOWNKEY000000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    key, secret = s3.keys["loader"]
    out, _, error, _ = run_src('location="s3://data/ds/folder/" s3-access-key=%s '
                               's3-secret-key=%s' % (key, secret))
    assert error is None and len(out) == N_SAMPLES
    # a missing shard: named by URL, the secret nowhere
    s3_env(monkeypatch, s3)
    out, warnings, error, _ = run_src('location="s3://data/nothing-{0..1}.tar"')
    assert error is not None and "shards.idx" in error and "NoSuchKey" in error
    assert secret not in error


def test_s3_secret_never_printed(data, s3, tmp_path):
    """Not in gst-launch's -v output, messages nor debug logs at level 9:
    the role's secret and token given as properties (a run that loads), and
    the environment's secret and token (overridden)."""
    key, secret, token = s3.keys["role"]
    env = dict(os.environ, AWS_ENDPOINT_URL=s3.url, AWS_REGION=REGION,
               AWS_ACCESS_KEY_ID="AKIAUNKNOWNKEY000000",
               AWS_SECRET_ACCESS_KEY="wrong-secret",
               AWS_SESSION_TOKEN="token-SECRET-1", GST_DEBUG="spdl*:9,GST_ELEMENT*:9",
               AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_CONFIG_FILE="/nonexistent",
               AWS_EC2_METADATA_DISABLED="true", GST_DEBUG_NO_COLOR="1")
    res = subprocess.run(["gst-launch-1.0", "-v", "spdlsrc", "location=s3://data/ds/folder/",
                          "s3-access-key=" + key, "s3-secret-key=" + secret,
                          "s3-session-token=" + token, "!", "fakesink"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout + res.stderr
    assert "spdlhttp" in out or "spdlsrc" in out
    for s in (secret, token, "wrong-secret", "token-SECRET-1"):
        assert s not in out


def test_s3_listing_paginates(data, s3, monkeypatch, tmp_path):
    """More keys than one ListObjectsV2 page (1000)."""
    python = venv_python()
    key, secret = s3.keys["admin"]
    script = (
        "import sys, boto3\n"
        "s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name=sys.argv[2],"
        " aws_access_key_id=sys.argv[3], aws_secret_access_key=sys.argv[4])\n"
        "for i in range(1203):\n"
        "    s3.put_object(Bucket='data', Key='many/c%d/%04d.jpg' % (i % 2, i), Body=b'x%d' % i)\n")
    subprocess.run([python, "-c", script, s3.url, REGION, key, secret], check=True,
                   timeout=300)
    s3_env(monkeypatch, s3)
    pipeline = Gst.parse_launch('spdlsrc name=src location="s3://data/many" ! fakesink')
    try:
        assert pipeline.set_state(Gst.State.PAUSED) != Gst.StateChangeReturn.FAILURE
        pipeline.get_state(30 * Gst.SECOND)
        src = pipeline.get_by_name("src")
        assert src.get_property("num-samples") == 1203
        assert src.get_property("num-classes") == 2
    finally:
        pipeline.set_state(Gst.State.NULL)


def test_s3_virtual_host_addressing(data, s3, monkeypatch, tmp_path):
    """s3-virtual-host=true asks BUCKET.HOST/KEY: with the endpoint
    http://localhost:PORT, data.localhost (curl resolves *.localhost to
    the loopback itself), which moto serves as the bucket "data"; a logging
    proxy in between shows the paths carry no bucket."""
    base, truth, pattern, _ = data
    log = str(tmp_path / "requests.log")
    p = proxy(s3.url, log=log)
    s3_env(monkeypatch, s3)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://localhost:%d" % p.port)
    try:
        out, warnings, error, _ = run_src('location="s3://data/ds/folder/" '
                                          's3-virtual-host=true')
        assert error is None and warnings == [] and len(out) == N_SAMPLES
        for _, label, _, path, d in out:
            assert (label, d) == truth[path.split("/folder/", 1)[1].rsplit(".", 1)[0]]
        out, warnings, error, _ = run_src('location="s3://data/ds/shards/%s" '
                                          's3-virtual-host=true' % pattern)
        assert error is None and warnings == [] and len(out) == N_SAMPLES
        for _, label, _, path, d in out:
            assert (label, d) == truth[key_of(path)]
    finally:
        p.stop()
    paths = [r[0] for r in read_log(log)]
    assert len(paths) > N_SAMPLES
    assert all(path == "/" or path.startswith("/ds/") for path in paths)


def test_s3_one_rank_streams_each_shard_once(data, s3, monkeypatch, tmp_path):
    """A shuffled epoch on one rank from S3 (signatures checked): each
    shard one signed GET (remote-reads=auto), where ranged reads make
    about one per sample; the same samples, labels and order as ranged
    reads and as the local shards."""
    base, truth, pattern, _ = data
    n_shards = N_SAMPLES // 8
    props = " shuffle=true seed=7 shuffle-buffer=6"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    assert error is None and len(local) == N_SAMPLES
    s3_env(monkeypatch, s3)
    tars = {}
    for mode in ("auto", "ranges"):
        log = str(tmp_path / ("requests-%s.log" % mode))
        p = proxy(s3.url, log=log)
        monkeypatch.setenv("AWS_ENDPOINT_URL", p.url)
        try:
            out, warnings, error, _ = run_src(
                'location="s3://data/ds/shards/%s" remote-reads=%s' % (pattern, mode)
                + props)
        finally:
            p.stop()
        assert error is None and warnings == []
        assert [(i, label, d) for i, label, _, _, d in out] == \
            [(i, label, d) for i, label, _, _, d in local]
        for _, label, _, path, d in out:
            assert (label, d) == truth[key_of(path)]
        tars[mode] = [r for r in read_log(log) if r[0].endswith(".tar") and r[-1] != "HEAD"]
    assert len(tars["auto"]) == n_shards and all(r[1] == "-" for r in tars["auto"])
    assert len({r[0] for r in tars["auto"]}) == n_shards
    assert all(r[1].startswith("bytes=") for r in tars["ranges"])
    assert len(tars["ranges"]) > N_SAMPLES // 2


# ---------------------------------------------------------------------------
# The credential chain, as users have it: files, container, instance


def chain_env(monkeypatch, server, tmp_path):
    """Nothing in the chain but what the test sets: no AWS_* keys, files
    in @tmp_path, metadata off."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                 "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_s3_credentials_region_endpoint_from_profile(data, s3, monkeypatch, tmp_path):
    """Keys only in ~/.aws/credentials, region and endpoint only in
    ~/.aws/config (a services section's s3 block), as boto3 reads them."""
    chain_env(monkeypatch, s3, tmp_path)
    key, secret = s3.keys["loader"]
    (tmp_path / "credentials").write_text(
        "# comment\n[default]\naws_access_key_id = AKIAWRONGDEFAULT0000\n"
        "aws_secret_access_key = nope\n\n[dev]\naws_access_key_id = %s\n"
        "aws_secret_access_key = %s\n" % (key, secret))
    (tmp_path / "config").write_text(
        "[profile dev]\nregion = %s\nservices = local\n\n[services local]\n"
        "s3 =\n  endpoint_url = %s\n" % (REGION, s3.url))
    monkeypatch.setenv("AWS_PROFILE", "dev")
    out, warnings, error, _ = run_src('location="s3://data/ds/folder/"')
    assert error is None and warnings == [] and len(out) == N_SAMPLES
    # the property names another profile: the default's wrong key, named
    out, warnings, error, _ = run_src('location="s3://data/ds/folder/" '
                                      's3-profile=default s3-endpoint=%s' % s3.url)
    assert error is not None and "InvalidAccessKeyId" in error, error
    assert 'profile "default"' in error and "nope" not in error, error
    # a profile that does not exist is an error naming it, no request made
    out, warnings, error, _ = run_src('location="s3://data/ds/folder/" '
                                      's3-profile=prod s3-endpoint=%s' % s3.url)
    assert error is not None and "prod" in error and out == [], error


class CredentialServer:
    """A container-credentials or IMDSv2 endpoint on 127.0.0.1 serving one
    user's key as temporary credentials; counts requests."""

    def __init__(self, key, secret, token=None):
        import http.server
        import threading
        expiration = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        body = json.dumps({"AccessKeyId": key, "SecretAccessKey": secret,
                           "Token": token or "", "Expiration": expiration,
                           "Code": "Success"}).encode()
        server = self
        self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def reply(self, status, data):
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_PUT(self):
                server.requests.append(("PUT", self.path))
                if self.path == "/latest/api/token":
                    self.reply(200, b"imds-token")
                else:
                    self.reply(404, b"")

            def do_GET(self):
                server.requests.append(("GET", self.path))
                imds = self.headers.get("X-aws-ec2-metadata-token") == "imds-token"
                if self.path == "/creds":
                    self.reply(200, body)
                elif imds and self.path == "/latest/meta-data/iam/security-credentials/":
                    self.reply(200, b"reader")
                elif imds and self.path == "/latest/meta-data/iam/security-credentials/reader":
                    self.reply(200, body)
                else:
                    self.reply(404, b"")

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("where", ["container", "instance-metadata"])
def test_s3_temporary_credentials_from_metadata(data, s3, monkeypatch, tmp_path, where):
    chain_env(monkeypatch, s3, tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.url)
    monkeypatch.setenv("AWS_REGION", REGION)
    creds = CredentialServer(*s3.keys["role"])
    try:
        if where == "container":
            monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", creds.url + "/creds")
        else:
            monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "false")
            monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", creds.url)
        out, warnings, error, _ = run_src('location="s3://data/ds/shards/%s"' % data[2])
        assert error is None and warnings == [] and len(out) == N_SAMPLES, error
    finally:
        creds.stop()
    if where == "container":
        assert creds.requests == [("GET", "/creds")]
    else:
        assert creds.requests[0] == ("PUT", "/latest/api/token")
        assert len(creds.requests) == 3
    assert s3.keys["role"][1] not in (error or "")


class LoopbackServer:
    """An http.server on 127.0.0.1 serving @handler (a Handler with
    do_METHOD methods) on a thread."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def reply(self, status, body, content_type=None):
            self.send_response(status)
            if content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    def __init__(self, handler):
        import threading
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class S3ErrorServer(LoopbackServer):
    """S3 refusing every request with @status and an error body of @code and
    @message (none to HEAD, as S3)."""

    def __init__(self, status, code, message):
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code>'
                '<Message>%s</Message><RequestId>1</RequestId></Error>'
                % (code, message)).encode()

        class Handler(LoopbackServer.Handler):
            def do_HEAD(self):
                self.reply(status, b"")

            def do_GET(self):
                self.reply(status, body, "application/xml")

        super().__init__(Handler)


def test_s3_expired_token_says_so(tmp_path, monkeypatch):
    """An S3 answer ExpiredToken (which moto does not check): its code and
    message in the error, and where the token came from."""
    server = S3ErrorServer(400, "ExpiredToken", "The provided token has expired.")
    try:
        chain_env(monkeypatch, None, tmp_path)
        monkeypatch.setenv("AWS_ENDPOINT_URL", server.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ASIAEXPIRED000000000")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "expired-secret")
        monkeypatch.setenv("AWS_SESSION_TOKEN", "expired-token-value")
        out, warnings, error, _ = run_src('location="s3://data/ds/folder/"')
    finally:
        server.stop()
    assert error is not None and "ExpiredToken" in error, error
    assert "The provided token has expired." in error
    assert "AWS_ACCESS_KEY_ID" in error
    assert "expired-secret" not in error and "expired-token-value" not in error


def test_imageloader_on_s3_shards_and_folders(data, s3, monkeypatch):
    """ImageLoader takes what spdlsrc takes: an s3:// ImageFolder and
    s3:// shards, every sample once, labels as listed."""
    import spdlgst
    base, truth, pattern, _ = data
    s3_env(monkeypatch, s3)
    for location in ("s3://data/ds/folder/", "s3://data/ds/shards/%s" % pattern):
        with spdlgst.ImageLoader(location, recipe="train", batch_size=8, size=8,
                                 output="numpy", epochs=1) as loader:
            batches = list(loader)
        indices = sorted(i for b in batches for i in b.indices)
        assert indices == list(range(N_SAMPLES)), location


def test_s3_shards_without_list_permission(data, s3, monkeypatch, tmp_path):
    """A key that may read the shards only (no s3:ListBucket, no index
    files): S3 answers AccessDenied for the index files as for any missing
    key; the shards readable, their index is learned."""
    base, truth, pattern, _ = data
    s3_env(monkeypatch, s3, "shards-only")
    out, warnings, error, _ = run_src('location="s3://data/ds/shards/%s" '
                                      'shard-cache="%s"' % (pattern, tmp_path))
    assert error is None and warnings == [] and len(out) == N_SAMPLES, error
    for _, label, _, p, d in out:
        assert (label, d) == truth[key_of(p)]
    # a shard it may not read: the refusal, not a learned index
    s3_env(monkeypatch, s3, "stranger")
    out, warnings, error, _ = run_src('location="s3://data/ds/shards/%s" '
                                      'shard-cache="%s"' % (pattern, tmp_path))
    assert error is not None and "AccessDenied" in error and out == [], error


@pytest.mark.parametrize("how", ["none", "empty-key", "aws-403"])
def test_s3_no_credentials_says_so(data, s3, monkeypatch, tmp_path, how):
    """No credentials anywhere (or AWS_ACCESS_KEY_ID set empty): requests go
    unsigned, and S3's refusal (moto's 500 for a request it cannot check,
    AWS's 403, whose HEAD has no body) says that none were found and where
    the chain looked; an INFO line says so when the first request goes
    out."""
    chain_env(monkeypatch, s3, tmp_path)
    # what AWS answers an unsigned request for a private bucket
    bucket = S3ErrorServer(403, "AccessDenied", "Access Denied") if how == "aws-403" else None
    monkeypatch.setenv("AWS_ENDPOINT_URL", bucket.url if bucket else s3.url)
    monkeypatch.setenv("AWS_REGION", REGION)
    if how == "empty-key":
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "")
    try:
        for location in ("s3://data/ds/folder/", "s3://data/ds/shards/%s" % data[2]):
            out, warnings, error, _ = run_src('location="%s"' % location)
            assert error is not None and out == [], location
            assert "requests unsigned: No AWS credentials found" in error, error
            assert str(tmp_path / "credentials") in error, error
            assert str(tmp_path / "config") in error, error
            assert "AWS_EC2_METADATA_DISABLED" in error, error
            if how == "empty-key":
                assert "AWS_ACCESS_KEY_ID is empty" in error, error
            if bucket:
                assert "HTTP status 403" in error, error
        env = dict(os.environ, GST_DEBUG="spdl*:4", GST_DEBUG_NO_COLOR="1")
        res = subprocess.run(["gst-launch-1.0", "spdlsrc",
                              "location=s3://data/ds/folder/", "!", "fakesink"],
                             env=env, capture_output=True, text=True, timeout=120)
    finally:
        if bucket:
            bucket.stop()
    info = [line for line in res.stderr.splitlines()
            if " INFO " in line and "No AWS credentials found" in line]
    assert info and "requests unsigned" in info[0], res.stderr[-3000:]


# ---------------------------------------------------------------------------
# Roles: profiles that assume one (moto's STS, signatures checked), and web
# identity (EKS's IRSA)

ROLE = "arn:aws:iam::123456789012:role/reader"
PARTNER = "arn:aws:iam::123456789012:role/partner"


def roles_env(monkeypatch, server, tmp_path):
    """Profiles as organisations hand them out: keys that may only assume
    roles, and profiles that assume the reader role with them."""
    chain_env(monkeypatch, server, tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.url)
    (tmp_path / "credentials").write_text(
        "[base]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
        "[stranger]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
        % tuple(server.keys["assumer"] + server.keys["stranger"]))
    (tmp_path / "config").write_text(
        "[profile train]\nrole_arn = %s\nsource_profile = base\n"
        "external_id = team-42\nduration_seconds = 900\nregion = %s\n\n"
        "[profile wrong-external-id]\nrole_arn = %s\nsource_profile = base\n"
        "external_id = team-7\n\n"
        "[profile denied]\nrole_arn = %s\nsource_profile = stranger\n"
        "region = %s\n\n"
        "[profile orphan]\nrole_arn = %s\nsource_profile = ghost\n\n"
        "[profile loop-a]\nrole_arn = %s\nsource_profile = loop-b\n"
        "[profile loop-b]\nrole_arn = %s\nsource_profile = loop-a\n"
        % (PARTNER, REGION, PARTNER, ROLE, REGION, ROLE, ROLE, ROLE))


def test_s3_assume_role_profile(data, s3, monkeypatch, tmp_path):
    """role_arn + source_profile: the base profile's key (which may read
    nothing) assumes a role on moto's STS, whose session reads the shards;
    the role trusts only callers that name its external id (moto refuses a
    wrong one, and lets a missing one through); refusals name the profile
    and STS's code."""
    base, truth, pattern, _ = data
    roles_env(monkeypatch, s3, tmp_path)
    monkeypatch.setenv("AWS_PROFILE", "train")
    out, warnings, error, _ = run_src('location="s3://data/ds/shards/%s"' % pattern)
    assert error is None and warnings == [] and len(out) == N_SAMPLES, error
    for _, label, _, p, d in out:
        assert (label, d) == truth[key_of(p)]
    # the base profile's own key may not read the bucket
    monkeypatch.setenv("AWS_PROFILE", "base")
    out, warnings, error, _ = run_src('location="s3://data/ds/folder/"')
    assert error is not None and "AccessDenied" in error, error

    secret = s3.keys["stranger"][1]
    for profile, words in (
            ("denied", ["AWS profile \"denied\"", "AssumeRole of " + ROLE,
                        "STS error AccessDenied", 'profile "stranger"']),
            ("wrong-external-id", ['AWS profile "wrong-external-id"',
                                "AssumeRole of " + PARTNER, "STS error AccessDenied"]),
            ("orphan", ['AWS profile "orphan"', 'source_profile "ghost"']),
            ("loop-a", ['"loop-a" -> "loop-b" -> "loop-a"', "loop"])):
        out, warnings, error, _ = run_src('location="s3://data/ds/folder/" '
                                          's3-profile=%s' % profile)
        assert error is not None and out == [], profile
        for w in words:
            assert w in error, error
        assert secret not in error


class FakeSts(LoopbackServer):
    """AssumeRoleWithWebIdentity on 127.0.0.1, answering with the role's
    session that moto handed out (moto's own STS checks a signature even
    for this call, which AWS takes unsigned); keeps the requests."""

    def __init__(self, key, secret, token):
        import urllib.parse
        expiration = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        body = ("<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>"
                "<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s"
                "</SecretAccessKey><SessionToken>%s</SessionToken><Expiration>%s"
                "</Expiration></Credentials></AssumeRoleWithWebIdentityResult>"
                "</AssumeRoleWithWebIdentityResponse>"
                % (key, secret, token, expiration)).encode()
        server = self
        self.requests = []

        class Handler(LoopbackServer.Handler):
            def do_POST(self):
                form = self.rfile.read(int(self.headers["Content-Length"]))
                server.requests.append((self.headers.get("Authorization"),
                                        urllib.parse.parse_qs(form.decode())))
                self.reply(200, body, "text/xml")

        super().__init__(Handler)


def test_s3_web_identity(data, s3, monkeypatch, tmp_path):
    """EKS's IRSA: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN; the token
    goes unsigned to STS, the role's session reads the bucket on moto."""
    base, truth, pattern, _ = data
    chain_env(monkeypatch, s3, tmp_path)
    sts = FakeSts(*s3.keys["role"])
    token = tmp_path / "token"
    token.write_text("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwb2QifQ.c2lnbmF0dXJl")
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", sts.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.url)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_WEB_IDENTITY_TOKEN_FILE", str(token))
    monkeypatch.setenv("AWS_ROLE_ARN", ROLE)
    try:
        out, warnings, error, _ = run_src('location="s3://data/ds/folder/"')
    finally:
        sts.stop()
    assert error is None and warnings == [] and len(out) == N_SAMPLES, error
    assert len(sts.requests) == 1
    authorization, form = sts.requests[0]
    assert authorization is None
    assert form["Action"] == ["AssumeRoleWithWebIdentity"]
    assert form["RoleArn"] == [ROLE]
    assert form["WebIdentityToken"] == [token.read_text()]
    assert form["RoleSessionName"][0].startswith("botocore-session-")


def test_s3_role_secrets_never_printed(data, s3, tmp_path):
    """A level-9 debug log of both STS paths holds none of the secrets: the
    source profile's, the role session's, the web identity token."""
    key, secret, token = s3.keys["role"]
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzZWNyZXQifQ.SECRET-signature"
    (tmp_path / "token").write_text(jwt)
    sts = FakeSts(key, secret, token)
    with pytest.MonkeyPatch.context() as mp:
        roles_env(mp, s3, tmp_path)
        env = dict(os.environ, GST_DEBUG="spdl*:9,GST_ELEMENT*:9",
                   GST_DEBUG_NO_COLOR="1")
    runs = [('AWS credentials from profile "train" (role ', dict(env, AWS_PROFILE="train")),
            ("AWS credentials from AWS_WEB_IDENTITY_TOKEN_FILE (web identity",
             dict(env, AWS_ENDPOINT_URL_STS=sts.url, AWS_REGION=REGION,
                  AWS_WEB_IDENTITY_TOKEN_FILE=str(tmp_path / "token"),
                  AWS_ROLE_ARN=ROLE))]
    try:
        for used, run_env in runs:
            res = subprocess.run(["gst-launch-1.0", "-v", "spdlsrc",
                                  "location=s3://data/ds/folder/", "!", "fakesink"],
                                 env=run_env, capture_output=True, text=True,
                                 timeout=120)
            assert res.returncode == 0, res.stderr[-2000:]
            out = res.stdout + res.stderr
            assert used in out
            for s in (s3.keys["assumer"][1], secret, token, jwt, "SECRET-signature"):
                assert s not in out
    finally:
        sts.stop()


def test_folder_of_shards_says_how_to_read_them(data, s3, monkeypatch):
    """A folder, or an s3://bucket/prefix/, that holds tar shards and no
    class folder: the error lists the shards found and gives the brace
    pattern that reads them, which then does."""
    base, truth, pattern, _ = data
    s3_env(monkeypatch, s3)
    n = N_SAMPLES // 8
    for folder in ("%s/shards" % base, "s3://data/ds/shards/"):
        _, _, error, _ = run_src('location="%s"' % folder)
        assert error is not None and "holds %d tar shards" % n in error, error
        assert "%s ... %s" % (pattern.replace("{000000..000004}", "000000"),
                              pattern.replace("{000000..000004}", "000004")) in error
        said = error.split('location="', 1)[1].rstrip('"')
        assert said == folder.rstrip("/") + "/" + pattern, error
        out, _, error, _ = run_src('location="%s"' % said)
        assert error is None and len(out) == N_SAMPLES


READ_WITH_SECRETS = """
import sys, spdlgst
url, key, secret, location = sys.argv[1:5]
loader = spdlgst.ImageLoader(location, batch_size=8, epochs=1, output="numpy",
                             size=16, src_properties={
                                 "s3-endpoint": url, "s3-region": "eu-west-1",
                                 "s3-access-key": key, "s3-secret-key": secret})
print(repr(loader))
print(loader.launch_line)
print(sum(len(labels) for _, labels in loader), "samples")
"""


def test_recipe_secrets_reach_spdlsrc_not_the_parser(data, s3, tmp_path):
    """A recipe loader's secret (src_properties) signs its requests, and is
    set on spdlsrc after the pipeline is built: GStreamer's parser, which
    logs the lines it parses, never sees it."""
    base, truth, pattern, _ = data
    key, secret = s3.keys["loader"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(GST_DEBUG="GST_PIPELINE:6", GST_DEBUG_NO_COLOR="1",
               AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               AWS_CONFIG_FILE="/nonexistent", AWS_EC2_METADATA_DISABLED="true")
    res = subprocess.run([sys.executable, "-c", READ_WITH_SECRETS, s3.url, key,
                          secret, "s3://data/ds/shards/%s" % pattern],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "%d samples" % N_SAMPLES in res.stdout
    assert "parsing pipeline description" in res.stderr    # it logged the line
    assert secret not in res.stderr and secret not in res.stdout
    assert "s3-secret-key=***" in res.stdout


def test_folder_of_compressed_shards_says_to_gunzip(data, s3, monkeypatch, tmp_path):
    """A folder, or an s3:// prefix, of .tar.gz shards (as WebDataset
    writes them) and no class folder: the error lists them, says they are
    compressed and to gunzip them, and the pattern that reads them then;
    it said the folder was empty."""
    import gzip
    base, truth, pattern, _ = data
    folder = tmp_path / "gz"
    folder.mkdir()
    names = sorted(n for n in os.listdir(base / "shards") if n.endswith(".tar"))
    for name in names:
        (folder / (name + ".gz")).write_bytes(
            gzip.compress((base / "shards" / name).read_bytes()))
    key, secret = s3.keys["admin"]
    subprocess.run([venv_python(), "-c",
                    "import os, sys, boto3\n"
                    "s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name=sys.argv[2],"
                    " aws_access_key_id=sys.argv[3], aws_secret_access_key=sys.argv[4])\n"
                    "for n in sorted(os.listdir(sys.argv[5])):\n"
                    "    s3.upload_file(os.path.join(sys.argv[5], n), 'data', 'gz/' + n)\n",
                    s3.url, REGION, key, secret, str(folder)], check=True, timeout=120)
    s3_env(monkeypatch, s3)
    for location in (str(folder), "s3://data/gz/"):
        _, _, error, _ = run_src('location="%s"' % location)
        assert error is not None, location
        assert "holds %d compressed tar shards" % len(names) in error, error
        assert "%s.gz ... %s.gz" % (names[0], names[-1]) in error, error
        assert "gunzip" in error and "is empty" not in error, error
        assert location.rstrip("/") + "/" + pattern in error, error
