package io.datum.cdc.micrometer;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a slot's replication lag on its own small JDBC connection, at most once per interval: the
 * value read last is returned in between. A failed read is logged at WARN, counted, and gives NaN
 * until the next successful one; it never throws.
 */
final class LagProbe implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LagProbe.class);

  /**
   * On a primary the server's current WAL write position, on a standby the last WAL position
   * received, minus the slot's confirmed_flush_lsn (PostgreSQL docs: System Administration
   * Functions, pg_current_wal_lsn, pg_last_wal_receive_lsn, pg_wal_lsn_diff; the
   * pg_replication_slots view). NULL when the slot has no confirmed position.
   */
  static final String QUERY =
      "SELECT pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn()"
          + " ELSE pg_current_wal_lsn() END, confirmed_flush_lsn)::float8"
          + " FROM pg_catalog.pg_replication_slots WHERE slot_name = ?";

  /** Seconds a lag query may take before it fails (and counts as a read error). */
  static final int QUERY_TIMEOUT_SECONDS = 5;

  /** Opens a connection; may throw. */
  interface Connector {
    Connection open() throws SQLException;
  }

  private final String slot;
  private final Connector connector;
  private final long intervalNanos;
  private final LongSupplier nanoTime;
  private final AtomicLong errors = new AtomicLong();
  private Connection connection;
  private double value = Double.NaN;
  private long readAt;
  private boolean read;
  private boolean closed;

  LagProbe(String slot, Connector connector, long intervalNanos, LongSupplier nanoTime) {
    this.slot = slot;
    this.connector = connector;
    this.intervalNanos = intervalNanos;
    this.nanoTime = nanoTime;
  }

  /** Returns the lag in bytes, read again if the last read is older than the interval; or NaN. */
  synchronized double bytes() {
    if (closed) {
      return Double.NaN;
    }
    long now = nanoTime.getAsLong();
    if (read && now - readAt < intervalNanos) {
      return value;
    }
    read = true;
    readAt = now;
    try {
      value = query();
    } catch (SQLException | RuntimeException e) {
      errors.incrementAndGet();
      value = Double.NaN;
      LOG.warn("slot {}: cannot read the replication lag: {}", slot, e.toString(), e);
      closeConnection();
    }
    return value;
  }

  private double query() throws SQLException {
    if (connection == null) {
      connection = connector.open();
    }
    try (PreparedStatement s = connection.prepareStatement(QUERY)) {
      s.setString(1, slot);
      s.setQueryTimeout(QUERY_TIMEOUT_SECONDS); // a scrape never waits long on a stuck server
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          throw new SQLException("replication slot \"" + slot + "\" does not exist");
        }
        double bytes = r.getDouble(1);
        return r.wasNull() ? Double.NaN : bytes;
      }
    }
  }

  /** Returns the failed reads so far. */
  long errors() {
    return errors.get();
  }

  private void closeConnection() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        LOG.debug("slot {}: closing the lag connection: {}", slot, e.toString());
      }
      connection = null;
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    closeConnection();
  }
}
