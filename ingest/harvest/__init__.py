"""Live harvesters: arXiv (API and OAI-PMH), OpenAlex, Semantic Scholar and arXiv PDFs.

They fetch through `ingest.http.PoliteClient`, parse with `ingest.parsers`, and store through
`ingest.pipeline.load_records`, so a harvested record goes the same way as a demo record, and each page's
harvest position is committed with the records it produced.
"""
