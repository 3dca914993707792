package io.datum.cdc.core.config;

/**
 * The pgoutput {@code origin} option (PostgreSQL 16 and later): which transactions to send by their
 * replication origin (PostgreSQL docs, CREATE SUBSCRIPTION, {@code origin}).
 */
public enum OriginFilter {
  /** {@code origin = any}: every transaction, whatever its origin (the server's default). */
  ANY,
  /**
   * {@code origin = none}: only transactions without a replication origin, i.e. not applied by
   * logical replication from another node; avoids loops in bidirectional setups.
   */
  NONE
}
