package io.datum.cdc.event;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * The columns PostgreSQL sent for one row, in the relation's column order, each either a value, SQL
 * NULL, or "unchanged TOAST" (a large value the update did not change, which pgoutput does not
 * send; PostgreSQL docs, 55.9 Logical Replication Message Formats, "TupleData", kind {@code u}).
 * These three states stay distinct: {@link #get} returns null only for SQL NULL.
 *
 * <p>Java types of values (docs/pgoutput.md, "Types"): {@code smallint} Short, {@code integer}
 * Integer, {@code bigint} Long, {@code oid} Long, {@code real} Float, {@code double precision}
 * Double, {@code numeric} {@link java.math.BigDecimal} (or Double NaN / ±Infinity for PostgreSQL's
 * special values), {@code boolean} Boolean, text types String, {@code bytea} byte[], {@code uuid}
 * UUID, {@code json}/{@code jsonb} {@link PgJson}, {@code date} LocalDate, {@code time} LocalTime,
 * {@code timetz} OffsetTime (PostgreSQL's {@code 24:00:00} as {@link java.time.LocalTime#MAX},
 * which no PostgreSQL time can otherwise be, since it has microseconds only), {@code timestamp}
 * LocalDateTime, {@code timestamptz} Instant ({@code infinity}/{@code -infinity} as the type's
 * MAX/MIN), {@code interval} {@link PgInterval}, enums their label, domains as their base type,
 * arrays an unmodifiable {@link java.util.List} of their element values (nested per dimension, NULL
 * elements as null; also arrays of enums, domains, composites and ranges), every other type its
 * PostgreSQL text output as a String (composites, ranges, geometric types, ...). Text and binary
 * format give the same values.
 *
 * <p>A fourth state exists only when the source runs with the decode-error policy {@code RAW}
 * ({@code PgCdcSource.Builder.onDecodeError}): a column whose value the source could not decode to
 * its Java type (a type dropped from the catalog before the change was read, a malformed value)
 * holds the value as PostgreSQL sent it instead: its text, a String, for a text-format value, or
 * its bytes, a {@code byte[]} in the type's binary send format, for a binary-format one. Such
 * columns are listed by {@link #undecodedColumns()} and tested by {@link #isUndecoded(int)}; every
 * other column holds its decoded value as usual. A handler that must not mistake raw text for a
 * decoded String checks {@link #hasUndecoded()} first.
 *
 * <p>Rows are immutable once built and safe to share.
 */
public final class Row {

  /**
   * The marker to put in {@link #of}'s value array for a column whose unchanged TOASTed value was
   * not sent. Never returned by {@link #get}.
   */
  public static final Object UNCHANGED_TOAST =
      new Object() {
        @Override
        public String toString() {
          return "UNCHANGED_TOAST";
        }
      };

  private final List<ColumnInfo> columns;
  private final Object[] values;

  /** Positions of the undecoded columns, ascending; null if none (the usual case). */
  private final int[] undecoded;

  private Row(List<ColumnInfo> columns, Object[] values, int[] undecoded) {
    this.columns = columns;
    this.values = values;
    this.undecoded = undecoded;
  }

  /**
   * Builds a row. The array is owned by the row afterwards: the caller must not modify it.
   *
   * @param columns the columns, in order; an unmodifiable list (shared between rows of one
   *     relation)
   * @param values one entry per column: the value, null for SQL NULL, or {@link #UNCHANGED_TOAST}
   * @return the row
   * @throws IllegalArgumentException if the sizes differ
   */
  public static Row of(List<ColumnInfo> columns, Object[] values) {
    if (columns.size() != values.length) {
      throw new IllegalArgumentException(
          "row has " + columns.size() + " columns but " + values.length + " values");
    }
    return new Row(columns, values, null);
  }

  /**
   * Builds a row some of whose columns hold undecoded values (see the class description). The
   * arrays are owned by the row afterwards: the caller must not modify them.
   *
   * @param columns the columns, in order; an unmodifiable list
   * @param values one entry per column, as for {@link #of(List, Object[])}; an undecoded column's
   *     entry is its raw value, a String or a {@code byte[]}
   * @param undecoded the positions of the undecoded columns, strictly ascending, or null (or empty)
   *     if there are none
   * @return the row
   * @throws IllegalArgumentException if the sizes differ, or a position is out of range, not
   *     ascending, or holds neither a String nor a byte[]
   */
  public static Row of(List<ColumnInfo> columns, Object[] values, int[] undecoded) {
    if (undecoded == null || undecoded.length == 0) {
      return of(columns, values);
    }
    if (columns.size() != values.length) {
      throw new IllegalArgumentException(
          "row has " + columns.size() + " columns but " + values.length + " values");
    }
    for (int k = 0; k < undecoded.length; k++) {
      int i = undecoded[k];
      if (i < 0 || i >= values.length || (k > 0 && i <= undecoded[k - 1])) {
        throw new IllegalArgumentException(
            "undecoded column positions must be ascending and in [0, "
                + values.length
                + "): "
                + Arrays.toString(undecoded));
      }
      if (!(values[i] instanceof String) && !(values[i] instanceof byte[])) {
        throw new IllegalArgumentException(
            "undecoded column \""
                + columns.get(i).name()
                + "\" must hold a String or a byte[], not "
                + (values[i] == null ? "null" : values[i].getClass().getName()));
      }
    }
    return new Row(columns, values, undecoded);
  }

  /** Returns the number of columns. */
  public int size() {
    return values.length;
  }

  /** Returns the columns, in order; unmodifiable. */
  public List<ColumnInfo> columns() {
    return columns;
  }

  /**
   * Returns the column at a position.
   *
   * @param index in {@code [0, size())}
   * @return the column, not null
   * @throws IndexOutOfBoundsException if out of range
   */
  public ColumnInfo column(int index) {
    return columns.get(index);
  }

  /**
   * Returns the value at a position.
   *
   * @param index in {@code [0, size())}
   * @return the value, or null for SQL NULL
   * @throws IndexOutOfBoundsException if out of range
   * @throws IllegalStateException if the column is unchanged TOAST (its value was not sent)
   */
  public Object get(int index) {
    Object value = values[index];
    if (value == UNCHANGED_TOAST) {
      throw new IllegalStateException(
          "column \""
              + columns.get(index).name()
              + "\" is unchanged TOAST: its value was not sent");
    }
    return value;
  }

  /**
   * Returns the value of a named column.
   *
   * @param column the column name
   * @return the value, or null for SQL NULL
   * @throws NoSuchElementException if the row has no such column
   * @throws IllegalStateException if the column is unchanged TOAST
   */
  public Object get(String column) {
    return get(requireIndex(column));
  }

  /**
   * Returns the position of a named column, or -1.
   *
   * @param column the column name
   * @return the index, or -1 if absent
   */
  public int indexOf(String column) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(column)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Returns whether the row has a column of this name.
   *
   * @param column the column name
   * @return true if present (whatever its state)
   */
  public boolean has(String column) {
    return indexOf(column) >= 0;
  }

  /**
   * Returns whether the column at a position is SQL NULL.
   *
   * @param index in {@code [0, size())}
   * @return true for SQL NULL (false for unchanged TOAST)
   */
  public boolean isNull(int index) {
    return values[index] == null;
  }

  /**
   * Returns whether the column at a position is unchanged TOAST (value not sent).
   *
   * @param index in {@code [0, size())}
   * @return true if the value was not sent
   */
  public boolean isUnchangedToast(int index) {
    return values[index] == UNCHANGED_TOAST;
  }

  /** Returns the names of the unchanged-TOAST columns, in column order; possibly empty. */
  public List<String> unchangedToastColumns() {
    List<String> names = null;
    for (int i = 0; i < values.length; i++) {
      if (values[i] == UNCHANGED_TOAST) {
        if (names == null) {
          names = new ArrayList<>(2);
        }
        names.add(columns.get(i).name());
      }
    }
    return names == null ? List.of() : Collections.unmodifiableList(names);
  }

  /**
   * Returns whether any column holds an undecoded value (only with the decode-error policy {@code
   * RAW}; see the class description).
   *
   * @return true if {@link #undecodedColumns()} is not empty
   */
  public boolean hasUndecoded() {
    return undecoded != null;
  }

  /**
   * Returns whether the column at a position holds its raw value, undecoded: its text (a String) or
   * its binary send format (a {@code byte[]}), as PostgreSQL sent it.
   *
   * @param index in {@code [0, size())}
   * @return true if the value could not be decoded and is given raw
   * @throws IndexOutOfBoundsException if out of range
   */
  public boolean isUndecoded(int index) {
    Objects.checkIndex(index, values.length);
    if (undecoded != null) {
      for (int i : undecoded) {
        if (i == index) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Returns the names of the columns that hold undecoded values, in column order; empty unless the
   * source runs with the decode-error policy {@code RAW} and a value could not be decoded.
   *
   * @return an unmodifiable list, possibly empty
   */
  public List<String> undecodedColumns() {
    if (undecoded == null) {
      return List.of();
    }
    List<String> names = new ArrayList<>(undecoded.length);
    for (int i : undecoded) {
      names.add(columns.get(i).name());
    }
    return Collections.unmodifiableList(names);
  }

  /**
   * Returns the replica-identity columns of this row, or null if it has none.
   *
   * @return a row of the key columns only (this row if all its columns are key columns), or null
   */
  public Row keyColumns() {
    int keys = 0;
    for (ColumnInfo c : columns) {
      if (c.key()) {
        keys++;
      }
    }
    if (keys == 0) {
      return null;
    }
    if (keys == columns.size()) {
      return this;
    }
    List<ColumnInfo> keyColumns = new ArrayList<>(keys);
    Object[] keyValues = new Object[keys];
    int[] keyUndecoded = null;
    int u = 0;
    for (int i = 0, k = 0; i < columns.size(); i++) {
      if (columns.get(i).key()) {
        if (undecoded != null && isUndecoded(i)) {
          keyUndecoded = keyUndecoded == null ? new int[undecoded.length] : keyUndecoded;
          keyUndecoded[u++] = k;
        }
        keyColumns.add(columns.get(i));
        keyValues[k++] = values[i];
      }
    }
    return new Row(
        Collections.unmodifiableList(keyColumns),
        keyValues,
        keyUndecoded == null ? null : Arrays.copyOf(keyUndecoded, u));
  }

  /**
   * Returns the sent columns as a map from name to value, in column order, leaving out unchanged
   * TOAST columns; SQL NULL maps to null.
   *
   * @return a new mutable map
   */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < values.length; i++) {
      if (values[i] != UNCHANGED_TOAST) {
        map.put(columns.get(i).name(), values[i]);
      }
    }
    return map;
  }

  private int requireIndex(String column) {
    int index = indexOf(column);
    if (index < 0) {
      throw new NoSuchElementException("row has no column \"" + column + '"');
    }
    return index;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      Object v = values[i];
      sb.append(columns.get(i).name()).append('=');
      if (undecoded != null && isUndecoded(i)) {
        sb.append("undecoded:");
      }
      sb.append(v instanceof byte[] ? ((byte[]) v).length + " bytes" : String.valueOf(v));
    }
    return sb.append('}').toString();
  }
}
