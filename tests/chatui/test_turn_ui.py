"""How a turn shows itself in Chainlit: what a tool's step shows of its result."""


def test_a_long_tool_result_shows_whole_lines_and_says_what_it_left(server):
    from chatui.turn_ui import STEP_OUTPUT_CHARS, step_output

    cards = [f"[{n}] **Paper {n}** ([/papers/2401.0000{n}](/papers/2401.0000{n})): " + "a sentence. " * 40
             for n in range(1, 11)]  # fmt: skip
    result = "\n".join(cards)
    assert len(result) > STEP_OUTPUT_CHARS
    shown = step_output(result)
    body, note = shown.rsplit("\n\n", 1)
    assert len(body) <= STEP_OUTPUT_CHARS and body.splitlines() == cards[: len(body.splitlines())]  # no line cut
    left = len(cards) - len(body.splitlines())
    assert left > 0 and note == f"*({left} more lines not shown here; the model read it all)*"
    assert step_output("short\nresult") == "short\nresult"
    one = step_output("word " * 2_000, most=100)  # a single line longer than the step: cut at a space
    cut = one.split("\n\n")[0]
    assert cut.startswith("word word") and cut.endswith("word ...") and len(cut) <= 104
    assert one.endswith("*(the rest of this line not shown here; the model read it all)*")
