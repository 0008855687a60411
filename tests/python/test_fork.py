"""os.fork() around loaders, as PyTorch's DataLoader forks its workers:
a child's exit never waits on the parent's pipeline, a child can run its
own loader once the parent's are closed, and where it cannot (a loader
ran in the parent at the fork) it says what to do."""
import os
import subprocess
import sys
import textwrap

from test_checkpoint import make_folder

SCRIPT = textwrap.dedent(r"""
    import os, sys, json
    import spdlgst

    line = ("spdlsrc location=%s num-epochs=-1 ! spdldecode width=8 height=8 "
            "! spdlbatch batch-size=4 ! spdlappsink name=sink") % sys.argv[1]
    mode = sys.argv[2]
    parent = spdlgst.Loader(line)
    first = [list(b.indices) for b in parent]
    if mode == "closed":
        parent.close()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            if mode == "closed":
                with spdlgst.Loader(line.replace("num-epochs=-1", "num-epochs=1")) as own:
                    got = sorted(i for b in own for i in b.indices)
                code = 0 if got == list(range(14)) else 3
            elif mode == "new-loader":
                try:
                    spdlgst.Loader(line)
                    code = 4
                except spdlgst.LoaderError as e:
                    code = 0 if "spawn" in str(e) else 5
            elif mode == "use-parents":
                try:
                    next(iter(parent))
                    code = 6
                except spdlgst.LoaderError as e:
                    code = 0 if "parent" in str(e) else 7
        finally:
            sys.exit(code)          # the exit hooks run: never wait on the parent
    _, status = os.waitpid(pid, 0)
    # the parent's loader is unharmed
    if mode != "closed":
        again = [list(b.indices) for b in parent]
        assert sorted(sum(again, [])) == sorted(sum(first, [])), again
        parent.close()
    print("child", os.waitstatus_to_exitcode(status))
""")


def run(root, mode):
    res = subprocess.run([sys.executable, "-c", SCRIPT, str(root), mode],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "CRITICAL" not in res.stderr, res.stderr[-3000:]
    return res.stdout.split()[-1]


def test_child_of_a_closed_loader_runs_its_own(tmp_path):
    root = make_folder(tmp_path / "ds", 14)
    assert run(root, "closed") == "0"


def test_child_exits_while_the_parents_loader_runs(tmp_path):
    root = make_folder(tmp_path / "ds", 14)
    assert run(root, "use-parents") == "0"


def test_child_of_a_running_loader_is_told_what_to_do(tmp_path):
    root = make_folder(tmp_path / "ds", 14)
    assert run(root, "new-loader") == "0"


def test_dataloader_workers_forked_beside_a_loader(tmp_path):
    """torch's DataLoader forking 2 workers while a loader is open."""
    root = make_folder(tmp_path / "ds", 14)
    script = textwrap.dedent(r"""
        import sys, torch
        import spdlgst
        line = ("spdlsrc location=%s num-epochs=-1 ! spdldecode width=8 "
                "height=8 ! spdlbatch batch-size=4 ! spdlappsink name=sink") % sys.argv[1]
        with spdlgst.Loader(line, output="torch") as loader:
            n = sum(len(b.indices) for b in loader)
            dl = torch.utils.data.DataLoader(list(range(32)), batch_size=8,
                                             num_workers=2)
            assert sum(int(b.sum()) for b in dl) == sum(range(32))
            assert sum(len(b.indices) for b in loader) == n == 14
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", script, str(root)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]
