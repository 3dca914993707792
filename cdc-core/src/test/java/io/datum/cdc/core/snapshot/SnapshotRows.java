package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.Row;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Helpers of the snapshot tests: reading a table with CopyRows, comparing rows, collecting events.
 */
final class SnapshotRows {

  private SnapshotRows() {}

  /** A row as a comparable map: each value with its class, byte arrays as hex; undecoded marked. */
  static Map<String, Object> map(Row row) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < row.size(); i++) {
      Object v = row.get(i);
      m.put(
          row.column(i).name(),
          (row.isUndecoded(i) ? "undecoded:" : "")
              + (v instanceof byte[] b
                  ? "bytes:" + HexFormat.of().formatHex(b)
                  : v == null ? "null" : v.getClass().getSimpleName() + ":" + v));
    }
    return m;
  }

  /** A read row with the chunk key texts after it. */
  record Read(Row row, List<String> key) {}

  /** Reads a table (or a range of it) whole, with the STOP policy. */
  static List<Read> read(
      Connection connection, SnapshotTable table, List<String> after, List<String> upTo, long limit)
      throws SQLException {
    List<Read> rows = new ArrayList<>();
    try (CopyRows copy =
        CopyRows.open(connection, table, after, upTo, limit, ValueFailure.Policy.STOP)) {
      while (copy.next()) {
        rows.add(new Read(copy.row(), copy.chunkKeyTexts()));
      }
    }
    return rows;
  }

  /** Reads a table whole and returns its rows. */
  static List<Row> rows(Connection connection, SnapshotTable table) throws SQLException {
    return read(connection, table, null, null, 0).stream().map(Read::row).toList();
  }

  /** A handler that queues every event and acknowledges it. */
  static final class Collector implements CdcHandler {
    private final LinkedBlockingQueue<ChangeEvent> events = new LinkedBlockingQueue<>();

    @Override
    public void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
      events.add(event);
      checkpoints.acknowledge(event.offset());
    }

    /** Waits for exactly the next {@code n} events, failing after the timeout. */
    List<ChangeEvent> take(int n, Duration timeout) throws InterruptedException {
      List<ChangeEvent> taken = new ArrayList<>(n);
      long deadline = System.nanoTime() + timeout.toNanos();
      while (taken.size() < n) {
        ChangeEvent e = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (e == null) {
          throw new AssertionError("got " + taken.size() + " of " + n + " events: " + taken);
        }
        taken.add(e);
      }
      return taken;
    }
  }
}
