"""Sign-in timing: an unknown user name against a wrong password for a real one (argon2id both times).

    python -m bench.signin_timing [--rounds 40]

Prints the median and p95 of each, and their ratio; the figures go to SECURITY.md with the date.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    from auth.accounts import add_user, authenticate, create_tables
    from retrieval.upkeep.database import make_engine

    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'users.db'}")
        create_tables(engine)
        add_user(engine, "alice", "the right password")
        authenticate(engine, "nobody", "warm up")  # the dummy hash is made once
        samples: dict[str, list[float]] = {"wrong password": [], "unknown user": []}
        for _ in range(args.rounds):  # interleaved, so drift in machine load hits both alike
            for label, name in (("wrong password", "alice"), ("unknown user", "nobody")):
                start = time.perf_counter()
                assert authenticate(engine, name, "a wrong guess") is None
                samples[label].append(time.perf_counter() - start)
        for label, times in samples.items():
            times.sort()
            print(
                f"{label:15s} median {statistics.median(times) * 1000:6.1f} ms  p95 {times[int(0.95 * len(times)) - 1] * 1000:6.1f} ms"
            )
        ratio = statistics.median(samples["unknown user"]) / statistics.median(samples["wrong password"])
        print(f"ratio unknown/wrong (medians): {ratio:.3f}")
        engine.dispose()


if __name__ == "__main__":
    main()
