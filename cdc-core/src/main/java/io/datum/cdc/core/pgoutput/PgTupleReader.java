package io.datum.cdc.core.pgoutput;

import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.relation.TextValueDecoding;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.types.PgBinaryCodec;
import io.datum.cdc.core.types.PgBinaryValues;
import io.datum.cdc.core.types.PgTextValues;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.Row;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * Reads the TupleData of Insert, Update and Delete messages for {@link PgOutputDecoder}, decoding
 * each column: {@code 'n'} NULL, {@code 'u'} unchanged TOAST, {@code 't'} text ({@link
 * PgTextValues}), {@code 'b'} binary ({@link PgBinaryValues} or the relation's catalog-resolved
 * {@link PgBinaryCodec}) (PostgreSQL docs, 55.9 Logical Replication Message Formats, "TupleData").
 * Errors name the column, the relation and the byte offset within the message.
 */
final class PgTupleReader {

  private final PgOutputReader in;

  /** Decodes binary values one after another. */
  private final PgBinaryValues.Decoder binaryDecoder = new PgBinaryValues.Decoder();

  private ValueFailure.Policy policy = ValueFailure.Policy.STOP;

  /** Positions (in the tuple's values) of raw values of the last tuple read; valid to count. */
  private int[] undecoded;

  private int undecodedCount;

  /** The values kept raw since {@link #takeFailures()} last ran; null if none. */
  private List<ValueFailure> failures;

  /**
   * @param in the decoder's reader, positioned by the decoder before each call
   */
  PgTupleReader(PgOutputReader in) {
    this.in = in;
  }

  /** Sets what a value that does not decode does (STOP by default). */
  void policy(ValueFailure.Policy policy) {
    this.policy = policy;
  }

  /**
   * Returns the positions of the raw values of the tuple read last, ascending, or null if every
   * value decoded; clears them.
   */
  int[] takeUndecoded() {
    if (undecodedCount == 0) {
      return null;
    }
    int[] taken = Arrays.copyOf(undecoded, undecodedCount);
    undecodedCount = 0;
    return taken;
  }

  /** Returns the values kept raw since the last call, or null if none; clears them. */
  List<ValueFailure> takeFailures() {
    List<ValueFailure> taken = failures;
    failures = null;
    return taken;
  }

  /**
   * Merges into the new row's raw positions those of values {@link #fillUnchangedToast} took from
   * the old row (same rules as there).
   *
   * @return the new row's raw positions, ascending, or null
   */
  static int[] fillUndecoded(
      RelationInfo relation,
      Object[] values,
      Object[] old,
      boolean full,
      int[] newRaw,
      int[] oldRaw) {
    if (oldRaw == null) {
      return newRaw;
    }
    int[] keys = relation.keyIndexes();
    TreeSet<Integer> merged = new TreeSet<>();
    if (newRaw != null) {
      for (int i : newRaw) {
        merged.add(i);
      }
    }
    for (int j : oldRaw) {
      int i = full ? j : keys[j];
      if (values[i] == old[j]) {
        merged.add(i);
      }
    }
    return merged.stream().mapToInt(Integer::intValue).toArray();
  }

  /** Marks the value at {@code out} raw and records why. */
  private void keepRaw(int out, RelationInfo relation, int column, boolean binary, String reason) {
    if (undecoded == null) {
      undecoded = new int[4];
    } else if (undecodedCount == undecoded.length) {
      undecoded = Arrays.copyOf(undecoded, undecodedCount * 2);
    }
    undecoded[undecodedCount++] = out;
    if (failures == null) {
      failures = new ArrayList<>(2);
    }
    failures.add(TextValueDecoding.failure(relation, column, binary, reason));
  }

  private ValueDecodingException failure(
      RelationInfo relation, int column, int at, boolean binary, String message, Throwable e) {
    return TextValueDecoding.exception(
        in.error(at, message).getMessage(),
        e,
        TextValueDecoding.failure(relation, column, binary, message));
  }

  /**
   * Replaces unchanged-TOAST markers of the new row by the old row's value where the old tuple
   * carries it: every column of an {@code 'O'} tuple, the key columns of a {@code 'K'} tuple (an
   * unchanged TOASTed value is the old value, so either is exact).
   */
  static void fillUnchangedToast(
      RelationInfo relation, Object[] values, Object[] old, boolean full) {
    int[] keys = relation.keyIndexes();
    int n = full ? values.length : keys.length;
    for (int j = 0; j < n; j++) {
      int i = full ? j : keys[j];
      if (values[i] == Row.UNCHANGED_TOAST && old[j] != Row.UNCHANGED_TOAST) {
        values[i] = old[j];
      }
    }
  }

  /** Reads the byte announcing a tuple and checks it is one of {@code allowed}. */
  byte expectTupleType(String allowed) {
    int at = in.offset();
    byte kind = in.readByte();
    if (allowed.indexOf(kind) < 0) {
      throw in.error(
          at,
          "expected "
              + String.join(" or ", allowed.chars().mapToObj(c -> "'" + (char) c + "'").toList())
              + " before a tuple, got "
              + PgOutputReader.describeByte(kind));
    }
    return kind;
  }

  /**
   * Reads TupleData. For a key tuple ({@code keyOnly}) only the key columns are kept: PostgreSQL
   * sends the others as {@code 'n'}, meaning "not sent" there.
   *
   * @return the values, one per column (or per key column), with {@link Row#UNCHANGED_TOAST}
   */
  Object[] readTuple(RelationInfo relation, boolean keyOnly) {
    int at = in.offset();
    int count = in.readUnsignedInt16();
    List<ColumnInfo> columns = relation.columns();
    if (count != columns.size()) {
      throw in.error(
          at,
          "tuple has "
              + count
              + " columns but relation "
              + relation.describe()
              + " has "
              + columns.size());
    }
    Object[] values = new Object[keyOnly ? relation.keyIndexes().length : count];
    undecodedCount = 0;
    int k = 0;
    for (int i = 0; i < count; i++) {
      boolean wanted = !keyOnly || columns.get(i).key();
      int kindAt = in.offset();
      byte kind = in.readByte();
      Object value;
      switch (kind) {
        case 'n' -> value = null;
        case 'u' -> value = Row.UNCHANGED_TOAST;
        case 't' -> {
          int start = in.readCountedBytes("value", columns.get(i).name());
          int length = in.offset() - in.offsetOf(start);
          value = wanted ? decodeValue(relation, i, start, length, keyOnly ? k : i) : null;
        }
        case 'b' -> {
          int start = in.readCountedBytes("value", columns.get(i).name());
          int length = in.offset() - in.offsetOf(start);
          value = wanted ? decodeBinaryValue(relation, i, start, length, keyOnly ? k : i) : null;
        }
        default ->
            throw in.error(
                kindAt,
                "unknown tuple data kind "
                    + PgOutputReader.describeByte(kind)
                    + " for column \""
                    + columns.get(i).name()
                    + "\" of "
                    + relation.describe());
      }
      if (keyOnly) {
        if (wanted) {
          values[k++] = value;
        }
      } else {
        values[i] = value;
      }
    }
    return values;
  }

  private Object decodeValue(RelationInfo relation, int column, int start, int length, int out) {
    try {
      return TextValueDecoding.decode(relation, column, in.array(), start, length);
    } catch (RuntimeException e) {
      String message =
          TextValueDecoding.describeFailure(relation, column, in.array(), start, length, e);
      if (policy == ValueFailure.Policy.RAW) {
        keepRaw(out, relation, column, false, message);
        return new String(in.array(), start, length, StandardCharsets.UTF_8);
      }
      throw failure(relation, column, in.offsetOf(start), false, message, e);
    }
  }

  /** Decodes a binary ({@code 'b'}) value with {@link PgBinaryValues}, naming the column. */
  private Object decodeBinaryValue(
      RelationInfo relation, int column, int start, int length, int out) {
    int oid = relation.valueTypeOids()[column];
    PgBinaryCodec[] codecs = relation.binaryCodecs();
    PgBinaryCodec codec = codecs == null ? null : codecs[column];
    try {
      return codec == null
          ? binaryDecoder.decode(oid, in.array(), start, length)
          : codec.value(in.array(), start, length);
    } catch (RuntimeException e) {
      ColumnInfo info = relation.columns().get(column);
      String failure =
          codec == null
              ? PgBinaryValues.describeFailure(
                  info.name(),
                  relation.describe(),
                  info.typeOid(),
                  oid,
                  in.array(),
                  start,
                  length,
                  e)
              : PgBinaryValues.describeFailure(
                  info.name(),
                  relation.describe(),
                  "type " + codec.describe(),
                  in.array(),
                  start,
                  length,
                  e);
      if (policy == ValueFailure.Policy.RAW) {
        keepRaw(out, relation, column, true, failure);
        return Arrays.copyOfRange(in.array(), start, start + length);
      }
      throw failure(relation, column, in.offsetOf(start), true, failure, e);
    }
  }
}
