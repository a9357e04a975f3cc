"""What one model call costs the process that makes it: CPU milliseconds per streamed call through
`assistant.llm.stream_completion` (litellm and the OpenAI SDK), for a tool-call round and for a ~300-word answer
streamed 3 words a chunk, against the stand-in model in a process of its own (its CPU is not counted).

    python -m bench.litellm_cost [--calls 40] [--model openai/scripted]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import time

WORDS = " ".join(f"word{n}" for n in range(300))


def _serve(kind: str, answer) -> None:  # the stand-in, in a process of its own
    from harness.llm_server import ScriptedLLM, text, tool_call

    def responder(_body):
        return tool_call("search_papers", query="graph neural networks") if kind == "tool" else text(WORDS, words=3)

    llm = ScriptedLLM(responder=responder).start()
    answer.put(llm.api_base)
    llm.thread.join()


async def _calls(config, count: int) -> tuple[float, int]:
    from assistant.llm import stream_completion

    async def once() -> int:
        return len([item async for item in stream_completion(config, [{"role": "user", "content": "hi"}], [])])

    for _ in range(5):  # warm: imports, connections, caches
        await once()
    began = time.process_time()
    items = [await once() for _ in range(count)][-1]
    return 1000 * (time.process_time() - began) / count, items


def measure(kind: str, model: str, count: int) -> dict:
    from assistant.llm import LLMConfig

    context = multiprocessing.get_context("spawn")
    answer = context.Queue()
    server = context.Process(target=_serve, args=(kind, answer), daemon=True)
    server.start()
    try:
        config = LLMConfig(model=model, api_base=answer.get(timeout=60), api_key="bench", timeout=30)
        cpu_ms, items = asyncio.run(_calls(config, count))
    finally:
        server.terminate()
        server.join(10)
    return {"kind": kind, "model": model, "calls": count, "cpu_ms_per_call": round(cpu_ms, 1), "items": items}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--model", default="openai/scripted")
    args = parser.parse_args()
    for kind in ("tool", "answer"):
        print(json.dumps(measure(kind, args.model, args.calls)), flush=True)


if __name__ == "__main__":
    main()
