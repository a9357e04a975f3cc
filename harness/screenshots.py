"""The documents' screenshots (docs/images/), taken by a real browser: `make screenshots`.

The demo corpus is served as `make demo` serves it (`harness.serve.served`), with the scripted model of the tests
(`harness.llm_server`) in place of a real one, so an answer is the same each time; Debian's chromium, driven by
Playwright, signs in, asks, and photographs the answer, a paper page, a researcher page and a search. Each picture
is 1200 pixels wide and kept as a palette PNG (a few hundred kB at most).

    .venv/bin/python -m harness.screenshots [--data-dir DIR] [--out docs/images]

Without --data-dir the demo is loaded into a scratch directory first (`scholarloom ingest demo`, about a minute);
the models come from SCHOLARLOOM_SHARED_MODELS_DIR (`make screenshots` points it at the data directory's models).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.browser import CHROMIUM, CHROMIUM_FLAGS, local_context, signed_in
from harness.llm_server import ScriptedLLM, text, tool_call
from harness.serve import child_environment, served

USER, PASSWORD = "docs", "screenshots for the documents"
WIDTH, HEIGHT = 1200, 800
PAPER = "/papers/2005.02877"  # TripPy: its PDF is in the demo, so its references and neighbourhood are drawn
AUTHOR = ("/papers/2006.07357", "Joseph M. Hellerstein")  # a researcher with several papers in the demo
QUESTION = "How can I add logging to a model after it was trained?"
ANSWER = (
    "Add the log statements after training and let the system replay it: *Hindsight Logging for Model Training* "
    "describes Flor, which records cheap checkpoints while a model trains and then re-executes only the parts "
    "needed to run the new log statements, in parallel, so the missing values come back without training "
    "again [1]. The paper reports replays that are much faster than retraining on its workloads [1]."
)


def _scholarloom(data_dir: Path, *args: str, stdin: str | None = None) -> None:
    command = [str(Path(sys.executable).with_name("scholarloom")), *args]
    subprocess.run(command, env=child_environment(data_dir), input=stdin, text=True, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def _save(page, path: Path, full_page: bool = False) -> None:
    """The page as a palette PNG: 256 colours are plenty for text on flat backgrounds, at a fifth of the size."""
    from PIL import Image

    raw = path.with_suffix(".raw.png")
    page.screenshot(path=raw, full_page=full_page)
    with Image.open(raw) as shot:
        shot = shot.crop((0, 0, shot.width, min(shot.height, 2 * HEIGHT)))
        shot.convert("RGB").quantize(256, dither=Image.Dither.NONE).save(path, optimize=True)
    raw.unlink()
    print(f"{path} ({path.stat().st_size // 1024} kB)")


def _answer(browser, base: str, out: Path) -> None:
    context, page = signed_in(browser, base, USER, PASSWORD, WIDTH, HEIGHT, timeout_ms=60_000)
    page.click("#chat-input")
    page.keyboard.type(QUESTION)
    page.locator("#chat-submit:not([disabled])").click(timeout=30_000)
    page.wait_for_selector(".answer-actions", timeout=60_000)
    page.wait_for_selector(".scholar-card", timeout=30_000)
    page.wait_for_timeout(1000)
    _save(page, out / "answer.png")
    context.close()


def _pages(browser, base: str, out: Path) -> None:
    context = local_context(browser, base, WIDTH, HEIGHT)
    page = context.new_page()
    page.goto(base + PAPER)
    _save(page, out / "paper-page.png", full_page=True)
    page.goto(base + AUTHOR[0])
    page.get_by_role("link", name=AUTHOR[1], exact=True).first.click()
    page.wait_for_load_state()
    _save(page, out / "researcher-page.png", full_page=True)
    page.goto(base + "/search?q=dialogue+state+tracking")
    _save(page, out / "search.png")
    context.close()


def take(data_dir: Path, out: Path) -> None:
    """Serve `data_dir` (a loaded demo) with the scripted model and photograph the documents' pages into `out`."""
    from playwright.sync_api import sync_playwright

    _scholarloom(data_dir, "users", "add", USER, "--password-stdin", "--replace", stdin=PASSWORD + "\n")
    model = ScriptedLLM().start()
    model.answer_probes = True  # the server asks its model what it can do when it starts
    model.enqueue(tool_call("search_papers", query="add logging after model training"), text(ANSWER))
    out.mkdir(parents=True, exist_ok=True)
    try:
        with served(data_dir, SCHOLARLOOM_LLM="openai/scripted", SCHOLARLOOM_LLM_API_BASE=model.api_base,
                    SCHOLARLOOM_LLM_API_KEY="scripted") as (base, _server), sync_playwright() as playwright:  # fmt: skip
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            _answer(browser, base, out)
            _pages(browser, base, out)
            browser.close()
    finally:
        model.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, help="a data directory with the demo loaded (else a scratch one)")
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    options = parser.parse_args()
    if options.data_dir:
        take(options.data_dir.resolve(), options.out.resolve())
        return
    with tempfile.TemporaryDirectory(prefix="scholarloom-shots-") as scratch:
        data_dir = Path(scratch) / "data"
        _scholarloom(data_dir, "ingest", "demo")
        take(data_dir, options.out.resolve())


if __name__ == "__main__":
    main()
