package io.datum.cdc.core.relation;

import io.datum.cdc.TableId;

/**
 * One column value the decoder could not turn into its Java type, as the decode-error policy sees
 * it: which table and column, which type, in which format, and why.
 *
 * @param table the column's table
 * @param column the column's name
 * @param typeOid the column's type oid, as the Relation message gave it
 * @param typeName the type's name where known ({@code schema.name (oid N)} from the catalog or the
 *     Type message, or a builtin's {@code typname}), else {@code oid N}
 * @param binary true for a binary-format ({@code 'b'}) value, false for a text ({@code 't'}) one
 * @param reason why it could not be decoded, naming the input
 */
public record ValueFailure(
    TableId table, String column, int typeOid, String typeName, boolean binary, String reason) {

  /** What the decoder does with a value it cannot decode (see {@code DecodeErrorPolicy}). */
  public enum Policy {
    /** Throw a {@link ValueDecodingException}: the change is not delivered. */
    STOP,
    /** Put the raw value (text as a String, binary as a byte[]) in the row and mark the column. */
    RAW,
    /** Throw a {@link ValueDecodingException}, which the delivery turns into a skipped event. */
    SKIP
  }
}
