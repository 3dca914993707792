/**
 * datum-cdc's PostgreSQL source: {@link io.datum.cdc.core.PgCdcSource} reads a logical replication
 * slot with pgoutput and delivers every committed row change as an event. Only {@code
 * io.datum.cdc.core} and {@code io.datum.cdc.core.config} (the options, declared once: {@code
 * SourceOptions}) are exported; the stages of the data path ({@code replication}, {@code pgoutput},
 * {@code relation}, {@code types}, {@code snapshot}, {@code assembly}, {@code delivery}, {@code
 * errors}, {@code feedback}) are not API, four of them exported to the benchmarks only.
 */
// "module not found": the benchmarks are no module of this build's module path (see below)
@SuppressWarnings("module")
module io.datum.cdc.core {
  requires transitive io.datum.cdc.api;
  requires transitive java.sql;
  requires org.postgresql.jdbc;
  requires ch.randelshofer.fastdoubleparser;
  requires org.slf4j;

  exports io.datum.cdc.core;
  exports io.datum.cdc.core.config;

  // one classification of failures (what retrying can heal) for pgcdc and the connector
  exports io.datum.cdc.core.errors to
      io.datum.cdc.cli,
      io.datum.cdc.kafka.connect;

  // the benchmarks (cdc-benchmarks, automatic module io.datum.cdc.benchmarks, not published)
  // measure the acknowledgement path and the snapshot row decoding on their own; no one else
  exports io.datum.cdc.core.feedback to
      io.datum.cdc.benchmarks;
  exports io.datum.cdc.core.delivery to
      io.datum.cdc.benchmarks;
  exports io.datum.cdc.core.relation to
      io.datum.cdc.benchmarks;
  exports io.datum.cdc.core.snapshot to
      io.datum.cdc.benchmarks;
}
