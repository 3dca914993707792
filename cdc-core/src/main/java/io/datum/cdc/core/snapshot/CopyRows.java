package io.datum.cdc.core.snapshot;

import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.relation.TextValueDecoding;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.types.PgBinaryCodec;
import io.datum.cdc.core.types.PgBinaryValues;
import io.datum.cdc.core.types.PgBuiltinType;
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
 * Reads the rows of one {@link SnapshotTable} with {@code COPY (SELECT ...) TO STDOUT} and decodes
 * each to the {@link Row} the stream's Insert of the same row would carry: the published columns
 * only, the rows the publication's row filter passes, each value decoded as the stream decodes a
 * value of the same relation, with the same decode-error policy. Optionally a key range of the
 * table's chunk key (lower bound exclusive, upper bound inclusive) and a row limit, ordered by the
 * chunk key, for keyset chunking; each row's chunk key texts are available to resume after it.
 *
 * <p><b>Format.</b> A table whose published columns are all of builtin types that decode to typed
 * Java values ({@link #binaryReadable}: {@code bool}, the integers, {@code oid}, the floats, {@code
 * numeric}, the text types, {@code "char"}, {@code name}, {@code bytea}, the date and time types,
 * {@code interval}, {@code uuid}, {@code json}, {@code jsonb}, and arrays of these) is read in
 * binary format ({@code FORMAT binary}): each value in its type's send format, decoded by {@link
 * PgBinaryValues} to the value {@link TextValueDecoding} gives for its text (the equivalence the
 * stream's {@code binary} option relies on), and cheaper for the server too (no {@code float8out},
 * {@code timestamptz_out} or {@code numeric_out} per value). Under the {@code RAW} policy a value
 * that does not decode is then kept as its send-format bytes ({@code byte[]}), as the stream keeps
 * a binary value. Any other table (a column of a user-defined type, a range, or a type whose values
 * are its text, such as {@code inet} or {@code money}) is read in text format ({@link CopyText}),
 * each text value decoded as the stream decodes a text ({@code 't'}) value. The chunk key texts are
 * COPY's text either way: in binary format an integer, text or {@code uuid} key's text is its Java
 * value's (exactly what its output function prints), and any other key column is selected a second
 * time as {@code concat(column)}, which PostgreSQL renders with the type's output function
 * (PostgreSQL docs, String Functions: {@code concat}). PostgreSQL docs, COPY, "Binary Format".
 *
 * <p>The reading connection's session must print values as the walsender does: call {@link
 * #prepareSession} once on it. One instance reads one query, on the caller's thread; it is not
 * thread-safe.
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

  /** True if the COPY is in binary format. */
  private final boolean binary;

  /** Decodes the values of a binary read, one after another. */
  private final PgBinaryValues.Decoder binaryDecoder = new PgBinaryValues.Decoder();

  /**
   * The number of fields of a row: the published columns and the extra key fields ({@link
   * #extraKeyFields}).
   */
  private final int fieldCount;

  /**
   * For each chunk key column, its field index in a row; in binary format, negative (minus the
   * column index, minus one) where the key's text is its decoded value's ({@link #renderedKey}).
   */
  private final int[] keyFields;

  /** Binary format: the values of the row read last (key texts rendered from them). */
  private Object[] binaryValues;

  /** Binary format: true once the file header (signature, flags, extension) was read. */
  private boolean headerRead;

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

  private CopyRows(SnapshotTable table, ValueFailure.Policy policy, CopyOut copy, boolean binary) {
    this.table = table;
    this.relation = table.relation();
    this.policy = policy;
    this.copy = copy;
    this.binary = binary;
    this.columns = relation.columns();
    List<String> extraKeys = extraKeyFields(table, binary);
    this.fieldCount = columns.size() + extraKeys.size();
    this.fieldStarts = new int[fieldCount];
    this.fieldEnds = new int[fieldCount];
    List<String> key = table.chunkKey();
    this.keyFields = new int[key.size()];
    for (int k = 0; k < keyFields.length; k++) {
      int at = indexOf(columns, key.get(k));
      int extra = extraKeys.indexOf(key.get(k));
      keyFields[k] = extra >= 0 ? columns.size() + extra : binary ? -at - 1 : at;
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
    return copyStatement(table, after, upTo, limit, false);
  }

  /**
   * Builds the COPY statement that reads a table's rows, in text or binary format: as {@link
   * #copyStatement(SnapshotTable, List, List, long)}, and in binary format {@code ... TO STDOUT
   * (FORMAT binary)} with, after the published columns, {@code concat(k)} for each chunk key column
   * whose text is not rendered from its decoded value (see the class comment).
   *
   * @param table the table
   * @param after the chunk key texts to read after (exclusive), or null
   * @param upTo the chunk key texts to read up to (inclusive), or null
   * @param limit the most rows to read, or 0 for no limit
   * @param binary true for binary format; only meaningful for a table {@link #binaryReadable}
   * @return the statement
   * @throws IllegalArgumentException as {@link #copyStatement(SnapshotTable, List, List, long)}
   */
  public static String copyStatement(
      SnapshotTable table, List<String> after, List<String> upTo, long limit, boolean binary) {
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
    for (String k : extraKeyFields(table, binary)) {
      sql.append(", ")
          .append(binary ? "concat(" : "")
          .append(identifier(k))
          .append(binary ? ")" : "");
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
    return sql.append(binary ? ") TO STDOUT (FORMAT binary)" : ") TO STDOUT").toString();
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
    boolean binary = binaryReadable(table);
    String sql = copyStatement(table, after, upTo, limit, binary);
    Objects.requireNonNull(policy, "policy");
    CopyOut copy = connection.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
    return new CopyRows(table, policy, copy, binary);
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
    return over(copy, table, policy, false);
  }

  /**
   * Reads a table's rows from a COPY already started, in the format given, with the fields {@link
   * #copyStatement(SnapshotTable, List, List, long, boolean)} selects in that format (for the
   * benchmarks).
   *
   * @param copy the COPY, positioned before its first row (in binary format: before the header)
   * @param table the table
   * @param policy as for {@link #open}
   * @param binary true if the COPY is in binary format
   * @return the reader
   */
  public static CopyRows over(
      CopyOut copy, SnapshotTable table, ValueFailure.Policy policy, boolean binary) {
    return new CopyRows(table, Objects.requireNonNull(policy, "policy"), copy, binary);
  }

  /**
   * Returns whether {@link #open} reads a table in binary format: every published column's value
   * type (a domain's base type) is a builtin type that decodes to a typed Java value, or an array
   * of one (see the class comment), and none needs a catalog codec.
   *
   * @param table the table
   * @return true for binary format, false for text
   */
  public static boolean binaryReadable(SnapshotTable table) {
    RelationInfo relation = table.relation();
    PgBinaryCodec[] codecs = relation.binaryCodecs();
    int[] oids = relation.valueTypeOids();
    for (int i = 0; i < oids.length; i++) {
      if (codecs != null && codecs[i] != null) {
        return false;
      }
      PgBuiltinType type = PgBuiltinType.of(oids[i]);
      if (type == null) {
        type = PgBuiltinType.elementOf(oids[i]);
      }
      if (type == null || !type.typed()) {
        return false;
      }
    }
    return true;
  }

  /** Returns true if this reader's COPY is in binary format. */
  public boolean binary() {
    return binary;
  }

  /**
   * Reads and decodes the next row.
   *
   * @return true if a row was read ({@link #row()}), false at the end of the COPY
   * @throws SQLException if reading fails
   * @throws ValueDecodingException if a value does not decode and the policy is not {@code RAW}
   *     (naming the table, the column, the type and the value)
   * @throws IllegalStateException if a row does not have the expected number of fields, or a binary
   *     COPY is malformed (no signature, a length past the message's end), naming the table
   */
  public boolean next() throws SQLException {
    if (finished) {
      return false;
    }
    if (binary) {
      return nextBinary();
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

  /** The signature of a binary COPY file: {@code PGCOPY\n\377\r\n\0} (PostgreSQL docs, COPY). */
  private static final byte[] SIGNATURE = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', -1, '\r', '\n', 0};

  private boolean nextBinary() throws SQLException {
    byte[] bytes = copy.readFromCopy();
    int at = 0;
    if (!headerRead && bytes != null) {
      // the header goes out in front of the first tuple's message (copyto.c)
      at = header(bytes);
      headerRead = true;
    }
    if (bytes == null) {
      // the server always ends a binary COPY with a trailer, read below
      throw malformed("the COPY ended without its trailer", 0);
    }
    int end = bytes.length;
    if (end - at < 2) {
      throw malformed("a tuple is shorter than its field count", at);
    }
    int fields = (short) ((bytes[at] & 0xff) << 8 | bytes[at + 1] & 0xff);
    at += 2;
    if (fields == -1) {
      if (at != end || copy.readFromCopy() != null) {
        throw malformed("data follows the trailer", at);
      }
      finished = true;
      row = null;
      return false;
    }
    if (fields != fieldCount) {
      throw fieldCount(fields < fieldCount ? fields : -1);
    }
    line = bytes;
    count++;
    int n = columns.size();
    Object[] decoded = new Object[n];
    undecodedCount = 0;
    for (int f = 0; f < fieldCount; f++) {
      if (end - at < 4) {
        throw malformed("field " + (f + 1) + " has no length", at);
      }
      int length = int32(bytes, at);
      at += 4;
      if (length == -1) {
        fieldStarts[f] = at;
        fieldEnds[f] = -1;
        continue;
      }
      if (length < 0 || length > end - at) {
        throw malformed("field " + (f + 1) + " claims " + length + " bytes", at - 4);
      }
      fieldStarts[f] = at;
      fieldEnds[f] = at + length;
      if (f < n) {
        decoded[f] = decodeBinary(f, bytes, at, length);
      }
      at += length;
    }
    if (at != end) {
      throw malformed("the tuple has " + (end - at) + " bytes after its last field", at);
    }
    binaryValues = decoded;
    row =
        undecodedCount == 0
            ? Row.of(columns, decoded)
            : Row.of(columns, decoded, Arrays.copyOf(undecoded, undecodedCount));
    return true;
  }

  /** Checks the binary file header; returns the index after it. */
  private int header(byte[] bytes) {
    int at = SIGNATURE.length + 8;
    if (bytes.length < at || !Arrays.equals(bytes, 0, SIGNATURE.length, SIGNATURE, 0, at - 8)) {
      throw malformed("no binary COPY signature", 0);
    }
    int flags = int32(bytes, SIGNATURE.length);
    if ((flags & (1 << 16)) != 0) {
      throw malformed("the rows carry OIDs", SIGNATURE.length);
    }
    int extension = int32(bytes, SIGNATURE.length + 4);
    if (extension < 0 || extension > bytes.length - at) {
      throw malformed("the header extension claims " + extension + " bytes", at - 4);
    }
    return at + extension;
  }

  private static int int32(byte[] b, int at) {
    return (b[at] & 0xff) << 24
        | (b[at + 1] & 0xff) << 16
        | (b[at + 2] & 0xff) << 8
        | b[at + 3] & 0xff;
  }

  private IllegalStateException malformed(String what, int at) {
    return new IllegalStateException(
        "binary COPY of table "
            + table.table()
            + ", after row "
            + count
            + ": "
            + what
            + " (byte "
            + at
            + " of the message)");
  }

  private Object decodeBinary(int column, byte[] bytes, int start, int length) {
    int oid = relation.valueTypeOids()[column];
    try {
      return binaryDecoder.decode(oid, bytes, start, length);
    } catch (RuntimeException e) {
      ColumnInfo info = columns.get(column);
      String message =
          PgBinaryValues.describeFailure(
              info.name(), relation.describe(), info.typeOid(), oid, bytes, start, length, e);
      if (policy == ValueFailure.Policy.RAW) {
        keepRaw(column, message, true);
        return Arrays.copyOfRange(bytes, start, start + length);
      }
      throw TextValueDecoding.exception(
          "COPY of table " + table.table() + ", row " + count + ": " + message,
          e,
          TextValueDecoding.failure(relation, column, true, message));
    }
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
        keepRaw(column, message, false);
        return new String(bytes, start, length, StandardCharsets.UTF_8);
      }
      throw TextValueDecoding.exception(
          "COPY of table " + table.table() + ", row " + count + ": " + message,
          e,
          TextValueDecoding.failure(relation, column, false, message));
    }
  }

  private void keepRaw(int column, String reason, boolean binaryValue) {
    if (undecoded == null) {
      undecoded = new int[4];
    } else if (undecodedCount == undecoded.length) {
      undecoded = Arrays.copyOf(undecoded, undecodedCount * 2);
    }
    undecoded[undecodedCount++] = column;
    if (failures == null) {
      failures = new ArrayList<>(2);
    }
    failures.add(TextValueDecoding.failure(relation, column, binaryValue, reason));
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
      if (f < 0) {
        Object value = binaryValues[-f - 1];
        if (value == null) {
          throw nullKey(k);
        }
        texts[k] = value.toString(); // an integer, text or uuid: see renderedKey
        continue;
      }
      int start = fieldStarts[f];
      int raw = fieldEnds[f];
      if (binary) {
        if (raw < 0) {
          throw nullKey(k);
        }
        texts[k] = new String(line, start, raw - start, StandardCharsets.UTF_8);
      } else if (raw >= 0) {
        texts[k] = new String(line, start, raw - start, StandardCharsets.UTF_8);
      } else {
        int end = -raw - 1;
        if (CopyText.isNull(line, start, end)) {
          throw nullKey(k);
        }
        byte[] out = new byte[end - start];
        int length = CopyText.unescape(line, start, end, out);
        texts[k] = new String(out, 0, length, StandardCharsets.UTF_8);
      }
    }
    return Arrays.asList(texts);
  }

  private IllegalStateException nullKey(int k) {
    return new IllegalStateException(
        "COPY of table "
            + table.table()
            + ": chunk key column \""
            + table.chunkKey().get(k)
            + "\" is NULL in row "
            + count);
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

  /**
   * The chunk key columns selected after the published columns: in text format those not published;
   * in binary format those whose text is not rendered from their decoded value ({@link
   * #renderedKey}), selected as {@code concat(k)}.
   */
  private static List<String> extraKeyFields(SnapshotTable table, boolean binary) {
    List<String> extra = new ArrayList<>();
    List<ColumnInfo> columns = table.relation().columns();
    for (String k : table.chunkKey()) {
      int at = indexOf(columns, k);
      if (at < 0 || (binary && !renderedKey(table.relation().valueTypeOids()[at]))) {
        extra.add(k);
      }
    }
    return extra;
  }

  /**
   * Whether a key column's text is its binary-decoded value's {@code toString}: the integers and
   * {@code oid} (decimal, as {@code int2out}/{@code int4out}/{@code int8out}/{@code oidout}), the
   * text types but {@code bpchar} (their text as is) and {@code uuid} (lower-case 8-4-4-4-12, as
   * {@code uuid_out} and {@link java.util.UUID#toString}).
   */
  private static boolean renderedKey(int valueTypeOid) {
    PgBuiltinType type = PgBuiltinType.of(valueTypeOid);
    return type == PgBuiltinType.INT2
        || type == PgBuiltinType.INT4
        || type == PgBuiltinType.INT8
        || type == PgBuiltinType.OID
        || type == PgBuiltinType.TEXT
        || type == PgBuiltinType.VARCHAR
        || type == PgBuiltinType.NAME
        || type == PgBuiltinType.UUID;
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
