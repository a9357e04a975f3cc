"""The baseline: the schema of 2026-12-02 (catalog, accounts, jobs, uploads, chat history), frozen here.

It adopts a database that an earlier ScholarLoom made without migrations (which created its tables from the
models and added new nullable columns at start): tables it lacks are created, nullable columns it lacks are added,
missing indexes are made, and no row is touched. On an empty database it creates the whole schema.

Revision ID: 0001
Revises:
Created: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

META = sa.MetaData()

sa.Table(
    "accounts",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("username", sa.String(length=64), nullable=False),
    sa.Column("password_hash", sa.String(), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("active", sa.Boolean(), nullable=False),
    sa.Column("is_admin", sa.Boolean(), nullable=True),
    sa.Column("session_version", sa.Integer(), nullable=True),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "catalog_versions",
    META,
    sa.Column("subject", sa.String(length=40), nullable=False),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint("subject")
)

sa.Table(
    "feed_keys",
    META,
    sa.Column("username", sa.String(length=200), nullable=False),
    sa.Column("key", sa.String(), nullable=False),
    sa.PrimaryKeyConstraint("username")
)

sa.Table(
    "follows",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("username", sa.String(length=200), nullable=False),
    sa.Column("researcher_id", sa.Integer(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("username", "researcher_id")
)

sa.Table(
    "harvest_cursors",
    META,
    sa.Column("name", sa.String(length=300), nullable=False),
    sa.Column("state", sa.JSON(), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("name")
)

sa.Table(
    "ingest_ledger",
    META,
    sa.Column("stage", sa.String(), nullable=False),
    sa.Column("key", sa.String(), nullable=False),
    sa.Column("content_hash", sa.String(), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("stage", "key")
)

sa.Table(
    "institutions",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("ror_id", sa.String(), nullable=True),
    sa.Column("openalex_id", sa.String(), nullable=True),
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("aliases", sa.JSON(), nullable=False),
    sa.Column("acronyms", sa.JSON(), nullable=False),
    sa.Column("country_code", sa.String(), nullable=True),
    sa.Column("country_name", sa.String(), nullable=True),
    sa.Column("city", sa.String(), nullable=True),
    sa.Column("types", sa.JSON(), nullable=False),
    sa.Column("established", sa.Integer(), nullable=True),
    sa.Column("website", sa.String(), nullable=True),
    sa.Column("parent_rors", sa.JSON(), nullable=False),
    sa.Column("child_rors", sa.JSON(), nullable=False),
    sa.Column("search_key", sa.String(), nullable=True),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "job_workers",
    META,
    sa.Column("name", sa.String(length=100), nullable=False),
    sa.Column("pid", sa.Integer(), nullable=False),
    sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("name")
)

sa.Table(
    "jobs",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("kind", sa.String(length=40), nullable=False),
    sa.Column("arguments", sa.JSON(), nullable=False),
    sa.Column("key", sa.String(length=200), nullable=True),
    sa.Column("live_key", sa.String(length=200), nullable=True),
    sa.Column("state", sa.String(length=12), nullable=False),
    sa.Column("asked_by", sa.String(length=100), nullable=False),
    sa.Column("progress", sa.JSON(), nullable=False),
    sa.Column("counts", sa.JSON(), nullable=False),
    sa.Column("failures", sa.JSON(), nullable=False),
    sa.Column("note", sa.String(length=2000), nullable=True),
    sa.Column("error", sa.String(length=2000), nullable=True),
    sa.Column("attempts", sa.Integer(), nullable=False),
    sa.Column("worker", sa.String(length=100), nullable=True),
    sa.Column("cancel_requested", sa.Boolean(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("live_key")
)

sa.Table(
    "library_papers",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("owner", sa.String(length=200), nullable=False),
    sa.Column("paper_id", sa.String(length=200), nullable=False),
    sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("owner", "paper_id")
)

sa.Table(
    "llm_usage",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("username", sa.String(length=150), nullable=False),
    sa.Column("day", sa.String(length=10), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("model", sa.String(length=200), nullable=False),
    sa.Column("mode", sa.String(length=20), nullable=False),
    sa.Column("prompt_tokens", sa.Integer(), nullable=False),
    sa.Column("completion_tokens", sa.Integer(), nullable=False),
    sa.Column("estimated", sa.Boolean(), nullable=False),
    sa.Column("cost_usd", sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "papers",
    META,
    sa.Column("id", sa.String(length=200), nullable=False),
    sa.Column("arxiv_id", sa.String(), nullable=True),
    sa.Column("openalex_id", sa.String(), nullable=True),
    sa.Column("doi", sa.String(), nullable=True),
    sa.Column("title", sa.String(), nullable=False),
    sa.Column("abstract", sa.String(), nullable=False),
    sa.Column("categories", sa.JSON(), nullable=False),
    sa.Column("primary_category", sa.String(), nullable=True),
    sa.Column("published", sa.DateTime(timezone=True), nullable=True),
    sa.Column("updated", sa.DateTime(timezone=True), nullable=True),
    sa.Column("year", sa.Integer(), nullable=True),
    sa.Column("version", sa.Integer(), nullable=True),
    sa.Column("landing_url", sa.String(), nullable=True),
    sa.Column("pdf_url", sa.String(), nullable=True),
    sa.Column("journal_ref", sa.String(), nullable=True),
    sa.Column("comments", sa.String(), nullable=True),
    sa.Column("license", sa.String(), nullable=True),
    sa.Column("venue", sa.String(), nullable=True),
    sa.Column("cited_by_count", sa.Integer(), nullable=True),
    sa.Column("summary", sa.String(), nullable=True),
    sa.Column("topics", sa.JSON(), nullable=False),
    sa.Column("paper_type", sa.String(), nullable=True),
    sa.Column("research_field", sa.String(), nullable=True),
    sa.Column("novelty", sa.String(), nullable=True),
    sa.Column("significance_score", sa.Integer(), nullable=True),
    sa.Column("analysed", sa.Boolean(), nullable=False),
    sa.Column("all_authors_matched", sa.Boolean(), nullable=False),
    sa.Column("sources", sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "researchers",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("identity_key", sa.String(), nullable=False),
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("name_key", sa.String(), nullable=True),
    sa.Column("openalex_id", sa.String(), nullable=True),
    sa.Column("orcid", sa.String(), nullable=True),
    sa.Column("s2_id", sa.String(), nullable=True),
    sa.Column("aliases", sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "sign_in_failures",
    META,
    sa.Column("key", sa.String(length=200), nullable=False),
    sa.Column("failures", sa.Integer(), nullable=False),
    sa.Column("blocked_until", sa.Float(), nullable=False),
    sa.Column("updated", sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint("key")
)

sa.Table(
    "uploads",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("owner", sa.String(length=200), nullable=False),
    sa.Column("filename", sa.String(length=300), nullable=False),
    sa.Column("sha256", sa.String(length=64), nullable=False),
    sa.Column("size", sa.Integer(), nullable=False),
    sa.Column("state", sa.String(length=20), nullable=False),
    sa.Column("error", sa.String(), nullable=True),
    sa.Column("pages", sa.Integer(), nullable=False),
    sa.Column("passages", sa.Integer(), nullable=False),
    sa.Column("title", sa.String(), nullable=False),
    sa.Column("authors", sa.JSON(), nullable=False),
    sa.Column("abstract", sa.String(), nullable=False),
    sa.Column("arxiv_id", sa.String(length=40), nullable=True),
    sa.Column("doi", sa.String(length=200), nullable=True),
    sa.Column("paper_id", sa.String(length=200), nullable=True),
    sa.Column("job_id", sa.Integer(), nullable=True),
    sa.Column("edited", sa.Boolean(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "used_nonces",
    META,
    sa.Column("nonce", sa.String(length=64), nullable=False),
    sa.Column("used_at", sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint("nonce")
)

sa.Table(
    "authorships",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("paper_id", sa.String(), nullable=False),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("raw_name", sa.String(), nullable=False),
    sa.Column("researcher_id", sa.Integer(), nullable=True),
    sa.Column("match_method", sa.String(), nullable=True),
    sa.Column("match_confidence", sa.Float(), nullable=True),
    sa.Column("raw_affiliation", sa.String(), nullable=True),
    sa.Column("institution_id", sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(["institution_id"], ["institutions.id"]),
    sa.ForeignKeyConstraint(["paper_id"], ["papers.id"]),
    sa.ForeignKeyConstraint(["researcher_id"], ["researchers.id"]),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("paper_id", "position")
)

sa.Table(
    "citations",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("citing_id", sa.String(), nullable=False),
    sa.Column("cited_key", sa.String(), nullable=False),
    sa.Column("cited_id", sa.String(), nullable=True),
    sa.Column("cited_openalex_id", sa.String(), nullable=True),
    sa.Column("cited_doi", sa.String(), nullable=True),
    sa.Column("cited_arxiv_id", sa.String(), nullable=True),
    sa.Column("cited_title", sa.String(), nullable=True),
    sa.ForeignKeyConstraint(["cited_id"], ["papers.id"]),
    sa.ForeignKeyConstraint(["citing_id"], ["papers.id"]),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("citing_id", "cited_key")
)

sa.Table(
    "external_identities",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("provider", sa.String(length=40), nullable=False),
    sa.Column("subject", sa.String(length=255), nullable=False),
    sa.Column("account_id", sa.Integer(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("provider", "subject", name="uq_identity_provider_subject")
)

sa.Table(
    "users",
    META,
    sa.Column("id", sa.Text(), nullable=False),
    sa.Column("identifier", sa.Text(), nullable=False),
    sa.Column("metadata", sa.Text(), nullable=False),
    sa.Column("createdAt", sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("identifier")
)

sa.Table(
    "threads",
    META,
    sa.Column("id", sa.Text(), nullable=False),
    sa.Column("createdAt", sa.Text(), nullable=True),
    sa.Column("name", sa.Text(), nullable=True),
    sa.Column("userId", sa.Text(), nullable=True),
    sa.Column("userIdentifier", sa.Text(), nullable=True),
    sa.Column("tags", sa.Text(), nullable=True),
    sa.Column("metadata", sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(["userId"], ["users.id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "elements",
    META,
    sa.Column("id", sa.Text(), nullable=False),
    sa.Column("threadId", sa.Text(), nullable=True),
    sa.Column("type", sa.Text(), nullable=True),
    sa.Column("url", sa.Text(), nullable=True),
    sa.Column("chainlitKey", sa.Text(), nullable=True),
    sa.Column("path", sa.Text(), nullable=True),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("display", sa.Text(), nullable=True),
    sa.Column("objectKey", sa.Text(), nullable=True),
    sa.Column("size", sa.Text(), nullable=True),
    sa.Column("page", sa.Integer(), nullable=True),
    sa.Column("language", sa.Text(), nullable=True),
    sa.Column("forId", sa.Text(), nullable=True),
    sa.Column("mime", sa.Text(), nullable=True),
    sa.Column("props", sa.Text(), nullable=True),
    sa.Column("autoPlay", sa.Boolean(), nullable=True),
    sa.Column("playerConfig", sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(["threadId"], ["threads.id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "feedbacks",
    META,
    sa.Column("id", sa.Text(), nullable=False),
    sa.Column("forId", sa.Text(), nullable=False),
    sa.Column("threadId", sa.Text(), nullable=False),
    sa.Column("value", sa.Integer(), nullable=False),
    sa.Column("comment", sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(["threadId"], ["threads.id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("id")
)

sa.Table(
    "steps",
    META,
    sa.Column("id", sa.Text(), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("type", sa.Text(), nullable=False),
    sa.Column("threadId", sa.Text(), nullable=False),
    sa.Column("parentId", sa.Text(), nullable=True),
    sa.Column("command", sa.Text(), nullable=True),
    sa.Column("modes", sa.Text(), nullable=True),
    sa.Column("streaming", sa.Boolean(), nullable=False),
    sa.Column("waitForAnswer", sa.Boolean(), nullable=True),
    sa.Column("isError", sa.Boolean(), nullable=True),
    sa.Column("metadata", sa.Text(), nullable=True),
    sa.Column("tags", sa.Text(), nullable=True),
    sa.Column("input", sa.Text(), nullable=True),
    sa.Column("output", sa.Text(), nullable=True),
    sa.Column("createdAt", sa.Text(), nullable=True),
    sa.Column("start", sa.Text(), nullable=True),
    sa.Column("end", sa.Text(), nullable=True),
    sa.Column("generation", sa.Text(), nullable=True),
    sa.Column("showInput", sa.Text(), nullable=True),
    sa.Column("defaultOpen", sa.Boolean(), nullable=True),
    sa.Column("autoCollapse", sa.Boolean(), nullable=True),
    sa.Column("language", sa.Text(), nullable=True),
    sa.Column("icon", sa.Text(), nullable=True),
    sa.Column("indent", sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(["threadId"], ["threads.id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("id")
)


# (name, table, columns, unique)
INDEXES = [
    ("ix_accounts_username", "accounts", ["username"], True),
    ("ix_feed_keys_key", "feed_keys", ["key"], True),
    ("ix_follows_researcher_id", "follows", ["researcher_id"], False),
    ("ix_follows_username", "follows", ["username"], False),
    ("ix_institutions_name", "institutions", ["name"], False),
    ("ix_institutions_openalex_id", "institutions", ["openalex_id"], True),
    ("ix_institutions_ror_id", "institutions", ["ror_id"], True),
    ("ix_jobs_asked_by", "jobs", ["asked_by"], False),
    ("ix_jobs_created_at", "jobs", ["created_at"], False),
    ("ix_jobs_key", "jobs", ["key"], False),
    ("ix_jobs_kind", "jobs", ["kind"], False),
    ("ix_jobs_state", "jobs", ["state"], False),
    ("ix_library_papers_owner", "library_papers", ["owner"], False),
    ("ix_llm_usage_day", "llm_usage", ["day"], False),
    ("ix_llm_usage_username", "llm_usage", ["username"], False),
    ("ix_papers_arxiv_id", "papers", ["arxiv_id"], True),
    ("ix_papers_doi", "papers", ["doi"], False),
    ("ix_papers_openalex_id", "papers", ["openalex_id"], True),
    ("ix_papers_primary_category", "papers", ["primary_category"], False),
    ("ix_papers_published", "papers", ["published"], False),
    ("ix_papers_year", "papers", ["year"], False),
    ("ix_researchers_identity_key", "researchers", ["identity_key"], True),
    ("ix_researchers_name_key", "researchers", ["name_key"], False),
    ("ix_researchers_openalex_id", "researchers", ["openalex_id"], False),
    ("ix_researchers_orcid", "researchers", ["orcid"], False),
    ("ix_researchers_s2_id", "researchers", ["s2_id"], False),
    ("ix_sign_in_failures_updated", "sign_in_failures", ["updated"], False),
    ("ix_uploads_owner", "uploads", ["owner"], False),
    ("ix_used_nonces_used_at", "used_nonces", ["used_at"], False),
    ("ix_authorships_institution_id", "authorships", ["institution_id"], False),
    ("ix_authorships_paper_id", "authorships", ["paper_id"], False),
    ("ix_authorships_researcher_id", "authorships", ["researcher_id"], False),
    ("ix_citations_cited", "citations", ["cited_id"], False),
    ("ix_citations_cited_openalex_id", "citations", ["cited_openalex_id"], False),
    ("ix_citations_citing_id", "citations", ["citing_id"], False),
    ("ix_external_identities_account_id", "external_identities", ["account_id"], False),
    ("ix_external_identities_provider", "external_identities", ["provider"], False),
    ("ix_threads_userId", "threads", ["userId"], False),
    ("ix_threads_userIdentifier", "threads", ["userIdentifier"], False),
    ("ix_elements_forId", "elements", ["forId"], False),
    ("ix_elements_threadId", "elements", ["threadId"], False),
    ("ix_feedbacks_forId", "feedbacks", ["forId"], False),
    ("ix_steps_threadId", "steps", ["threadId"], False),
]


def upgrade() -> None:
    bind = op.get_bind()
    present = set(sa.inspect(bind).get_table_names())
    for table in META.sorted_tables:
        if table.name not in present:
            table.create(bind)
            continue
        have = {column["name"] for column in sa.inspect(bind).get_columns(table.name)}
        for column in table.columns:
            if column.name in have:
                continue
            if not column.nullable:
                raise RuntimeError(
                    f"table {table.name} lacks the required column {column.name}: this database is older than the "
                    "versions the baseline can adopt; load it with ScholarLoom 0.1 first, or start a new one"
                )
            op.add_column(table.name, sa.Column(column.name, column.type, nullable=True))
    for name, table, columns, unique in INDEXES:
        if name not in {index["name"] for index in sa.inspect(bind).get_indexes(table)}:
            op.create_index(name, table, columns, unique=unique)


def downgrade() -> None:
    raise NotImplementedError("the baseline is where the history starts: there is nothing to go back to")
