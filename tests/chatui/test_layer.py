"""The chat-history data layer on our schema: what it keeps out of a thread's metadata."""

import json
import uuid

FLOR = "2006.07357"


async def test_thread_metadata_never_holds_the_conversation(server, tmp_path):
    """At disconnect Chainlit saves the whole user session as the thread's metadata (`persist_user_session` ->
    `update_thread`): the keys the chat rebuilds from the steps on resume are left out."""
    from chainlit.context import init_http_context
    from chainlit.user import User

    from assistant.conversation import Conversation
    from assistant.tools import Card, SourceBook
    from chatui.files import LocalFiles
    from chatui.layer import SESSION_ONLY, HistoryLayer
    from chatui.tables import create_history_tables
    from retrieval.upkeep.database import make_engine

    url = f"sqlite:///{tmp_path / 'history.db'}"
    engine = make_engine(url)
    create_history_tables(engine)
    layer = HistoryLayer(url, LocalFiles(tmp_path / "files"))
    init_http_context()
    alice = await layer.create_user(User(identifier="alice"))
    thread_id = str(uuid.uuid4())
    conversation = Conversation(
        history=[{"role": "tool", "content": "Hindsight Logging for Model Training ..."}],
        sources=SourceBook({FLOR: (1, "Hindsight Logging for Model Training", f"/papers/{FLOR}")}),
        focus=(Card("paper", FLOR, "Hindsight Logging for Model Training", f"/papers/{FLOR}"),),
        paper=FLOR,
        paper_checked=True,
    )
    session = {"client_type": "webapp", "conversation": conversation.to_dict()}
    assert set(session) - {"client_type"} == SESSION_ONLY
    await layer.update_thread(thread_id, name="Logging", user_id=alice.id, metadata=session)
    metadata = (await layer.get_thread(thread_id))["metadata"]
    assert (json.loads(metadata) if isinstance(metadata, str) else metadata) == {"client_type": "webapp"}
    assert layer.failures == []
    await layer.engine.dispose()
    engine.dispose()
