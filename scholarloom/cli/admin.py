"""`scholarloom serve`, `users`, `models` and `bench`."""

from __future__ import annotations

import sys
from contextlib import closing
from pathlib import Path

import typer

from scholarloom.cli.common import app, bench_app, fail, load_settings, models_app, progress, users_app


@app.command("serve")
def serve_command(
    host: str = typer.Option(None, help="Address to listen on (default SCHOLARLOOM_HOST)."),
    port: int = typer.Option(None, help="Port to listen on (default SCHOLARLOOM_PORT)."),
) -> None:
    """Start the web app: pages, API and the chat at /chat."""
    import gc
    import logging

    import uvicorn

    from common.logs import configure as configure_logs
    from scholarloom.app import create_app, server_config

    with closing(load_settings()) as settings:  # the embedded index is flushed and unlocked when serve stops
        if host:
            settings.host = host
        if port:
            settings.port = port
        try:
            secret = settings.require_secret()
            log_setup = (settings.log_format == "json", [*settings.secret_values(), secret],
                         getattr(logging, settings.log_level.upper()))  # fmt: skip
            configure_logs(*log_setup)
            application = create_app(settings)
        except RuntimeError as exc:
            fail(str(exc))
        retrieval_only = "retrieval-only mode (set SCHOLARLOOM_LLM for written answers)"
        mode = f"LLM {settings.llm}" if settings.llm else retrieval_only
        typer.echo(f"ScholarLoom on http://{settings.host}:{settings.port} ({mode})")
        if settings.demo:
            typer.secho("warning: demo mode (SCHOLARLOOM_DEMO=1): sessions are signed with a generated secret kept in "
                        "the data directory; never use it for a public instance", fg=typer.colors.YELLOW, err=True)
        runtime = application.state.runtime
        runner = runtime.job_runner()  # this process is the index's one writer: it runs the jobs
        runner.start()
        if runtime.llm_watch is not None:
            runtime.llm_watch.start()  # asks the model what it can do, in the background (admins see it)
        llm_process = runtime.start_llm_process(log_setup) if settings.llm_process else None
        # What start-up made lives as long as the process: out of the collector's sight, so a full collection
        # (which a request making many objects sets off) walks only what requests made (BENCHMARKS.md).
        gc.freeze()
        try:
            uvicorn.Server(server_config(settings, application)).run()
        finally:
            runner.close()
            runtime.usage.close()  # what the last turns cost, written before the process ends
            if runtime.llm_watch is not None:
                runtime.llm_watch.close()
            if llm_process is not None:
                llm_process.close()


@users_app.command("add")
def users_add(
    name: str = typer.Argument(..., help="User name (letters, digits, . _ @ -)."),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="Read the password from standard input."),
    replace: bool = typer.Option(False, "--replace", help="Set a new password if the user exists."),
    admin: bool = typer.Option(False, "--admin", help="The user also sees and runs jobs (/admin/jobs)."),
) -> None:
    """Create a user who can sign in to the chat."""
    from auth.accounts import AccountError, add_user, create_tables, set_admin

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    with closing(load_settings()) as settings:
        engine = settings.catalog().engine
        create_tables(engine)
        try:
            add_user(engine, name, password, replace=replace)
            if admin:
                set_admin(engine, name, True)
        except AccountError as exc:
            fail(str(exc))
    typer.echo(f"user {name} is ready" + (" (admin)" if admin else ""))


@users_app.command("new-feed-key")
def users_new_feed_key(name: str = typer.Argument(..., help="The user whose private feed address to replace.")) -> None:
    """Give a user a new private RSS address (/me/feed.xml?key=...); the old one stops working at once."""
    from auth.accounts import create_tables
    from auth.follows import Follows

    with closing(load_settings()) as settings:
        create_tables(settings.catalog().engine)
        key = Follows(settings.catalog().engine).rotate(name)
    typer.echo(f"{name}'s feed is now {settings.base_url}/me/feed.xml?key={key}")


@users_app.command("promote")
def users_promote(
    name: str = typer.Argument(..., help="The user to make an admin."),
    revoke: bool = typer.Option(False, "--revoke", help="Make the user an ordinary user again."),
) -> None:
    """Make a user an admin: they see every job at /admin/jobs and may cancel or retry one."""
    from auth.accounts import AccountError, create_tables, set_admin

    with closing(load_settings()) as settings:
        engine = settings.catalog().engine
        create_tables(engine)
        try:
            set_admin(engine, name, not revoke)
        except AccountError as exc:
            fail(str(exc))
    typer.echo(f"user {name} is {'no longer ' if revoke else ''}an admin")


def _account_change(name: str, change, done: str) -> None:
    from auth.accounts import AccountError, create_tables

    with closing(load_settings()) as settings:
        engine = settings.catalog().engine
        create_tables(engine)
        try:
            change(engine, name)
        except AccountError as exc:
            fail(str(exc))
    typer.echo(f"user {name} {done}")


@users_app.command("disable")
def users_disable(name: str = typer.Argument(..., help="The user to disable.")) -> None:
    """Disable a user: they cannot sign in, every open session of theirs (chat, socket, pages, private feed)
    ends at its next request, and their API tokens are revoked. Their threads stay."""
    from auth.accounts import set_active

    _account_change(name, lambda engine, n: set_active(engine, n, False, by="scholarloom users disable"),
                    "is disabled; their sessions have ended and their API tokens are revoked")


@users_app.command("enable")
def users_enable(name: str = typer.Argument(..., help="The user to enable again.")) -> None:
    """Let a disabled user sign in again (the sessions that ended stay ended)."""
    from auth.accounts import set_active

    _account_change(name, lambda engine, n: set_active(engine, n, True), "may sign in again")


@users_app.command("sign-out")
def users_sign_out(name: str = typer.Argument(..., help="The user to sign out everywhere.")) -> None:
    """End every session of a user, wherever it was opened (a lost laptop); they can sign in again."""
    from auth.accounts import end_sessions

    _account_change(name, end_sessions, "is signed out everywhere")


@users_app.command("unblock")
def users_unblock(
    name: str = typer.Argument(None, help="The user whose sign-in back-off to lift."),
    everyone: bool = typer.Option(False, "--all", help="Lift every back-off: all users and all addresses."),
) -> None:
    """Let a user (or everyone) sign in again now, after repeated wrong passwords started a back-off."""
    from auth.accounts import clear_sign_in_failures, create_tables

    if (name is None) == (not everyone):
        fail("name one user, or pass --all")
    with closing(load_settings()) as settings:
        engine = settings.catalog().engine
        create_tables(engine)
        lifted = clear_sign_in_failures(engine, None if everyone else name)
    typer.echo(f"forgot the failed sign-ins of {lifted} {'name or address' if lifted == 1 else 'names and addresses'}")


@models_app.command("prepare")
def models_prepare() -> None:
    """Build the ONNX embedding model from the installed weights package (no network)."""
    from retrieval.vectors.embeddings import prepare_models

    settings = load_settings()
    dense, sparse = prepare_models(settings.models_dir, settings.embed_precision)
    typer.echo(f"dense model: {dense}\nBM25: {sparse}")


@bench_app.command("retrieval")
def bench_retrieval(
    beir_dir: Path = typer.Argument(..., help="A BEIR data set folder: corpus.jsonl, queries.jsonl, qrels/*.tsv."),
    split: list[str] = typer.Option(["test"], "--split", help="Which qrels to score (repeatable): test, train."),
    work_dir: Path = typer.Option(
        None, help="Where to keep the benchmark's catalog and index (reused when run again; default: data dir)."
    ),
    method: str = typer.Option("max", help="Score fusion: max, minmax or rrf."),
    dense_weight: float = typer.Option(None, help="Weight of the dense side in the hybrid (default: the product's)."),
    window_tokens: int = typer.Option(None, help="Dense window size for abstracts (default: the product's)."),
    window_overlap: bool = typer.Option(None, "--window-overlap/--no-window-overlap", help="Half-overlapping windows."),
    pooled_windows: bool = typer.Option(False, help="Pool each window's vector from its abstract's encoder pass."),
    whole_abstract: bool = typer.Option(False, help="Embed each abstract whole too, not as its windows' mean."),
    precision: str = typer.Option(None, help="The encoder's weights: int8 or float32 (default: the product's)."),
) -> None:
    """nDCG@10, Recall@100 and MRR@10 for BM25, dense and hybrid search on a BEIR data set (e.g. SciFact)."""
    from ingest.beir import retrieval_benchmark
    from ingest.writer import Windowing
    from retrieval.vectors.index import FusionParams

    settings = load_settings()
    if not (beir_dir / "corpus.jsonl").is_file():
        fail(f"no corpus.jsonl in {beir_dir}")
    defaults = FusionParams()
    params = FusionParams(method=method, dense_weight=defaults.dense_weight if dense_weight is None else dense_weight)
    windowing = Windowing()
    windowing = Windowing(
        tokens=window_tokens or windowing.tokens,
        overlap=windowing.overlap if window_overlap is None else window_overlap,
        pooled=pooled_windows,
        whole_abstract=whole_abstract,
    )
    if precision not in (None, "int8", "float32"):
        fail(f"--precision is int8 or float32, not {precision!r}")
    work = work_dir or settings.data_dir / "bench" / beir_dir.name
    with progress() as bars:
        try:
            results = retrieval_benchmark(beir_dir, work, settings.models_dir, split, params, bars, windowing,
                                          settings.embed_threads, precision or settings.embed_precision)  # fmt: skip
        except ValueError as exc:
            fail(str(exc))
    typer.echo(
        f"fusion: {params.method}, dense weight {params.dense_weight}, candidates {params.candidates}; "
        f"windows: {windowing.tokens} tokens, {'half-overlapping' if windowing.overlap else 'no overlap'}"
        f"{', pooled from their abstract' if windowing.pooled else ''}"
        f"{', the abstract embedded whole' if windowing.whole_abstract else ', the abstract their mean'}; "
        f"encoder: {precision or settings.embed_precision}"
    )
    for name, rows in results.items():
        typer.echo(f"\n{beir_dir.name} {name} ({work})\n{'':8} nDCG@10  Recall@100  MRR@10")
        for mode, s in rows.items():
            typer.echo(f"{mode:8} {s.ndcg10:7.4f}  {s.recall100:10.4f}  {s.mrr10:6.4f}")


