/**
 * The snapshot benchmark: an initial snapshot of one large table and of 20 tables by datum-cdc,
 * Debezium Engine and {@code psql}'s {@code COPY ... TO STDOUT} on one embedded PostgreSQL. Run by
 * hand with {@link io.datum.cdc.benchmarks.snapshot.SnapshotHarness}; see {@code
 * docs/benchmarks.md}.
 */
package io.datum.cdc.benchmarks.snapshot;
