"""xdist groups that reach xdist's scheduler under the pinned pytest."""

from __future__ import annotations

import pytest


def put_in_group(config: pytest.Config, item: pytest.Item, name: str) -> None:
    """Put `item` in xdist group `name`. xdist 3.8 (`--dist loadgroup`) marks a group by renaming the test
    `<nodeid>@<group>` through `Node._nodeid`, which pytest 9.2 no longer reads (its node ids are `Node._id`): the
    groups were silently ignored and each worker built the shared fixtures again. Renamed here the same way until
    the pins move (`tests/test_xdist_groups.py` fails when the rename no longer reaches the scheduler)."""
    item.add_marker(pytest.mark.xdist_group(name))
    if not getattr(config.option, "loadgroup", False) or item.nodeid.endswith(f"@{name}"):
        return
    from _pytest.nodeid import NodeId

    item._id = NodeId.parse(f"{item.nodeid}@{name}")
