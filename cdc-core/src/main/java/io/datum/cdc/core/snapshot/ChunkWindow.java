package io.datum.cdc.core.snapshot;

import io.datum.cdc.TableId;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.UpdateEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the replication thread saw between an online chunk's low and high watermark: the
 * transactions, and for the chunk's table the key of each change (an update's new row when it kept
 * its key), the TRUNCATEs; at the high watermark it says which rows read are superseded by changes
 * the chunk's snapshot does not see ({@link #newerChanges}, {@link #current}). Replication thread
 * only.
 */
final class ChunkWindow {

  /** Changes recorded in one window before the chunk is given up (and read again). */
  static final int MAX_CHANGES = 200_000;

  private final long chunk;
  private final SnapshotTable table;

  /** The transactions the stream delivered in the window, to the end of their commit record. */
  private final Map<Long, Long> seen = new HashMap<>();

  private long[] xids = new long[64];
  private final List<Key> keys = new ArrayList<>();

  /** Per entry: the update that kept its key (its new row may be folded into the row read). */
  private final List<UpdateEvent> updates = new ArrayList<>();

  private final List<Long> truncatedBy = new ArrayList<>(1);
  private boolean keyMissing;
  private boolean overflow;

  /**
   * @param chunk the chunk's serial number
   * @param table the chunk's table
   */
  ChunkWindow(long chunk, SnapshotTable table) {
    this.chunk = chunk;
    this.table = table;
  }

  /** A chunk key's decoded values, compared element by element (arrays by content). */
  record Key(Object[] values) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && Arrays.deepEquals(values, k.values);
    }

    @Override
    public int hashCode() {
      return Arrays.deepHashCode(values);
    }
  }

  /** Returns the serial number of the chunk the window belongs to. */
  long chunk() {
    return chunk;
  }

  /** Returns the chunk's table. */
  TableId table() {
    return table.table();
  }

  /** True if more changes came than a window keeps ({@value #MAX_CHANGES}): read it again. */
  boolean overflow() {
    return overflow;
  }

  /** True if a change of the table came without its key: read the chunk again. */
  boolean keyMissing() {
    return keyMissing;
  }

  /**
   * Records a transaction the stream delivered inside the window.
   *
   * @param xid its xid
   * @param txEnd the end of its commit record, as a long
   */
  void seen(long xid, long txEnd) {
    seen.put(xid, txEnd);
  }

  /** Returns true if the stream delivered the transaction inside the window. */
  boolean hasSeen(long xid) {
    return seen.containsKey(xid);
  }

  /** Returns the end of the commit record of a transaction seen in the window, or -1. */
  long txEnd(long xid) {
    return seen.getOrDefault(xid, -1L);
  }

  /** Returns the transactions that changed or truncated the chunk's table in the window. */
  Set<Long> changedBy() {
    Set<Long> out = new HashSet<>(truncatedBy);
    for (int i = 0; i < keys.size(); i++) {
      out.add(xids[i]);
    }
    return out;
  }

  /** Records a TRUNCATE of the chunk's table by a transaction. */
  void truncatedBy(long xid) {
    truncatedBy.add(xid);
  }

  /** Returns true if a TRUNCATE of the table the snapshot does not see came in the window. */
  boolean truncatedUnseen(Visibility s) {
    boolean all = false;
    for (long t : truncatedBy) {
      all |= !s.sees(t);
    }
    return all;
  }

  /** Records the key (or keys: a key change) a change of the chunk's table touched. */
  void record(long xid, RowChange change) {
    if (overflow) {
      return;
    }
    if (keys.size() >= MAX_CHANGES) {
      overflow = true;
      return;
    }
    List<String> chunkKey = table.chunkKey();
    Row after =
        change instanceof InsertEvent i
            ? i.after()
            : change instanceof UpdateEvent u ? u.after() : null;
    Row before =
        change instanceof UpdateEvent u
            ? u.before()
            : change instanceof DeleteEvent d ? d.before() : null;
    Key newKey = after == null ? null : keyOf(after, chunkKey);
    Key oldKey = before == null ? null : keyOf(before, chunkKey);
    if (change instanceof UpdateEvent u) {
      if (newKey == null) {
        keyMissing = true;
      } else if (oldKey == null || oldKey.equals(newKey)) {
        add(xid, newKey, u); // the old key is sent only when it changed
      } else {
        add(xid, newKey, null);
        add(xid, oldKey, null);
      }
    } else if (change instanceof InsertEvent) {
      if (newKey == null) {
        keyMissing = true;
      } else {
        add(xid, newKey, null);
      }
    } else if (oldKey == null) {
      keyMissing = true; // a delete without the key (REPLICA IDENTITY NOTHING)
    } else {
      add(xid, oldKey, null);
    }
  }

  private void add(long xid, Key key, UpdateEvent sameKeyUpdate) {
    int n = keys.size();
    if (n == xids.length) {
      xids = Arrays.copyOf(xids, n * 2);
    }
    xids[n] = xid;
    keys.add(key);
    updates.add(sameKeyUpdate);
  }

  /**
   * Returns, per key, the changes the chunk's snapshot does not see, in stream order (indexes into
   * this window); empty if none.
   */
  Map<Key, List<Integer>> newerChanges(Visibility s) {
    Map<Key, List<Integer>> newer = new HashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      if (!s.sees(xids[i])) {
        newer.computeIfAbsent(keys.get(i), k -> new ArrayList<>(1)).add(i);
      }
    }
    return newer;
  }

  /**
   * Returns the row to deliver for a row read: itself if no change the snapshot does not see
   * touched its key; else as of the last of those changes if they all are updates that kept its key
   * (the row read with each update's new values applied, an unchanged TOASTed value kept from the
   * row: pgoutput does not send it), which is as new as the stream at the high watermark and gives
   * a consumer the TOASTed values the updates left out; else null (the row is left out: the change
   * delivered already carries it), for an insert, a delete or a key change among them, or columns
   * that differ from the row read.
   *
   * @param read a row the chunk read
   * @param newer what {@link #newerChanges} returned
   */
  Row current(Row read, Map<Key, List<Integer>> newer) {
    List<Integer> changes = newer.isEmpty() ? null : newer.get(keyOf(read, table.chunkKey()));
    if (changes == null) {
      return read;
    }
    if (read.hasUndecoded()) {
      return null;
    }
    Object[] state = new Object[read.size()];
    for (int c = 0; c < state.length; c++) {
      state[c] = read.get(c);
    }
    for (int i : changes) {
      UpdateEvent u = updates.get(i);
      if (u == null || !u.after().columns().equals(read.columns()) || u.after().hasUndecoded()) {
        return null;
      }
      Row after = u.after();
      for (int c = 0; c < state.length; c++) {
        if (!after.isUnchangedToast(c)) {
          state[c] = after.get(c);
        }
      }
    }
    return Row.of(read.columns(), state);
  }

  /** The chunk key's values in a row, or null if the row lacks a key column. */
  static Key keyOf(Row row, List<String> chunkKey) {
    Object[] values = new Object[chunkKey.size()];
    for (int i = 0; i < values.length; i++) {
      int at = row.indexOf(chunkKey.get(i));
      if (at < 0 || row.isUnchangedToast(at)) {
        return null;
      }
      values[i] = row.get(at);
    }
    return new Key(values);
  }
}
