package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.UpdateEvent;
import java.util.Arrays;

/**
 * The benchmark handler that reads every value, as a real consumer touches them: a hash over every
 * column value of every row an event carries (the old and the new row of an update), by each
 * value's own {@code hashCode} ({@link Arrays#hashCode(byte[])} for {@code bytea}; an unchanged
 * TOAST column, whose value was not sent, counts as a constant). The harnesses report it beside the
 * count-only handler; the hash is printed so the work cannot be optimised away, and equal inputs
 * give equal hashes across runs.
 */
public final class ValueReader {
  private ValueReader() {}

  /**
   * Hashes every column value of the rows of one event.
   *
   * @param event a change event; events without rows (TRUNCATE, messages) hash to 0
   * @return the hash of its values
   */
  public static long hash(ChangeEvent event) {
    if (event instanceof InsertEvent e) {
      return hash(e.after());
    } else if (event instanceof UpdateEvent e) {
      return 31 * hash(e.before()) + hash(e.after());
    } else if (event instanceof DeleteEvent e) {
      return hash(e.before());
    } else if (event instanceof ReadEvent e) {
      return hash(e.after());
    }
    return 0;
  }

  /**
   * Hashes every value of one row.
   *
   * @param row a row, or null (hashes to 0)
   * @return the hash of its values
   */
  public static long hash(Row row) {
    if (row == null) {
      return 0;
    }
    long h = 1;
    for (int i = 0, n = row.size(); i < n; i++) {
      if (row.isUnchangedToast(i)) {
        h = 31 * h + 7;
        continue;
      }
      Object v = row.get(i);
      h = 31 * h + (v == null ? 0 : v instanceof byte[] b ? Arrays.hashCode(b) : v.hashCode());
    }
    return h;
  }
}
