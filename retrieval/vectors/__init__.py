"""The vector index and how vectors are made: the store behind it (the engine in process or a Qdrant server),
the index over it, the encoder (ONNX, in process or in a child), windows of text, fusion."""
