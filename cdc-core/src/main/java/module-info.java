/**
 * datum-cdc's PostgreSQL source: {@link io.datum.cdc.core.PgCdcSource} reads a logical replication
 * slot with pgoutput and delivers every committed row change as an event. Only {@code
 * io.datum.cdc.core} and {@code io.datum.cdc.core.config} (the options, declared once: {@code
 * SourceOptions}) are exported; the stages of the data path ({@code replication}, {@code pgoutput},
 * {@code types}, {@code assembly}, {@code delivery}, {@code feedback}) are not API.
 */
module io.datum.cdc.core {
  requires transitive io.datum.cdc.api;
  requires transitive java.sql;
  requires org.postgresql.jdbc;
  requires org.slf4j;

  exports io.datum.cdc.core;
  exports io.datum.cdc.core.config;
}
