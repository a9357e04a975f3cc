"""Stand-ins that the tests and the benchmarks both run the product against: a scripted OpenAI-compatible model on
127.0.0.1 (`llm_server`), a served instance and its health (`serve`), a signed-in chat session over Chainlit's
socket (`chat_client`), and hostile PDFs (`hostile_pdfs`). Not shipped; nothing in the product imports it."""
