"""The warehouse: one store opened once and pinned to one snapshot, under the CLI, the site and
notebooks.

    import collector
    wh = collector.open()                    # the working store, else the shipped one
    wh.table("scores").df()                  # a derived table (pandas), computed once
    wh.sql("SELECT count(*) FROM store.runs").fetchall()
    wh.ingest(["results/"])                  # through the store's lock; then reads the new data

Every table read from one warehouse comes from the same snapshot, which no writer removes
until `close`. Derived tables are computed when first asked for (with those they read), once
per warehouse, or read from the cache of those computed before over the same snapshot by the
same code (`collector.queries.query.cache_folder`). Ad-hoc SQL is one read-only SELECT
statement confined to the pinned snapshot (see `collector.queries.query.connect`).
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from collector import store as stores
from collector.errors import InputError, StoreError

if TYPE_CHECKING:
    import duckdb

    from collector.ingest.check import Verdict
    from collector.ingest.pipeline import IngestReport
    from collector.ingest.rows import IssueRow
    from collector.ingest.trees import Skipped

ROUND = re.compile(r"v\d+\.\d+")
#: each relation a warehouse returned, to its warehouse: a relation keeps the warehouse (its
#: connection and pinned snapshot) open while it lives, so that
#: `collector.open().table("scores").df()` reads after the warehouse itself is dropped
_OWNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Warehouse:
    """A store, pinned to its live snapshot, with its derived tables.

    `path` is the store folder; None means $COLLECTOR_STORE, else the working store
    (`.collector/store`), else the shipped one (`runs/warehouse`), as `collector.store.resolve`
    says. `threads` fixes DuckDB's threads (1 gives the same row order and sums every time)."""

    def __init__(self, path: str | Path | None = None, *, threads: int | None = None) -> None:
        self._given = path
        self._threads = threads
        self._pin(stores.resolve(path))

    def _pin(self, path: Path) -> None:
        self.path = path
        pin = stores.Pin(path)
        self.snapshot: str | None = pin.name  # None for a store never written
        # what close() releases, also when the warehouse is dropped unclosed: a DuckDB
        # connection left open keeps its threads, and a process forked beside them (ingest's
        # workers) may crash
        self._held: list[Any] = [pin]
        self._release = weakref.finalize(self, _release, self._held)

    def __repr__(self) -> str:
        return f"<Warehouse {self.path} at {self.snapshot or 'no snapshot'}>"

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection over the pinned snapshot (made on first use, confined)."""
        if not self._held:
            raise StoreError(f"{self.path}: this warehouse is closed; open the store again")
        if len(self._held) == 1:
            from collector.queries import query

            if self.snapshot is None:
                raise StoreError(
                    f"{self.path}: no store here (nothing ingested yet): ingest results with "
                    "`collector ingest PATH`, or name a store with --store or $COLLECTOR_STORE"
                )
            tables = stores.snapshot_tables(self.path, self.snapshot)
            digest = stores.manifest.digest(self.path / self.snapshot)
            cache = query.cache_folder(digest, self._threads)
            self._held.append(query.connect(tables, self._threads, cache))
        return self._held[1]

    @staticmethod
    def names() -> list[str]:
        """The derived tables, dependencies first."""
        from collector.queries import query

        return query.names()

    def table(self, name: str) -> duckdb.DuckDBPyRelation:
        """A derived table (`scores`), or a stored one (`store.runs`), as a DuckDB relation:
        `.df()` for pandas, `.to_arrow_table()` for Arrow, `.fetchall()` for tuples."""
        from collector.queries import query
        from collector.store.schemas import STORED_TABLES

        stored = name.removeprefix("store.")
        if name == stored or stored not in STORED_TABLES:
            query.contract(name)  # an unknown name is an error before the store is read
            query.build(self.connection, name)
        return self._owned(self.connection.table(name))

    def sql(self, text: str) -> duckdb.DuckDBPyRelation:
        """Run one read-only SELECT over the stored tables (`store.runs`...), the reference,
        parameter and derived tables; no file, network, extension or setting is reachable."""
        from collector.queries import query

        return self._owned(query.select(self.connection, text))

    def _owned(self, relation: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
        _OWNERS[relation] = self
        return relation

    def check_contracts(self) -> list[str]:
        """Every derived table against its contract: one line per violated invariant."""
        from collector.queries import query

        return query.check_contracts(self.connection)

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        source: str | None = None,
        round_: str | None = None,
        events: bool = True,
        wait_s: float | None = None,
        on_issue: Callable[[IssueRow], None] | None = None,
        on_wait: Callable[[str], None] | None = None,
        workers: int | None = None,
    ) -> IngestReport:
        """Ingest result logs, system descriptions and reference data (see
        `collector.ingest.pipeline.ingest`) through the store's writer lock; the warehouse
        then reads the new snapshot."""
        from collector.ingest.pipeline import SOURCES, ingest

        if source is not None and source not in SOURCES:
            raise InputError(f"--source must be one of {', '.join(SOURCES)}, not {source!r}")
        _check_round(round_)
        wait_s = stores.wait_seconds(wait_s)
        with self._writing():
            return ingest(
                paths,
                store=self._given,
                source=source,
                workers=workers,
                on_issue=on_issue,
                wait_s=wait_s,
                on_wait=on_wait,
                round_=round_,
                events=events,
            )

    def check(
        self,
        paths: Iterable[str | Path],
        *,
        round_: str | None = None,
        save: bool = True,
        wait_s: float | None = None,
        on_wait: Callable[[str], None] | None = None,
        skipped: list[Skipped] | None = None,
    ) -> list[Verdict]:
        """Compliance verdicts on logs (see `collector.ingest.check.check`), stored through
        the writer lock unless `save` is False; the warehouse then reads the new snapshot."""
        from collector.ingest.check import check

        _check_round(round_)
        wait_s = stores.wait_seconds(wait_s)
        with self._writing() if save else contextlib.nullcontext():
            return check(
                list(paths),
                store=self._given,
                save=save,
                wait_s=wait_s,
                on_wait=on_wait,
                skipped=skipped,
                round_=round_,
            )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Around a write: the pinned snapshot let go (held, it would keep every writer, this
        one too, from removing it once it is old), then the store's live snapshot read (a
        write may have made the working store)."""
        self.close()
        try:
            yield
        finally:
            self._pin(stores.resolve(self._given))

    def close(self) -> None:
        """Close the connection and let writers remove the snapshot (as dropping the
        warehouse does)."""
        self._release()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _check_round(round_: str | None) -> None:
    if round_ is not None and not ROUND.fullmatch(round_):
        raise InputError(f"--round must name a round such as v4.1, not {round_!r}")


def _release(held: list[Any]) -> None:
    """Close a warehouse's connection, if it made one, and unpin its snapshot."""
    pin, *connection = held
    for con in connection:
        con.close()
    pin.close()
    held.clear()
