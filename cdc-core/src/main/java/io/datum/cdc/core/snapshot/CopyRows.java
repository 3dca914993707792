package io.datum.cdc.core.snapshot;

import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.relation.TextValueDecoding;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.Row;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;

/**
 * Reads the rows of one {@link SnapshotTable} with {@code COPY (SELECT ...) TO STDOUT} in text
 * format and decodes each to the {@link Row} the stream's Insert of the same row would carry: the
 * published columns only, the rows the publication's row filter passes, each text value decoded as
 * the stream decodes a text ({@code 't'}) value of the same relation ({@link TextValueDecoding}),
 * with the same decode-error policy. Optionally a key range of the table's chunk key (lower bound
 * exclusive, upper bound inclusive) and a row limit, ordered by the chunk key, for keyset chunking;
 * each row's chunk key texts are available to resume after it.
 *
 * <p>The reading connection's session must print values as the walsender does: call {@link
 * #prepareSession} once on it. COPY text format: {@link CopyText}; PostgreSQL docs, COPY. One
 * instance reads one query, on the caller's thread; it is not thread-safe.
 *
 * <pre>{@code
 * try (CopyRows rows = CopyRows.open(connection, table, after, null, 10_000, Policy.STOP)) {
 *   while (rows.next()) {
 *     handle(rows.row());
 *     last = rows.chunkKeyTexts();
 *   }
 * }
 * }</pre>
 */
public final class CopyRows implements AutoCloseable {

  private final SnapshotTable table;
  private final RelationInfo relation;
  private final ValueFailure.Policy policy;
  private final CopyOut copy;
  private final List<ColumnInfo> columns;

  /**
   * The number of fields of a row: the published columns and the chunk key columns not among them.
   */
  private final int fieldCount;

  /** For each chunk key column, its field index in a row. */
  private final int[] keyFields;

  /** Raw start and end (exclusive; negated minus one if escaped) of every field of the last row. */
  private final int[] fieldStarts;

  private final int[] fieldEnds;
  private byte[] line;
  private byte[] scratch = new byte[256];
  private Row row;
  private long count;
  private boolean finished;
  private int[] undecoded;
  private int undecodedCount;
  private List<ValueFailure> failures;

  private CopyRows(
      SnapshotTable table, ValueFailure.Policy policy, CopyOut copy, List<String> extraKeys) {
    this.table = table;
    this.relation = table.relation();
    this.policy = policy;
    this.copy = copy;
    this.columns = relation.columns();
    this.fieldCount = columns.size() + extraKeys.size();
    this.fieldStarts = new int[fieldCount];
    this.fieldEnds = new int[fieldCount];
    List<String> key = table.chunkKey();
    this.keyFields = new int[key.size()];
    for (int k = 0; k < keyFields.length; k++) {
      int at = indexOf(columns, key.get(k));
      keyFields[k] = at >= 0 ? at : columns.size() + extraKeys.indexOf(key.get(k));
    }
  }

  /**
   * Sets the session settings under which PostgreSQL prints values as the walsender of a datum-cdc
   * stream does (the settings its replication connection has: {@code ReplicationLoop}'s connection
   * properties and pgjdbc's startup parameters): {@code DateStyle ISO}, {@code IntervalStyle
   * iso_8601}, {@code bytea_output hex}, {@code extra_float_digits 3} (shortest exact float text,
   * PostgreSQL 12+), {@code standard_conforming_strings on} (for the range literals of {@link
   * #copyStatement}) and the stream's {@code TimeZone}. Runs {@code SET} statements only, so it may
   * precede {@code SET TRANSACTION SNAPSHOT} in a transaction, but settings made inside a
   * transaction are undone if it rolls back: best called with autocommit on, before the snapshot
   * transaction begins.
   *
   * @param connection a pgjdbc connection
   * @param timeZone the stream's session {@code TimeZone} as PostgreSQL reports it (the replication
   *     connection's ParameterStatus, e.g. {@code Europe/Amsterdam}), or null to keep this
   *     session's
   * @throws SQLException if a setting is refused (an unknown time zone names it)
   */
  public static void prepareSession(Connection connection, String timeZone) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute("SET DateStyle = ISO");
      s.execute("SET IntervalStyle = iso_8601");
      s.execute("SET bytea_output = hex");
      s.execute("SET extra_float_digits = 3");
      s.execute("SET standard_conforming_strings = on");
      if (timeZone != null) {
        s.execute("SET TimeZone = " + literal(timeZone));
      }
    }
  }

  /**
   * Builds the COPY statement that reads a table's rows: {@code COPY (SELECT <published columns>[,
   * <chunk key columns not published>] FROM [ONLY] <table> [WHERE (<row filter>)] [AND (k1, k2) >
   * (CAST('a' AS t1), CAST('b' AS t2))] [AND (k1, k2) <= (...)] [ORDER BY k1, k2] [LIMIT n]) TO
   * STDOUT}. COPY takes no bind parameters (it is a utility statement), so the bounds are quoted
   * string literals (standard conforming strings, see {@link #prepareSession}) cast to the key
   * columns' types.
   *
   * @param table the table
   * @param after the chunk key texts to read after (exclusive), one per chunk key column, or null
   *     for no lower bound
   * @param upTo the chunk key texts to read up to (inclusive), or null for no upper bound
   * @param limit the most rows to read, or 0 for no limit
   * @return the statement
   * @throws IllegalArgumentException if a bound is given for a table without a chunk key, a bound
   *     has not one text per key column or holds a null, or the limit is negative
   */
  public static String copyStatement(
      SnapshotTable table, List<String> after, List<String> upTo, long limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must be 0 (none) or positive: " + limit);
    }
    List<String> key = table.chunkKey();
    checkBound(table, "lower", after);
    checkBound(table, "upper", upTo);
    StringBuilder sql = new StringBuilder("COPY (SELECT ");
    List<ColumnInfo> columns = table.relation().columns();
    for (int i = 0; i < columns.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append(identifier(columns.get(i).name()));
    }
    for (String k : extraKeys(table)) {
      sql.append(", ").append(identifier(k));
    }
    sql.append(" FROM ")
        .append(table.partitionedRoot() ? "" : "ONLY ")
        .append(identifier(table.table().schema()))
        .append('.')
        .append(identifier(table.table().table()));
    String where = " WHERE ";
    if (table.rowFilter() != null) {
      sql.append(where).append('(').append(table.rowFilter()).append(')');
      where = " AND ";
    }
    if (after != null) {
      sql.append(where);
      rowComparison(sql, table, " > ", after);
      where = " AND ";
    }
    if (upTo != null) {
      sql.append(where);
      rowComparison(sql, table, " <= ", upTo);
    }
    if (!key.isEmpty()) {
      sql.append(" ORDER BY ");
      for (int k = 0; k < key.size(); k++) {
        sql.append(k == 0 ? "" : ", ").append(identifier(key.get(k)));
      }
    }
    if (limit > 0) {
      sql.append(" LIMIT ").append(limit);
    }
    return sql.append(") TO STDOUT").toString();
  }

  /**
   * Starts reading a table's rows (see {@link #copyStatement} for the range and limit).
   *
   * @param connection a pgjdbc connection prepared with {@link #prepareSession}, typically in the
   *     snapshot's REPEATABLE READ transaction; used only by this reader until it is closed
   * @param table the table
   * @param after the chunk key texts to read after (exclusive), or null
   * @param upTo the chunk key texts to read up to (inclusive), or null
   * @param limit the most rows to read, or 0 for no limit
   * @param policy what a value that does not decode does: {@code RAW} keeps its text and marks the
   *     column undecoded in the row (see {@link #takeFailures}); {@code STOP} and {@code SKIP}
   *     throw from {@link #next()}
   * @return the reader, positioned before the first row
   * @throws SQLException if the COPY cannot start (a failing row filter, a cast of a bound that
   *     does not parse as the key type, ...)
   * @throws IllegalArgumentException as {@link #copyStatement}
   */
  public static CopyRows open(
      Connection connection,
      SnapshotTable table,
      List<String> after,
      List<String> upTo,
      long limit,
      ValueFailure.Policy policy)
      throws SQLException {
    String sql = copyStatement(table, after, upTo, limit);
    Objects.requireNonNull(policy, "policy");
    CopyOut copy = connection.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
    return new CopyRows(table, policy, copy, extraKeys(table));
  }

  /**
   * Reads a table's rows from a COPY already started, in text format, with the fields {@link
   * #copyStatement} selects (for the benchmarks, which feed recorded lines; {@link #open} starts
   * the COPY itself).
   *
   * @param copy the COPY, positioned before its first row
   * @param table the table
   * @param policy as for {@link #open}
   * @return the reader
   */
  public static CopyRows over(CopyOut copy, SnapshotTable table, ValueFailure.Policy policy) {
    return new CopyRows(table, Objects.requireNonNull(policy, "policy"), copy, extraKeys(table));
  }

  /**
   * Reads and decodes the next row.
   *
   * @return true if a row was read ({@link #row()}), false at the end of the COPY
   * @throws SQLException if reading fails
   * @throws ValueDecodingException if a value does not decode and the policy is not {@code RAW}
   *     (naming the table, the column, the type and the value)
   * @throws IllegalStateException if a row does not have the expected number of fields
   */
  public boolean next() throws SQLException {
    if (finished) {
      return false;
    }
    byte[] bytes = copy.readFromCopy();
    if (bytes == null) {
      finished = true;
      row = null;
      return false;
    }
    line = bytes;
    count++;
    int end = bytes.length;
    if (end > 0 && bytes[end - 1] == '\n') {
      end--;
    }
    int n = columns.size();
    Object[] values = new Object[n];
    undecodedCount = 0;
    int at = 0;
    for (int f = 0; f < fieldCount; f++) {
      int raw = CopyText.fieldEnd(bytes, at, end);
      int fieldEnd = raw < 0 ? -raw - 1 : raw;
      fieldStarts[f] = at;
      fieldEnds[f] = raw;
      if (f < n) {
        values[f] = value(f, bytes, at, fieldEnd, raw < 0);
      }
      if (f < fieldCount - 1) {
        if (fieldEnd >= end || bytes[fieldEnd] != '\t') {
          throw fieldCount(f + 1);
        }
        at = fieldEnd + 1;
      } else if (fieldEnd < end) {
        throw fieldCount(-1);
      }
    }
    row =
        undecodedCount == 0
            ? Row.of(columns, values)
            : Row.of(columns, values, Arrays.copyOf(undecoded, undecodedCount));
    return true;
  }

  private IllegalStateException fieldCount(int found) {
    return new IllegalStateException(
        "COPY of table "
            + table.table()
            + ": row "
            + count
            + " has "
            + (found < 0 ? "more than " + fieldCount : "only " + found)
            + " fields, expected "
            + fieldCount);
  }

  private Object value(int column, byte[] bytes, int start, int end, boolean escaped) {
    if (escaped) {
      if (CopyText.isNull(bytes, start, end)) {
        return null;
      }
      if (scratch.length < end - start) {
        scratch = new byte[Math.max(end - start, scratch.length * 2)];
      }
      int length = CopyText.unescape(bytes, start, end, scratch);
      return decode(column, scratch, 0, length);
    }
    return decode(column, bytes, start, end - start);
  }

  private Object decode(int column, byte[] bytes, int start, int length) {
    try {
      return TextValueDecoding.decode(relation, column, bytes, start, length);
    } catch (RuntimeException e) {
      String message = TextValueDecoding.describeFailure(relation, column, bytes, start, length, e);
      if (policy == ValueFailure.Policy.RAW) {
        keepRaw(column, message);
        return new String(bytes, start, length, StandardCharsets.UTF_8);
      }
      throw TextValueDecoding.exception(
          "COPY of table " + table.table() + ", row " + count + ": " + message,
          e,
          TextValueDecoding.failure(relation, column, false, message));
    }
  }

  private void keepRaw(int column, String reason) {
    if (undecoded == null) {
      undecoded = new int[4];
    } else if (undecodedCount == undecoded.length) {
      undecoded = Arrays.copyOf(undecoded, undecodedCount * 2);
    }
    undecoded[undecodedCount++] = column;
    if (failures == null) {
      failures = new ArrayList<>(2);
    }
    failures.add(TextValueDecoding.failure(relation, column, false, reason));
  }

  /**
   * Returns the row read last by {@link #next()}.
   *
   * @return the row: the relation's columns, each value decoded (null for SQL NULL)
   * @throws IllegalStateException if {@link #next()} has not returned true
   */
  public Row row() {
    if (row == null) {
      throw new IllegalStateException("no row: call next() first, and only while it returns true");
    }
    return row;
  }

  /**
   * Returns the chunk key texts of the row read last, as COPY printed them (un-escaped), one per
   * chunk key column: the {@code after} bound of a query that resumes after this row.
   *
   * @return a new list, empty for a table without a chunk key
   * @throws IllegalStateException if there is no current row
   */
  public List<String> chunkKeyTexts() {
    row();
    String[] texts = new String[keyFields.length];
    for (int k = 0; k < keyFields.length; k++) {
      int f = keyFields[k];
      int start = fieldStarts[f];
      int raw = fieldEnds[f];
      if (raw >= 0) {
        texts[k] = new String(line, start, raw - start, StandardCharsets.UTF_8);
      } else {
        int end = -raw - 1;
        if (CopyText.isNull(line, start, end)) {
          throw new IllegalStateException(
              "COPY of table "
                  + table.table()
                  + ": chunk key column \""
                  + table.chunkKey().get(k)
                  + "\" is NULL in row "
                  + count);
        }
        byte[] out = new byte[end - start];
        int length = CopyText.unescape(line, start, end, out);
        texts[k] = new String(out, 0, length, StandardCharsets.UTF_8);
      }
    }
    return Arrays.asList(texts);
  }

  /**
   * Returns the values kept raw under the {@code RAW} policy since the last call, or null if none;
   * clears them. The rows hold such values as their text and list the columns in {@link
   * Row#undecodedColumns()}.
   *
   * @return the failures, in the order they happened, or null
   */
  public List<ValueFailure> takeFailures() {
    List<ValueFailure> taken = failures;
    failures = null;
    return taken;
  }

  /** Returns the length in bytes of the COPY line of the row read last (its share of memory). */
  public int lineLength() {
    return line == null ? 0 : line.length;
  }

  /** Returns the number of rows read so far. */
  public long count() {
    return count;
  }

  /**
   * Ends the COPY: reads and discards the rows not read yet (cancelling it instead would fail the
   * query and with it the transaction, and so the snapshot it holds).
   *
   * @throws SQLException if reading the rest fails
   */
  @Override
  public void close() throws SQLException {
    row = null;
    while (!finished) {
      if (copy.readFromCopy() == null) {
        finished = true;
      }
    }
  }

  private static List<String> extraKeys(SnapshotTable table) {
    List<String> extra = new ArrayList<>();
    for (String k : table.chunkKey()) {
      if (indexOf(table.relation().columns(), k) < 0) {
        extra.add(k);
      }
    }
    return extra;
  }

  private static int indexOf(List<ColumnInfo> columns, String name) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  private static void checkBound(SnapshotTable table, String which, List<String> bound) {
    if (bound == null) {
      return;
    }
    if (table.chunkKey().isEmpty()) {
      throw new IllegalArgumentException(
          "table "
              + table.table()
              + " has no chunk key (no primary key or replica identity"
              + " index): it cannot be read in key ranges");
    }
    boolean hasNull = false;
    for (String text : bound) {
      hasNull |= text == null;
    }
    if (bound.size() != table.chunkKey().size() || hasNull) {
      throw new IllegalArgumentException(
          "table "
              + table.table()
              + ": the "
              + which
              + " bound "
              + bound
              + " must hold one text per chunk key column "
              + table.chunkKey()
              + ", none null");
    }
  }

  private static void rowComparison(
      StringBuilder sql, SnapshotTable table, String operator, List<String> bound) {
    List<String> key = table.chunkKey();
    sql.append('(');
    for (int k = 0; k < key.size(); k++) {
      sql.append(k == 0 ? "" : ", ").append(identifier(key.get(k)));
    }
    sql.append(')').append(operator).append('(');
    for (int k = 0; k < key.size(); k++) {
      sql.append(k == 0 ? "" : ", ")
          .append("CAST(")
          .append(literal(bound.get(k)))
          .append(" AS ")
          .append(table.chunkKeyTypes().get(k))
          .append(')');
    }
    sql.append(')');
  }

  /** Quotes an identifier as {@code quote_ident} would, always. */
  static String identifier(String name) {
    return '"' + name.replace("\"", "\"\"") + '"';
  }

  /** Quotes a string literal for standard_conforming_strings on; a NUL cannot be in one. */
  static String literal(String text) {
    if (text.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("a SQL literal cannot hold a NUL character: " + text);
    }
    return '\'' + text.replace("'", "''") + '\'';
  }
}
