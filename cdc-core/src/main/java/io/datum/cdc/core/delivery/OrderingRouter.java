package io.datum.cdc.core.delivery;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides which handler threads ("lanes") an event passes under a {@link HandlerOrdering}: one lane
 * (the lane of its ordering unit), two (an update that changes the key: the old key's and the new
 * key's), every lane (an event handled alone: a {@code TRUNCATE}, a logical decoding message, a
 * change whose key cannot be told), or any lane ({@link HandlerOrdering#NONE}). A unit always maps
 * to the same lane, so a lane's FIFO order is the unit's stream order.
 *
 * <p>For {@link HandlerOrdering#KEY} the key columns of a table are chosen at the table's first
 * event and kept: the primary key's columns where the event's columns know them ({@link
 * ColumnInfo#primaryKeyPosition()}), else the replica identity's ({@link ColumnInfo#key()}) when
 * they are not all the columns (replica identity {@code FULL} flags every column), else none: the
 * table is one unit. A read row of a snapshot and a change of the stream thereby route alike even
 * where one knows the primary key and the other does not. An event lacking a chosen column (the
 * table's columns changed) is routed to every lane and the columns are chosen again from it, so
 * that the units before and after the change never overlap in time. A key column whose new value is
 * unchanged TOAST is taken from the old key; without one the event goes to every lane.
 *
 * <p>Used by the dispatcher thread only (not thread-safe). Allocation-free per event once a table's
 * columns were seen, but for {@link BigDecimal} key values.
 */
final class OrderingRouter {

  private final HandlerOrdering ordering;
  private final int lanes;
  private final Map<TableId, KeyColumns> keys = new HashMap<>();

  /**
   * @param ordering the ordering, not null
   * @param lanes the number of lanes, at least 1
   */
  OrderingRouter(HandlerOrdering ordering, int lanes) {
    this.ordering = ordering;
    this.lanes = lanes;
  }

  /**
   * Routes an event.
   *
   * @param event the event, not null
   * @param into receives the lanes, distinct; the first is the one that handles the event (under
   *     {@link HandlerOrdering#TRANSACTION} its transaction's), the others ascending; at least
   *     {@code lanes} long
   * @return how many lanes were written to {@code into}: 1 or 2, or {@code lanes} with every lane
   *     (the event is handled alone); 0 for any one lane ({@link HandlerOrdering#NONE})
   */
  int route(ChangeEvent event, int[] into) {
    if (event instanceof TruncateEvent || event instanceof MessageEvent) {
      int n = all(into);
      if (ordering == HandlerOrdering.TRANSACTION) {
        // handled on its transaction's lane: a transaction's events stay on one thread
        int own = mix(unitOf(event.offset()));
        into[own] = 0;
        into[0] = own;
      }
      return n;
    }
    RowChange change = (RowChange) event;
    switch (ordering) {
      case NONE:
        return 0;
      case TRANSACTION:
        return one(into, mix(unitOf(event.offset())));
      case TABLE:
        return one(into, mix(change.table().hashCode()));
      default:
        return byKey(change, into);
    }
  }

  /** The identity of an offset's transaction (or chunk, for a read row), for hashing. */
  static long unitOf(CdcOffset offset) {
    return offset.isSnapshotRead() ? -offset.snapshotChunk() : offset.txEndLsn().asLong();
  }

  private int byKey(RowChange change, int[] into) {
    TableId table = change.table();
    Row after;
    Row before;
    if (change instanceof UpdateEvent u) {
      after = u.after();
      before = u.before();
    } else if (change instanceof DeleteEvent d) {
      after = d.before();
      before = null;
    } else {
      after =
          change instanceof io.datum.cdc.event.InsertEvent i
              ? i.after()
              : ((io.datum.cdc.event.ReadEvent) change).after();
      before = null;
    }
    if (after == null) {
      return all(into);
    }
    KeyColumns columns = keys.get(table);
    if (columns == null) {
      columns = KeyColumns.of(after.columns());
      keys.put(table, columns);
    }
    if (columns.names == null) {
      return one(into, mix(table.hashCode()));
    }
    int[] positions = columns.positionsIn(after.columns());
    if (positions == null || (before != null && columns.positionsIn(before.columns()) == null)) {
      keys.put(table, KeyColumns.of(after.columns())); // the columns changed: choose again
      return all(into);
    }
    int[] beforePositions = before == null ? null : columns.positionsIn(before.columns());
    long newKey = hash(table, after, positions, before, beforePositions);
    if (newKey == UNKNOWN) {
      return all(into);
    }
    int newLane = lane(newKey);
    if (before == null) {
      return one(into, newLane);
    }
    long oldKey = hash(table, before, beforePositions, null, null);
    if (oldKey == UNKNOWN) {
      return all(into);
    }
    int oldLane = lane(oldKey);
    if (oldLane == newLane) {
      return one(into, newLane);
    }
    into[0] = Math.min(oldLane, newLane);
    into[1] = Math.max(oldLane, newLane);
    return 2;
  }

  /** A key hash that cannot be computed (an unchanged TOAST key value without an old key). */
  private static final long UNKNOWN = Long.MIN_VALUE;

  private static long hash(
      TableId table, Row row, int[] positions, Row fallback, int[] fallbackPositions) {
    long h = table.hashCode();
    for (int k = 0; k < positions.length; k++) {
      int i = positions[k];
      Object value;
      if (row.isUnchangedToast(i)) {
        if (fallback == null || fallback.isUnchangedToast(fallbackPositions[k])) {
          return UNKNOWN;
        }
        value = fallback.get(fallbackPositions[k]);
      } else {
        value = row.get(i);
      }
      h = h * 31 + valueHash(value);
    }
    return h == UNKNOWN ? 0 : h;
  }

  /**
   * A hash of a key value that agrees for equal values however they were decoded: arrays by
   * content, numbers by value ({@code 1.0} and {@code 1.00} alike).
   */
  static int valueHash(Object value) {
    if (value == null) {
      return 0;
    }
    if (value instanceof BigDecimal d) {
      return d.signum() == 0 ? 0 : d.stripTrailingZeros().hashCode();
    }
    if (value instanceof byte[] b) {
      return Arrays.hashCode(b);
    }
    if (value instanceof Object[] a) {
      return Arrays.deepHashCode(a);
    }
    return value.hashCode();
  }

  private int lane(long key) {
    return mix(Long.hashCode(key) ^ (int) (key >>> 29));
  }

  private int mix(long h) {
    int x = (int) (h ^ (h >>> 32));
    x *= 0x9E3779B9;
    x ^= x >>> 16;
    return Math.floorMod(x, lanes);
  }

  private static int one(int[] into, int lane) {
    into[0] = lane;
    return 1;
  }

  private int all(int[] into) {
    for (int i = 0; i < lanes; i++) {
      into[i] = i;
    }
    return lanes;
  }

  /** The key columns chosen for a table, and their positions in the last column list seen. */
  static final class KeyColumns {
    /** The key columns' names in key order; null when the table is one unit. */
    final String[] names;

    private List<ColumnInfo> lastColumns;
    private int[] lastPositions;

    private KeyColumns(String[] names) {
      this.names = names;
    }

    /** Chooses the key columns from a row's columns (see the class comment). */
    static KeyColumns of(List<ColumnInfo> columns) {
      List<ColumnInfo> primary = new ArrayList<>();
      List<ColumnInfo> identity = new ArrayList<>();
      for (ColumnInfo c : columns) {
        if (c.primaryKeyPosition() > 0) { // from 1; 0 not in it, -1 unknown
          primary.add(c);
        }
        if (c.key()) {
          identity.add(c);
        }
      }
      if (!primary.isEmpty()) {
        primary.sort((a, b) -> Integer.compare(a.primaryKeyPosition(), b.primaryKeyPosition()));
        return new KeyColumns(primary.stream().map(ColumnInfo::name).toArray(String[]::new));
      }
      if (!identity.isEmpty() && identity.size() < columns.size()) {
        return new KeyColumns(identity.stream().map(ColumnInfo::name).toArray(String[]::new));
      }
      return new KeyColumns(null);
    }

    /** The key columns' positions in {@code columns}, or null if one is missing. */
    int[] positionsIn(List<ColumnInfo> columns) {
      if (columns == lastColumns) {
        return lastPositions;
      }
      int[] positions = new int[names.length];
      for (int k = 0; k < names.length; k++) {
        positions[k] = -1;
        for (int i = 0; i < columns.size(); i++) {
          if (columns.get(i).name().equals(names[k])) {
            positions[k] = i;
            break;
          }
        }
        if (positions[k] < 0) {
          return null;
        }
      }
      lastColumns = columns;
      lastPositions = positions;
      return positions;
    }
  }
}
