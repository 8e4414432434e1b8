"""The suite's command-line tools, apart from the library a case imports.

Each runs as ``python -m harness.tools.<name>`` (the tox envs call them):

- :mod:`~harness.tools.review` — review pending transcripts, one decision per change
  (``tox -e review``);
- :mod:`~harness.tools.defects` — the quarantine list, ``DEFECTS.md``;
- :mod:`~harness.tools.ledger` — the promise ledger of ``cases/promises/`` (``--check``);
- :mod:`~harness.tools.mutants` — source mutants of contenox and their kill matrix
  (``tox -e mutants``).

Nothing in the rest of ``harness`` imports them (the layers contract in
pyproject.toml holds it): they read the cases and the catalog, never the other
way round, and no case needs them to run.
"""
