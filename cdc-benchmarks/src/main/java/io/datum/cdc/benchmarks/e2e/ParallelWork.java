package io.datum.cdc.benchmarks.e2e;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.locks.LockSupport;

/**
 * The per-event work of {@link ParallelHandlerHarness}'s handlers, the same for datum-cdc and
 * Debezium Engine: {@code wait} parks the thread for 1 ms (simulated I/O); {@code insert} inserts
 * the row's key and value into table {@code sink} of a second database, each insert its own
 * transaction (autocommit, synchronous_commit on), on a connection per handler thread; {@code none}
 * does nothing (the rate the consumer reaches without work: the slot's own rate, for the aims).
 */
final class ParallelWork {

  private final String kind;
  private final String sinkUrl;
  private final ThreadLocal<PreparedStatement> insert;

  /**
   * @param kind {@code wait} or {@code insert}
   * @param sinkUrl the JDBC URL of the second database (for {@code insert})
   */
  ParallelWork(String kind, String sinkUrl) {
    if (!kind.equals("wait") && !kind.equals("insert") && !kind.equals("none")) {
      throw new IllegalArgumentException("handler must be wait, insert or none, was " + kind);
    }
    this.kind = kind;
    this.sinkUrl = sinkUrl;
    this.insert =
        ThreadLocal.withInitial(
            () -> {
              try {
                Connection c = DriverManager.getConnection(this.sinkUrl);
                return c.prepareStatement("INSERT INTO sink (id, v) VALUES (?, ?)");
              } catch (SQLException e) {
                throw new IllegalStateException("cannot connect to " + this.sinkUrl + ": " + e, e);
              }
            });
  }

  /** Does one event's work. */
  void apply(int id, int v) throws SQLException {
    if (kind.equals("none")) {
      return;
    }
    if (kind.equals("wait")) {
      LockSupport.parkNanos(1_000_000);
      return;
    }
    PreparedStatement ps = insert.get();
    ps.setInt(1, id);
    ps.setInt(2, v);
    ps.executeUpdate();
  }
}
