package io.datum.cdc.event;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

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
 * MAX/MIN), {@code interval} {@link PgInterval}, every other type its PostgreSQL text output as a
 * String.
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

  private Row(List<ColumnInfo> columns, Object[] values) {
    this.columns = columns;
    this.values = values;
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
    return new Row(columns, values);
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
    for (int i = 0, k = 0; i < columns.size(); i++) {
      if (columns.get(i).key()) {
        keyColumns.add(columns.get(i));
        keyValues[k++] = values[i];
      }
    }
    return new Row(Collections.unmodifiableList(keyColumns), keyValues);
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
      sb.append(v instanceof byte[] ? ((byte[]) v).length + " bytes" : String.valueOf(v));
    }
    return sb.append('}').toString();
  }
}
