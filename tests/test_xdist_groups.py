"""The suite's time depends on files sharing a costly fixture running on one worker: check that a group holds."""

import re
import subprocess
import sys

from tests.conftest import REPO

CONFTEST = '''
from tests.xdist_groups import put_in_group

def pytest_collection_modifyitems(config, items):
    for item in items:
        put_in_group(config, item, "shared" if "shared" in item.path.name else item.path.name)
'''


def test_the_files_of_a_group_run_on_one_worker(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    for name in ("test_shared_a.py", "test_shared_b.py", "test_alone_c.py", "test_alone_d.py"):
        (tmp_path / name).write_text("".join(f"def test_{n}():\n    pass\n\n" for n in range(6)))
    # Only xdist is loaded: the installed plugins these tests do not use (schemathesis, playwright, asyncio...) take
    # seconds to load in each of the three processes.
    environment = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-p", "no:cacheprovider", "-n", "2", "--dist",
         "loadgroup", "-v", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=120, env=environment,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    workers = {}
    for worker, name in re.findall(r"\[(gw\d)\][^\n]*PASSED (\S+)", run.stdout):
        workers.setdefault(name.split("::")[0].rsplit("/", 1)[-1], set()).add(worker)
    assert len(workers) == 4, run.stdout[-2000:]
    shared = workers["test_shared_a.py"] | workers["test_shared_b.py"]
    assert len(shared) == 1, f"the group 'shared' ran on {sorted(shared)}"
    assert all(len(w) == 1 for w in workers.values()), workers  # a file of its own is a group too
