package io.datum.cdc.core.relation;

import io.datum.cdc.core.types.PgBinaryCodec;
import io.datum.cdc.core.types.PgBuiltinType;
import io.datum.cdc.core.types.PgTextValues;
import io.datum.cdc.event.ColumnInfo;
import java.nio.charset.StandardCharsets;

/**
 * How a text-format column value of a relation is decoded, shared by the stream ({@code
 * io.datum.cdc.core.pgoutput.PgTupleReader}, a {@code 't'} value of TupleData) and the snapshot's
 * COPY reader ({@code io.datum.cdc.core.snapshot.CopyRows}), so that both give the same Java value
 * for the same text: the column's catalog codec ({@link PgBinaryCodec#textValue}) where {@link
 * RelationInfo#binaryCodecs()} has one, else the builtin decoder of {@link
 * RelationInfo#valueTypeOids()} ({@link PgTextValues#decode(int, byte[], int, int)}).
 */
public final class TextValueDecoding {

  private TextValueDecoding() {}

  /**
   * Decodes one text value of a column.
   *
   * @param relation the relation the value belongs to
   * @param column the column's position in {@link RelationInfo#columns()}
   * @param bytes the array holding the value's UTF-8 text
   * @param start the value's first byte
   * @param length the value's length in bytes
   * @return the value (see {@link io.datum.cdc.event.Row} for the Java types)
   * @throws RuntimeException if the text does not decode as the column's type (unwrapped; the
   *     caller names the input with {@link #describeFailure})
   */
  public static Object decode(
      RelationInfo relation, int column, byte[] bytes, int start, int length) {
    PgBinaryCodec[] codecs = relation.binaryCodecs();
    if (codecs != null && codecs[column] != null) {
      return codecs[column].textValue(new String(bytes, start, length, StandardCharsets.UTF_8));
    }
    return PgTextValues.decode(relation.valueTypeOids()[column], bytes, start, length);
  }

  /**
   * Builds the text of a failure of {@link #decode}: column, relation, type oids, an excerpt of the
   * value, the cause.
   *
   * @param relation the relation
   * @param column the column's position
   * @param bytes the array holding the value
   * @param start the value's first byte
   * @param length the value's length in bytes
   * @param e what {@link #decode} threw
   * @return the message, not null
   */
  public static String describeFailure(
      RelationInfo relation, int column, byte[] bytes, int start, int length, Throwable e) {
    ColumnInfo info = relation.columns().get(column);
    return PgTextValues.describeFailure(
        info.name(),
        relation.describe(),
        info.typeOid(),
        relation.valueTypeOids()[column],
        PgTextValues.excerpt(bytes, start, length),
        e);
  }

  /**
   * Returns the facts of a value failure of a column, for the decode-error policy.
   *
   * @param relation the relation
   * @param column the column's position
   * @param binary true for a binary-format value
   * @param reason why the value did not decode, naming the input
   * @return the failure
   */
  public static ValueFailure failure(
      RelationInfo relation, int column, boolean binary, String reason) {
    ColumnInfo info = relation.columns().get(column);
    return new ValueFailure(
        relation.table(), info.name(), info.typeOid(), typeName(relation, column), binary, reason);
  }

  /**
   * Creates the exception a value that does not decode throws under {@link
   * ValueFailure.Policy#STOP} (and {@link ValueFailure.Policy#SKIP}).
   *
   * @param message what failed, naming the input
   * @param cause the underlying failure, may be null
   * @param failure the facts of the failure
   * @return the exception
   */
  public static ValueDecodingException exception(
      String message, Throwable cause, ValueFailure failure) {
    return new ValueDecodingException(message, cause, failure);
  }

  /** The name of a column's type for messages: its codec's, a builtin's typname, or its oid. */
  static String typeName(RelationInfo relation, int column) {
    PgBinaryCodec[] codecs = relation.binaryCodecs();
    if (codecs != null && codecs[column] != null) {
      return codecs[column].describe();
    }
    int oid = relation.columns().get(column).typeOid();
    PgBuiltinType builtin = PgBuiltinType.of(oid);
    return builtin != null ? builtin.typname() : "oid " + Integer.toUnsignedString(oid);
  }
}
