package io.datum.cdc.micrometer;

import io.datum.cdc.core.SlotStatus;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a slot's {@link SlotStatus} (lag, active, wal_status, safe_wal_size) on its own small JDBC
 * connection, at most once per interval: the status read last is returned in between, so every
 * gauge over it shares one query. A read that fails is tried once more on a new connection (one
 * kept across a server restart fails once); a read that fails again is counted, logged at WARN
 * (without stack trace, once until a read succeeds again; the trace at DEBUG), and gives no status
 * (the gauges report NaN) until the next successful one; it never throws. While the source has not
 * started streaming yet, a failed read gives no status but is neither logged nor counted: a slot
 * the source is about to create does not exist yet, and a server the start cannot reach fails the
 * start itself.
 */
final class LagProbe implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LagProbe.class);

  /** Opens a connection; may throw. */
  interface Connector {
    Connection open() throws SQLException;
  }

  private final String slot;
  private final Connector connector;
  private final long intervalNanos;
  private final LongSupplier nanoTime;
  private final BooleanSupplier starting;
  private final AtomicLong errors = new AtomicLong();
  private Connection connection;
  private SlotStatus value;
  private long readAt;
  private boolean read;
  private boolean closed;
  private boolean failing; // the last read failed and was logged

  /**
   * @param starting whether the source has not streamed yet (its start reports failures itself)
   */
  LagProbe(
      String slot,
      Connector connector,
      long intervalNanos,
      LongSupplier nanoTime,
      BooleanSupplier starting) {
    this.slot = slot;
    this.starting = starting;
    this.connector = connector;
    this.intervalNanos = intervalNanos;
    this.nanoTime = nanoTime;
  }

  /**
   * Returns the slot's status, read again if the last read is older than the interval; or null if
   * the last read failed or the probe is closed.
   */
  synchronized SlotStatus status() {
    if (closed) {
      return null;
    }
    long now = nanoTime.getAsLong();
    if (read && now - readAt < intervalNanos) {
      return value;
    }
    read = true;
    readAt = now;
    try {
      value = readOnce();
    } catch (SQLException | RuntimeException first) {
      closeConnection();
      try {
        // a connection kept from before a server restart fails once with "terminating connection
        // due to administrator command": a fresh one is the read that counts
        value = readOnce();
      } catch (SQLException | RuntimeException e) {
        value = null;
        closeConnection();
        if (starting.getAsBoolean()) {
          LOG.debug("slot {}: no status while the source starts: {}", slot, e.toString());
        } else {
          errors.incrementAndGet();
          if (!failing) { // once per streak of failures; the counter counts each
            LOG.warn(
                "slot {}: cannot read the slot's status (lag and slot gauges are NaN until it can"
                    + " be read again): {}",
                slot,
                e.toString());
          }
          LOG.debug("slot {}: cannot read the slot's status", slot, e);
          failing = true;
        }
        return null;
      }
    }
    if (failing) {
      failing = false;
      LOG.info("slot {}: the slot's status can be read again", slot);
    }
    return value;
  }

  private SlotStatus readOnce() throws SQLException {
    if (connection == null) {
      connection = connector.open();
    }
    return SlotStatus.read(connection, slot);
  }

  /** Returns the lag in bytes (see {@link SlotStatus#lagBytes()}), or NaN if unknown. */
  double bytes() {
    SlotStatus s = status();
    return s == null || s.lagBytes() == null ? Double.NaN : s.lagBytes();
  }

  /** Returns 1 if the slot is active, 0 if not, NaN if unknown. */
  double active() {
    SlotStatus s = status();
    return s == null ? Double.NaN : s.active() ? 1 : 0;
  }

  /** Returns 1 if the slot's wal_status is {@code status}, 0 if another, NaN if unknown. */
  double walStatus(SlotStatus.WalStatus status) {
    SlotStatus s = status();
    return s == null || s.walStatus() == null ? Double.NaN : s.walStatus() == status ? 1 : 0;
  }

  /**
   * Returns the standby's replay lag behind its primary in bytes (see {@link
   * SlotStatus#standbyReplayLagBytes()}), or NaN on a primary or when unknown.
   */
  double standbyReplayLag() {
    SlotStatus s = status();
    return s == null || s.standbyReplayLagBytes() == null ? Double.NaN : s.standbyReplayLagBytes();
  }

  /** Returns safe_wal_size in bytes, NaN if unknown or unlimited. */
  double safeWalSize() {
    SlotStatus s = status();
    return s == null || s.safeWalSizeBytes() == null ? Double.NaN : s.safeWalSizeBytes();
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
        LOG.debug("slot {}: closing the status connection: {}", slot, e.toString());
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
