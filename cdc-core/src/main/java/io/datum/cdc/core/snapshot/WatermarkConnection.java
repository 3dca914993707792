package io.datum.cdc.core.snapshot;

import io.datum.cdc.PgLsn;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.server.ServerRole;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where an online snapshot writes its watermarks: on a primary, the reading connection itself; on a
 * hot standby, a connection to its primary, opened once and kept, and then the wait until the
 * standby has replayed what was written there ({@link ServerRole}). The role is read again before
 * each write, so that a standby promoted meanwhile is written on itself. Snapshot thread only, but
 * {@link #waiting()}.
 */
final class WatermarkConnection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WatermarkConnection.class);

  private final ServerRole role;
  private final String slot;

  /** The connection to the primary on a standby, or null. */
  private Connection primary;

  /** What the reader waits for on a standby (its replay of a watermark), or null. */
  private volatile String waiting;

  WatermarkConnection(ServerRole role, String slot) {
    this.role = role;
    this.slot = slot;
  }

  /**
   * Returns the connection to write a watermark on, committing as {@code reading} does ({@code
   * synchronous_commit = local}).
   *
   * @param reading the snapshot's reading connection, to the source's server
   * @return {@code reading} on a primary, else the primary's connection
   * @throws SQLException if the role cannot be read, or the primary cannot be reached (the message
   *     names it: the reading connection's failures name the standby)
   */
  Connection on(Connection reading) throws SQLException {
    if (!role.refresh(reading)) {
      close(); // promoted: the former primary is written no more
      return reading;
    }
    if (primary == null || primary.isClosed()) {
      Connection w;
      try {
        w = role.openWritable("datum-cdc snapshot watermarks " + slot);
      } catch (SQLException e) {
        throw new SQLException(
            "cannot connect to the primary "
                + PgErrors.redact(role.primaryUrl())
                + " to write the snapshot's watermarks: "
                + e.getMessage(),
            e.getSQLState(),
            e);
      }
      try (Statement st = w.createStatement()) {
        st.execute("SET synchronous_commit = local");
      } catch (SQLException e) {
        closeQuietly(w);
        throw e;
      }
      primary = w;
    }
    return primary;
  }

  /**
   * On a hot standby, waits until the standby has replayed what {@link #on} last wrote on the
   * primary: the watermark is then in the standby's WAL, and a snapshot taken there sees every
   * transaction the stream delivers before it.
   *
   * @param reading the snapshot's reading connection, to the standby
   * @param closed tells when the source closes
   * @return true once replayed, at once on a primary; false if the source closes first or the
   *     standby was promoted meanwhile (the chunk is then read again)
   * @throws SQLException if a query fails
   */
  boolean replayed(Connection reading, BooleanSupplier closed) throws SQLException {
    if (!role.standby()) {
      return true;
    }
    PgLsn written = ServerRole.flushedPosition(primary);
    return role.awaitReplay(reading, written, closed, w -> waiting = w);
  }

  /** Returns what the reader waits for on a standby, in words, or null. */
  String waiting() {
    return waiting;
  }

  /** Closes the primary's connection, if open; the next {@link #on} opens a new one. */
  @Override
  public void close() {
    closeQuietly(primary);
    primary = null;
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // nothing is lost: the next write opens another connection
        LOG.debug("closing a connection to the primary: {}", e.toString());
      }
    }
  }
}
