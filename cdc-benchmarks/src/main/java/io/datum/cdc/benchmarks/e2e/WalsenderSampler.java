package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

/** Samples the CPU time of the walsender serving the slot, every 100 ms. */
final class WalsenderSampler extends Thread {
  private final EmbeddedPostgresServer pg;
  final String slot;
  final AtomicLong cpuTicks = new AtomicLong();
  volatile boolean running = true;

  WalsenderSampler(EmbeddedPostgresServer pg, String slot) {
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

  void stopAndJoin() throws InterruptedException {
    running = false;
    join(5_000);
  }
}
