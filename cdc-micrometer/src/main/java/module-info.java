/**
 * Micrometer meters for a datum-cdc source ({@link io.datum.cdc.micrometer.PgCdcSourceMetrics}) and
 * a timed checkpoint store. Micrometer itself is the application's ({@code provided}): this module
 * brings none.
 */
module io.datum.cdc.micrometer {
  requires transitive io.datum.cdc.core;
  requires transitive micrometer.core;
  requires org.slf4j;

  exports io.datum.cdc.micrometer;
}
