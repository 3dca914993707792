package io.datum.cdc.core;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.TableId;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A handler that replays every event into one map per table (key columns to row), as a consumer
 * building a replica would: a read or insert puts the row, an update puts the new row (removing the
 * old key if it changed), a delete removes it, a truncate empties the table. It checks the order
 * the snapshot promises on the way: a read row never comes after a change of the same key in the
 * same run unless it carries that change's values or newer ones (checked at the end against the
 * table). Acknowledges every event it replayed, unless told to stop acknowledging.
 */
final class SnapshotReplica implements CdcHandler {

  final Map<TableId, Map<List<Object>, Map<String, Object>>> tables = new ConcurrentHashMap<>();
  final Map<TableId, List<String>> keyColumns = new ConcurrentHashMap<>();
  final AtomicLong reads = new AtomicLong();
  final AtomicLong changes = new AtomicLong();
  final List<ChangeEvent> readsAfterChanges = new ArrayList<>();
  final Map<TableId, Map<List<Object>, Integer>> readCounts = new ConcurrentHashMap<>();
  final List<ReadEvent> readEvents = new ArrayList<>();
  private volatile boolean sawChange;
  volatile boolean acknowledge = true;

  /** Tables replayed as multisets of rows (tables without a key), by {@link #bag(TableId)}. */
  final Map<TableId, Map<Map<String, Object>, Integer>> bags = new ConcurrentHashMap<>();

  /** The snapshots' resets, in order. */
  final List<TruncateEvent> resets = new ArrayList<>();

  /**
   * Updates and deletes whose old row the replica did not hold after the table's first reset (a
   * multiset table went wrong).
   */
  final List<ChangeEvent> missingBefore = new ArrayList<>();

  /**
   * Replays a table as a multiset of whole rows, as a consumer of a table without a key does: a
   * read or insert adds its row, a delete removes one copy of its old row (REPLICA IDENTITY FULL),
   * an update both, a truncate or a snapshot's reset empties it.
   */
  SnapshotReplica multiset(TableId table) {
    bags.putIfAbsent(table, new ConcurrentHashMap<>());
    return this;
  }

  Map<Map<String, Object>, Integer> bag(TableId table) {
    return bags.computeIfAbsent(table, t -> new ConcurrentHashMap<>());
  }

  /** A table's rows as a multiset (row to copies), read with JDBC. */
  static Map<Map<String, Object>, Integer> multisetContent(Connection c, TableId table)
      throws SQLException {
    Map<Map<String, Object>, Integer> out = new HashMap<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT * FROM " + table.schema() + "." + table.table())) {
      ResultSetMetaData md = rs.getMetaData();
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
          row.put(md.getColumnName(i), rs.getObject(i));
        }
        out.merge(row, 1, Integer::sum);
      }
    }
    return out;
  }

  /** The replica of a multiset table, a copy. */
  synchronized Map<Map<String, Object>, Integer> multisetOf(TableId table) {
    return new HashMap<>(bag(table));
  }

  SnapshotReplica key(TableId table, String... columns) {
    keyColumns.put(table, List.of(columns));
    return this;
  }

  @Override
  public synchronized void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
    apply(event);
    if (acknowledge) {
      checkpoints.acknowledge(event.offset());
    }
  }

  private List<Object> key(TableId table, Row row) {
    List<String> cols = keyColumns.get(table);
    List<Object> key = new ArrayList<>();
    if (cols == null) {
      // no key: the whole row identifies it (a table read only by the initial snapshot)
      key.addAll(row.toMap().values());
      return key;
    }
    for (String c : cols) {
      key.add(row.get(c));
    }
    return key;
  }

  void apply(ChangeEvent event) {
    if (event instanceof ReadEvent r) {
      reads.incrementAndGet();
      readEvents.add(r);
      if (sawChange) {
        readsAfterChanges.add(r);
      }
      List<Object> k = key(r.table(), r.after());
      readCounts.computeIfAbsent(r.table(), t -> new HashMap<>()).merge(k, 1, Integer::sum);
      table(r.table()).put(k, r.after().toMap());
      if (bags.containsKey(r.table())) {
        bag(r.table()).merge(r.after().toMap(), 1, Integer::sum);
      }
      return;
    }
    if (event instanceof InsertEvent i) {
      sawChange = true;
      changes.incrementAndGet();
      table(i.table()).put(key(i.table(), i.after()), i.after().toMap());
    } else if (event instanceof UpdateEvent u) {
      sawChange = true;
      changes.incrementAndGet();
      List<Object> newKey = key(u.table(), u.after());
      if (u.before() != null) {
        List<Object> oldKey = keyColumns.containsKey(u.table()) ? key(u.table(), u.before()) : null;
        if (oldKey != null && !oldKey.equals(newKey) && !oldKey.contains(null)) {
          table(u.table()).remove(oldKey);
        }
      }
      // an unchanged TOASTed value is not sent: keep the one replayed before (if none was, the
      // row lacks it, and the comparison with the table fails)
      Map<String, Object> merged = new LinkedHashMap<>();
      Map<String, Object> previous = table(u.table()).get(newKey);
      if (previous != null) {
        merged.putAll(previous);
      }
      merged.putAll(u.after().toMap());
      table(u.table()).put(newKey, merged);
    } else if (event instanceof DeleteEvent d) {
      sawChange = true;
      changes.incrementAndGet();
      table(d.table()).remove(key(d.table(), d.before()));
    } else if (event instanceof TruncateEvent t) {
      if (t.isSnapshotReset()) {
        resets.add(t); // a snapshot's reset: the table's read rows follow; not a change
      } else {
        sawChange = true;
        changes.incrementAndGet();
      }
      for (TableId id : t.tables()) {
        table(id).clear();
        bag(id).clear();
      }
      return;
    }
    if (event instanceof RowChange change && bags.containsKey(change.table())) {
      Map<Map<String, Object>, Integer> bag = bag(change.table());
      Row oldRow =
          event instanceof UpdateEvent u
              ? u.before()
              : event instanceof DeleteEvent d ? d.before() : null;
      Row newRow =
          event instanceof UpdateEvent u
              ? u.after()
              : event instanceof InsertEvent i ? i.after() : null;
      if (oldRow != null) {
        Map<String, Object> before = oldRow.toMap();
        Integer n = bag.get(before);
        if (n == null) {
          if (resets.stream().anyMatch(r -> r.tables().contains(change.table()))) {
            missingBefore.add(change); // before its first reset the replica lacks older rows
          }
        } else if (n == 1) {
          bag.remove(before);
        } else {
          bag.put(before, n - 1);
        }
      }
      if (newRow != null) {
        Map<String, Object> after = new LinkedHashMap<>();
        if (oldRow != null) {
          after.putAll(oldRow.toMap()); // unchanged TOASTed values: the old row's
        }
        after.putAll(newRow.toMap());
        bag.merge(after, 1, Integer::sum);
      }
    }
  }

  Map<List<Object>, Map<String, Object>> table(TableId id) {
    return tables.computeIfAbsent(id, t -> new ConcurrentHashMap<>());
  }

  /**
   * Reads a table's content with JDBC as key to row maps, for comparing with the replica (JDBC's
   * Integer, Long and String are what the stream decodes int4, int8 and text to).
   */
  static Map<List<Object>, Map<String, Object>> content(
      Connection c, TableId table, List<String> key) throws SQLException {
    Map<List<Object>, Map<String, Object>> out = new TreeMap<>(SnapshotReplica::compare);
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT * FROM " + table.schema() + "." + table.table())) {
      ResultSetMetaData md = rs.getMetaData();
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
          row.put(md.getColumnName(i), rs.getObject(i));
        }
        List<Object> k = new ArrayList<>();
        if (key == null) {
          k.addAll(row.values());
        } else {
          for (String col : key) {
            k.add(row.get(col));
          }
        }
        out.put(k, row);
      }
    }
    return out;
  }

  /** The replica of a table, sorted like {@link #content}. */
  synchronized Map<List<Object>, Map<String, Object>> sorted(TableId table) {
    Map<List<Object>, Map<String, Object>> out = new TreeMap<>(SnapshotReplica::compare);
    out.putAll(table(table));
    return out;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static int compare(List<Object> a, List<Object> b) {
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      Object x = a.get(i);
      Object y = b.get(i);
      if (Objects.equals(x, y)) {
        continue;
      }
      if (x == null) {
        return -1;
      }
      if (y == null) {
        return 1;
      }
      return ((Comparable) x).compareTo(y);
    }
    return Integer.compare(a.size(), b.size());
  }
}
