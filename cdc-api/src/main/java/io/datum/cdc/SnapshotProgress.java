package io.datum.cdc;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a checkpoint records of a slot's snapshots: whether its initial snapshot completed, the
 * position the slot is held at until it does, and for every table whose snapshot is not finished,
 * the key ranges whose rows were not all acknowledged yet.
 *
 * <p>A restarted source reads only those ranges again, skipping the keys listed as acknowledged in
 * them; the rows of every other key range were acknowledged and are never read again.
 *
 * @param initialCompleted true once every row of the slot's initial snapshot was acknowledged (an
 *     {@code initial} snapshot mode then does not snapshot again)
 * @param holdLsn while the initial snapshot is not complete, the slot's consistent point: the
 *     position confirmed to PostgreSQL stays at or before it until every read row is acknowledged;
 *     null otherwise
 * @param tables the tables with rows still to read or to acknowledge, in the order they are read;
 *     copied, never null; each table at most once
 */
public record SnapshotProgress(
    boolean initialCompleted, PgLsn holdLsn, List<TableSnapshot> tables) {

  /** No snapshot ever ran, none is in progress. */
  public static final SnapshotProgress NONE = new SnapshotProgress(false, null, List.of());

  /**
   * Validates and copies.
   *
   * @throws NullPointerException if {@code tables} or one of them is null
   * @throws IllegalArgumentException if a table is listed twice, or {@code initialCompleted} with a
   *     {@code holdLsn}
   */
  public SnapshotProgress {
    tables = List.copyOf(tables);
    for (int i = 0; i < tables.size(); i++) {
      for (int j = 0; j < i; j++) {
        if (tables.get(i).table().equals(tables.get(j).table())) {
          throw new IllegalArgumentException(
              "table " + tables.get(i).table() + " is listed twice in a snapshot's progress");
        }
      }
    }
    if (initialCompleted && holdLsn != null) {
      throw new IllegalArgumentException(
          "a completed initial snapshot holds no position, but holdLsn is " + holdLsn);
    }
  }

  /** Returns true if no table has rows left to read or acknowledge. */
  public boolean isIdle() {
    return tables.isEmpty();
  }

  /**
   * Returns the entry of a table.
   *
   * @param table the table, not null
   * @return its entry, or null if no snapshot of it is in progress
   */
  public TableSnapshot table(TableId table) {
    for (TableSnapshot t : tables) {
      if (t.table().equals(table)) {
        return t;
      }
    }
    return null;
  }

  /**
   * The snapshot of one table still in progress.
   *
   * @param snapshotId the snapshot it belongs to ({@link io.datum.cdc.event.SnapshotInfo#id()}),
   *     not null, 1 to 255 UTF-8 bytes
   * @param table the table, not null
   * @param remaining the key ranges not all of whose rows were acknowledged, in key order,
   *     disjoint; copied, never null, at least one (a table with none left is not listed)
   */
  public record TableSnapshot(String snapshotId, TableId table, List<KeyRange> remaining) {

    /**
     * @throws NullPointerException if a field is null
     * @throws IllegalArgumentException if {@code remaining} is empty or the id is empty or too long
     */
    public TableSnapshot {
      Objects.requireNonNull(snapshotId, "snapshotId");
      Objects.requireNonNull(table, "table");
      int bytes = snapshotId.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
      if (bytes == 0 || bytes > 255) {
        throw new IllegalArgumentException("snapshot id must take 1 to 255 bytes, took " + bytes);
      }
      remaining = List.copyOf(remaining);
      if (remaining.isEmpty()) {
        throw new IllegalArgumentException(
            "table " + table + " has no key range left: it is not in progress");
      }
    }

    /**
     * A table whose snapshot has not read anything yet: one range over every key.
     *
     * @param snapshotId the snapshot's id
     * @param table the table
     * @return the entry
     */
    public static TableSnapshot whole(String snapshotId, TableId table) {
      return new TableSnapshot(snapshotId, table, List.of(KeyRange.ALL));
    }
  }

  /**
   * A range of a table's chunk key (its primary key, or its replica identity index), as text values
   * in the key's column order, as PostgreSQL prints them (the type's output function with DateStyle
   * ISO, IntervalStyle iso_8601, bytea_output hex and the source's TimeZone).
   *
   * @param after the range's exclusive lower bound; null for the table's first key. Every row at or
   *     before it was acknowledged
   * @param through the range's inclusive upper bound; null for no bound
   * @param acknowledged keys inside the range, after {@code after}, whose rows were acknowledged
   *     out of order (a reader skips them); copied, never null
   */
  public record KeyRange(
      List<String> after, List<String> through, List<List<String>> acknowledged) {

    /** Every key of the table. */
    public static final KeyRange ALL = new KeyRange(null, null, List.of());

    /**
     * Copies the lists.
     *
     * @throws NullPointerException if {@code acknowledged} or a value is null
     * @throws IllegalArgumentException if a bound or key is empty
     */
    public KeyRange {
      after = after == null ? null : copyKey(after);
      through = through == null ? null : copyKey(through);
      List<List<String>> keys = new ArrayList<>(acknowledged.size());
      for (List<String> key : acknowledged) {
        keys.add(copyKey(key));
      }
      acknowledged = List.copyOf(keys);
    }

    private static List<String> copyKey(List<String> key) {
      if (key.isEmpty()) {
        throw new IllegalArgumentException("a key has at least one column value");
      }
      return List.copyOf(key);
    }
  }
}
