"""Hybrid search latency, load time and memory of the vector store at 10k and 100k points, and at a million papers.

    .venv/bin/python -m bench.search_latency --data-dir data/local            # every configuration, one table
    .venv/bin/python -m bench.search_latency --data-dir data/local --store edge --size 100000   # some of them
    .venv/bin/python -m bench.search_latency --store edge --size 100000 --vectors float32   # the index before int8
    .venv/bin/python -m bench.search_latency --store edge --size 100000 --phase query --exact-up-to 0  # HNSW's recall
    .venv/bin/python -m bench.search_latency --store edge --size 1000000 --windows --phase build   # all their points

The scale corpus is SYNTHETIC, made from the real demo abstracts (run `make demo` or `scholarloom ingest demo`
first): each synthetic paper joins the first half of one real abstract to the second half of another. Its
BM25 vector is computed from that recombined text by the real sparse model; its dense vector is the
normalised mixture of the two real abstracts' MiniLM vectors (embedding 100k texts here would take over an
hour, so dense embedding is timed apart, on real text). Categories come from the first abstract; dates,
researchers and institutions are drawn at random. With `--windows` each synthetic paper has every point a real one
has: its abstract point and the first abstract's sentence windows (the demo index's window vectors, each mixed with
the second abstract's vector as the abstract point is), about 5.4 points a paper; `--size` counts papers.
Queries are real sentences from the demo abstracts; every timed query asks the embedder for its vectors (dense +
BM25; its cache answers a query it embedded before, as in the product: "query embedding alone" times each one's
first embedding) and runs the fused hybrid search of `Index.papers`.
Each configuration is built in one process and queried in a fresh one, so the query-time memory is
that of a serving process (models + store), not of the builder.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from retrieval.vectors.edge import EdgeStore  # noqa: E402
from retrieval.vectors.embeddings import Embedded, split_sentences  # noqa: E402
from retrieval.vectors.index import Filters, FusionParams, Index  # noqa: E402
from retrieval.vectors.points import NO_KEYWORDS, IndexPoint  # noqa: E402
from retrieval.vectors.server import ClientStore  # noqa: E402
from retrieval.vectors.store import DENSE, VectorLayout, VectorQuery  # noqa: E402
from scholarloom.settings import Settings  # noqa: E402


def _status() -> dict[str, str]:
    return dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)


def _memory_mb() -> tuple[float, float]:
    fields = _status()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _rss_parts_mb() -> dict[str, float]:
    """RSS as the process's own memory (anonymous) and the files it maps that are in memory (the store's segments:
    pages the kernel may drop and read again)."""
    fields = _status()
    return {"anonymous": int(fields["RssAnon"].split()[0]) / 1024, "files": int(fields["RssFile"].split()[0]) / 1024}


def _base(settings: Settings, cache: Path):
    """The demo papers' texts, categories and dense vectors (embedded once, cached)."""
    papers = [p for p in settings.catalog().iter_papers() if p.abstract]
    if not papers:
        raise SystemExit(f"no papers in {settings.data_dir}: run `scholarloom ingest demo` first")
    texts = [f"{p.title}. {p.abstract}" for p in papers]
    embedder = settings.embedder()
    if cache.exists() and np.load(cache).shape[0] == len(texts):
        vectors, seconds = np.load(cache), None
    else:
        started = time.perf_counter()
        vectors = embedder.dense(texts)
        seconds = time.perf_counter() - started
        np.save(cache, vectors)
    return papers, texts, vectors, seconds


def _windows(settings: Settings, papers, cache: Path) -> list[list[np.ndarray]]:
    """Each demo paper's sentence-window vectors, in its window order, from the demo's own index (cached)."""
    if cache.exists():
        stored = np.load(cache, allow_pickle=False)
        return [list(stored[f"p{i}"]) for i in range(len(papers))]
    found: dict[str, dict[int, np.ndarray]] = {}
    index = settings.index()
    try:
        for chunk in index.points(2000):
            for point in chunk:
                if point.payload["kind"] == "window" and point.dense is not None:
                    found.setdefault(point.payload["paper_id"], {})[point.payload["number"]] = point.dense
    finally:
        index.close()
    windows = [[v for _, v in sorted(found.get(p.id, {}).items())] for p in papers]
    np.savez(cache, **{f"p{i}": np.array(w, dtype=np.float32).reshape(-1, DIM) for i, w in enumerate(windows)})
    return windows


DIM = 384


def _synthetic(papers, texts, vectors, size: int, embedder, windows=None, seed: int = 7, rows=None, first: int = 0,
               prefix: str = "syn"):  # fmt: skip
    """The synthetic points, a thousand papers' at a time (streamed: a million points never sit in memory at once);
    with `windows`, each paper's windows too. `rows` (a list): each synthetic paper's catalog fields are added to it
    (`bench.watches` writes them to a catalog); `first` and `prefix` make the ids (`syn000000` onwards)."""
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    sentences = [split_sentences(t) for t in texts]
    start_day = date(2007, 1, 1)
    points = []
    batch_texts, batch_meta = [], []

    def flush():
        sparse = embedder.sparse(batch_texts)
        for (i, a, b, mix), s in zip(batch_meta, sparse, strict=True):
            dense = mix * vectors[a] + (1 - mix) * vectors[b]
            dense = (dense / np.linalg.norm(dense)).astype(np.float32)
            day = start_day + timedelta(days=int(np_rng.integers(0, 365 * 19)))
            fields = dict(
                categories=papers[a].categories,
                published=datetime(day.year, day.month, day.day, tzinfo=timezone.utc),
                researcher_ids=[int(x) for x in np_rng.zipf(1.6, size=3) % 20_000],
                institution_ids=[int(np_rng.integers(0, 2_000))],
            )
            points.append(IndexPoint(f"{prefix}{i:06d}", "abstract", 0, Embedded(dense, s), **fields))
            if rows is not None:
                rows.append({"id": f"{prefix}{i:06d}", "title": papers[a].title, "abstract": text_of[i],
                             "categories": fields["categories"], "published": fields["published"]})  # fmt: skip
            for number, window in enumerate(windows[a] if windows else [], start=1):
                mixed = mix * window + (1 - mix) * vectors[b]
                mixed = (mixed / np.linalg.norm(mixed)).astype(np.float32)
                points.append(IndexPoint(f"{prefix}{i:06d}", "window", number, Embedded(mixed, NO_KEYWORDS),
                                         **fields))  # fmt: skip
        batch_texts.clear()
        batch_meta.clear()
        text_of.clear()
        chunk = points[:]
        points.clear()
        return chunk

    text_of: dict[int, str] = {}
    for i in range(first, first + size):
        a, b = rng.randrange(len(texts)), rng.randrange(len(texts))
        head, tail = sentences[a], sentences[b]
        text = " ".join(head[: max(1, len(head) // 2)] + tail[len(tail) // 2 :])
        text_of[i] = text
        batch_texts.append(text)
        batch_meta.append((i, a, b, rng.uniform(0.5, 0.8)))
        if len(batch_texts) == 1000:
            yield flush()
    if batch_texts:
        yield flush()


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def _open_store(store: str, work: Path, vectors: str, exact_up_to: int = 250_000):
    if store == "edge":
        return EdgeStore(work / "edge", exact_up_to=exact_up_to, layout=VectorLayout(vectors))
    from qdrant_client import QdrantClient

    return ClientStore(QdrantClient(path=str(work / "client")), "bench", local=True, layout=VectorLayout(vectors))


def _recall(store, vectors: list[np.ndarray], filters: Filters = Filters(), limit: int = 10) -> float | None:
    """Recall@`limit` of the dense search as the product runs it (int8 copies and rescoring, HNSW above
    `exact_up_to` points unless the filter is narrow) against an exact scan of the float32 originals with the same
    filter; None where the store cannot scan them."""
    if not isinstance(store, EdgeStore):
        return None
    q = store.q
    exact = q.SearchParams(exact=True, quantization=q.QuantizationSearchParams(ignore=True))
    depth = max(FusionParams().candidates, limit)  # the depth `Index.papers` searches the dense side at
    found = [hits[:limit] for hits in store.search([VectorQuery(DENSE, v, depth, filters) for v in vectors])]
    shares = []
    for vector, hits in zip(vectors, found):
        request = q.QueryRequest(query=q.Query.Nearest(vector.tolist(), using=DENSE), limit=limit, params=exact,
                                 filter=store._filter(filters),
                                 with_payload=["paper_id", "kind", "number"])  # fmt: skip
        wanted = {(p.payload["paper_id"], p.payload["kind"], p.payload["number"]) for p in store.shard.query(request)}
        shares.append(len(wanted & {(h.paper_id, h.kind, h.number) for h in hits}) / max(1, len(wanted)))
    return statistics.mean(shares)


def _work(args) -> Path:
    return args.work / f"{args.store}-{args.size}-{args.vectors}{'-windows' if args.windows else ''}"


def build(args) -> dict:
    """Phase 1: make the synthetic points and write them to a fresh store. The store builds the graph of each
    segment as it fills (`SEGMENT_POINTS`) and of the rest at the end; both are timed as the graph's."""
    import shutil

    settings = Settings(data_dir=args.data_dir)
    work = _work(args)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    papers, texts, vectors, embed_seconds = _base(settings, args.work / "base-dense.npy")
    windows = _windows(settings, papers, args.work / "base-windows.npz") if args.windows else None
    index = Index(_open_store(args.store, work, args.vectors))
    graph = []  # (points written before, seconds, RSS peak so far) of each build of the graph
    build_graph = index.store.optimize

    def timed_build() -> None:
        began = time.perf_counter()
        build_graph()
        graph.append((written, time.perf_counter() - began, _memory_mb()[1]))

    index.store.optimize = timed_build  # the store calls it itself as segments fill
    synth_seconds = upsert_seconds = 0.0
    written = 0
    started = time.perf_counter()
    for points in _synthetic(papers, texts, vectors, args.size, settings.embedder(), windows):
        made = time.perf_counter()
        synth_seconds += made - started
        for chunk in range(0, len(points), 500):
            index.upsert(points[chunk : chunk + 500])
            written += len(points[chunk : chunk + 500])
        started = time.perf_counter()
        upsert_seconds += started - made
    index.optimize()
    graph_seconds = sum(seconds for _, seconds, _ in graph)
    index.close()
    (work / "points.json").write_text(json.dumps({"points": written}))
    return {
        "base_papers": len(papers),
        "base_embed_per_s": len(texts) / embed_seconds if embed_seconds else None,
        "points": written,
        "synthesis_s": synth_seconds,
        "upsert_s": upsert_seconds - sum(seconds for _, seconds, _ in graph[:-1]),  # the writes alone
        "optimize_s": graph_seconds,
        "graph_builds": [{"after_points": n, "seconds": round(s, 1), "peak_rss_mb": round(m)} for n, s, m in graph],
        "build_peak_rss_mb": _memory_mb()[1],
    }


def query(args) -> dict:
    """Phase 2, in a fresh process: reopen the store and time real queries; memory is this process's."""
    settings = Settings(data_dir=args.data_dir)
    work = _work(args)
    papers = [p for p in settings.catalog().iter_papers() if p.abstract]
    texts = [f"{p.title}. {p.abstract}" for p in papers]
    embedder = settings.embedder()
    embedder.query("warm up")  # models loaded before the store, so the store's own memory shows apart
    rss_models, _ = _memory_mb()
    started = time.perf_counter()
    index = Index(_open_store(args.store, work, args.vectors, args.exact_up_to))
    reopen_seconds = time.perf_counter() - started
    index_points = index.count()
    expected = json.loads((work / "points.json").read_text())["points"] if (work / "points.json").exists() else None
    assert index.count() == (expected or args.size), index.count()
    rng = random.Random(11)
    queries = []
    while len(queries) < args.queries:
        candidates = [s for s in split_sentences(rng.choice(texts)) if 40 <= len(s) <= 300]
        if candidates:
            queries.append(rng.choice(candidates))
    counts: dict[str, int] = {}
    for p in papers:
        for c in p.categories[:1]:
            counts[c] = counts.get(c, 0) + 1
    common = max(counts, key=counts.get)
    narrow = min(counts, key=lambda c: (abs(counts[c] / len(papers) - 0.01), c))
    filters = {
        "no filter": Filters(),
        f"category {common} ({counts[common] / len(papers):.0%} of points)": Filters(categories=(common,)),
        f"category {narrow} ({counts[narrow] / len(papers):.1%})": Filters(categories=(narrow,)),
        "one year (about 5%)": Filters(published_from=date(2015, 1, 1), published_to=date(2015, 12, 31)),
        "one researcher (about 0.3%)": Filters(researcher_id=50),
        "this paper only": Filters(paper_ids=("syn000042",)),
    }
    # Warm: every filter's first 50 queries once (the originals the rescoring reads are on disk, and a serving
    # process has read them before; the first queries after opening are slower, see BENCHMARKS.md)
    warm = [embedder.query(q) for q in queries[:50]]
    started = time.perf_counter()
    for flt in filters.values():
        for embedded in warm:
            index.papers(embedded, flt, limit=10)
    warm_seconds = time.perf_counter() - started
    embed_times = []
    for q in queries:
        t = time.perf_counter()
        embedder.query(q)
        embed_times.append((time.perf_counter() - t) * 1000)
    rows = {"query embedding alone": _percentiles(embed_times)}
    for name, flt in filters.items():
        times = []
        for q in queries:
            t = time.perf_counter()
            index.papers(embedder.query(q), flt, limit=10)
            times.append((time.perf_counter() - t) * 1000)
        rows[name] = _percentiles(times)
    rss, peak = _memory_mb()
    parts = _rss_parts_mb()
    dense = [embedder.query(q).dense for q in queries[: args.recall_queries or len(queries)]]
    recall = {name: _recall(index.store, dense, flt) for name, flt in filters.items()}
    index.close()
    return {
        "store": args.store,
        "size": args.size,
        "vectors": args.vectors,
        "recall_at_10": recall,
        "recall_queries": len(dense),
        "points": index_points,
        "queries": args.queries,
        "reopen_s": reopen_seconds,
        "warm_s": warm_seconds,
        "rss_models_mb": rss_models,
        "rss_mb": rss,
        "rss_parts_mb": parts,
        "peak_rss_mb": peak,
        "latency_ms": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data" / "local", help="a data dir with the demo")
    parser.add_argument("--work", type=Path, default=Path("/tmp/scholarloom-latency"))
    parser.add_argument("--store", choices=["edge", "client"])
    parser.add_argument("--size", type=int)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--phase", choices=["build", "query"], help="one phase of one configuration")
    parser.add_argument("--vectors", choices=["int8", "float32"], default="int8", help="the index's vector layout")
    parser.add_argument("--exact-up-to", type=int, default=250_000,
                        help="the store searches exactly up to this many points, HNSW above (0: HNSW at any size)")
    parser.add_argument("--windows", action="store_true",
                        help="each synthetic paper's every point (abstract and sentence windows); --size counts papers")
    parser.add_argument("--recall-queries", type=int, default=0,
                        help="how many of the queries the recall is measured on (0: all; each is an exact scan)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (used by the all-runs mode)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.store and args.size and args.phase:
        result = build(args) if args.phase == "build" else query(args)
        print(json.dumps(result) if args.json else json.dumps(result, indent=2))
        return
    configs = [("edge", 10_000, args.queries), ("client", 10_000, args.queries), ("edge", 100_000, args.queries)]
    configs.append(("client", 100_000, min(args.queries, 30)))  # about a second a query: fewer of them
    if args.store:
        configs = [c for c in configs if c[0] == args.store]
    if args.size:
        configs = [c for c in configs if c[1] == args.size] or [(args.store or "edge", args.size, args.queries)]
    results = []
    for store, size, queries in configs:
        result = {}
        for phase in ("build", "query"):
            command = [sys.executable, __file__, "--data-dir", str(args.data_dir), "--work", str(args.work)]
            command += ["--store", store, "--size", str(size), "--queries", str(queries), "--json", "--phase", phase]
            command += ["--vectors", args.vectors]
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            result.update(json.loads(out.strip().splitlines()[-1]))
        results.append(result)
        print(f"done: {store} {size}", file=sys.stderr)
    print(f"synthetic scale corpus from {results[0]['base_papers']} real demo abstracts; ms p50/p95 per query\n")
    header = "| | " + " | ".join(f"{r['store']} {r['size'] // 1000}k {r['vectors']}" for r in results) + " |"
    print(header + "\n" + "|---" * (len(results) + 1) + "|")
    for name in results[0]["latency_ms"]:
        cells = [f"{r['latency_ms'][name][0]:.1f} / {r['latency_ms'][name][1]:.1f}" for r in results]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for label, key, fmt in (
        ("queries timed", "queries", "{}"),
        ("upsert (s)", "upsert_s", "{:.1f}"),
        ("build index / optimize (s)", "optimize_s", "{:.1f}"),
        ("peak RSS while building (MB)", "build_peak_rss_mb", "{:.0f}"),
        ("reopen (s)", "reopen_s", "{:.2f}"),
        ("warm-up: 50 queries per filter (s)", "warm_s", "{:.1f}"),
        ("RSS with models, before the store (MB)", "rss_models_mb", "{:.0f}"),
        ("RSS after the queries (MB)", "rss_mb", "{:.0f}"),
        ("peak RSS while querying (MB)", "peak_rss_mb", "{:.0f}"),
    ):
        print(f"| {label} | " + " | ".join("-" if r[key] is None else fmt.format(r[key]) for r in results) + " |")
    for name in results[0]["recall_at_10"]:
        cells = ["-" if r["recall_at_10"][name] is None else f"{r['recall_at_10'][name]:.3f}" for r in results]
        print(f"| dense recall@10 against exact float32, {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
