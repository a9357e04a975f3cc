"""The chat's Chainlit side: the history tables and data layer on our database, the element file store, the
patches of Chainlit's internals (one module, pinned), and how a turn shows itself. The handlers Chainlit loads
live in `scholarloom/chat.py` and only call into this package and `assistant/`.

`tables`, `files` and `root` never import Chainlit; the other modules do, and Chainlit reads (and, when missing,
writes) its config on import: import them only after `chatui.root.prepare_chainlit_root`.
"""
