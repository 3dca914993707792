package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Samples the CPU time of the walsender serving the slot, every 100 ms. Public for the Kafka
 * Connect benchmark (cdc-kafka-connect-benchmarks).
 */
public final class WalsenderSampler extends Thread {
  private final EmbeddedPostgresServer pg;
  final String slot;
  final AtomicLong cpuTicks = new AtomicLong();
  volatile boolean running = true;

  /**
   * Creates a sampler of the walsender of a slot; {@link #start()} starts it.
   *
   * @param pg the server
   * @param slot the slot's name
   */
  public WalsenderSampler(EmbeddedPostgresServer pg, String slot) {
    super("walsender-sampler");
    this.pg = pg;
    setDaemon(true);
    this.slot = slot;
  }

  @Override
  public void run() {
    long pid = 0;
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      while (running) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
          if (rs.next() && rs.getLong(1) > 0) {
            pid = rs.getLong(1);
          }
        }
        if (pid > 0) {
          long[] st = RecvLogical.procStat(pid);
          if (st != null) {
            cpuTicks.accumulateAndGet(st[0], Math::max);
          }
        }
        Thread.sleep(100);
      }
    } catch (SQLException | InterruptedException e) {
      EndToEndHarness.log("walsender sampler: " + e);
    }
  }

  /** Stops sampling and waits (up to 5 s) for the thread to end. */
  public void stopAndJoin() throws InterruptedException {
    running = false;
    join(5_000);
  }

  /** Returns the CPU time of the walsender (user and system) at the latest sample, in seconds. */
  public double cpuSeconds() {
    return cpuTicks.get() / (double) RecvLogical.CLK_TCK;
  }
}
