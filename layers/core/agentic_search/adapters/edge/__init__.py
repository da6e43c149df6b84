"""Qdrant Edge adapters (``VECTOR_STORE=edge``): the vector store, BM25 as its sparse vector
and the structured source, all over one in-process Rust engine per collection."""
