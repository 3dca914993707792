package io.datum.cdc.core.types;

import io.datum.cdc.event.PgJson;

/**
 * Decodes PostgreSQL's binary send format of a value, by type oid, to exactly the Java value that
 * {@link PgTextValues#decode(int, String)} gives for the same value's text output (types fixed in
 * {@link io.datum.cdc.event.Row}'s documentation). pgoutput sends a column this way (tuple data
 * kind {@code 'b'}) when the {@code binary} option is on.
 *
 * <p><b>Which columns pgoutput sends in binary.</b> {@code logicalrep_write_tuple}
 * (src/backend/replication/logical/proto.c) sends a non-NULL, non-unchanged-TOAST value as {@code
 * 'b'} if the option is on and the column type's {@code pg_type.typsend} is set, else as {@code
 * 't'}; the condition {@code binary && OidIsValid(typclass->typsend)} is the same in PostgreSQL 14
 * (where the option appeared), 15, 16, 17 and 18. There is no restriction to builtin types: every
 * type with a send function goes binary, user-defined ones included: enums ({@code enum_send}: the
 * label as text), composites ({@code record_send}), ranges and multiranges, arrays of any of these
 * ({@code array_send}), and extension base types ({@code hstore}, {@code citext}, PostGIS ...) in
 * their own formats. A domain has its base type's send function, so it is sent in the base type's
 * format; the Type message names the base type ({@code logicalrep_write_typ}), which is how {@code
 * PgOutputDecoder} maps a domain to it. Only types without a send function still arrive as text: in
 * PostgreSQL 17's catalog, {@code aclitem} and {@code gtsvector} (and pseudo-types).
 *
 * <p><b>What this class decodes.</b> Every builtin type {@link PgTextValues} decodes, scalars and
 * its listed arrays (to the same nested {@link java.util.List}s, lower bounds dropped); and, as
 * their output function's exact text: {@code xml}, {@code money} (C locale, see {@link
 * PgBinaryText}), {@code inet}, {@code cidr}, {@code macaddr}, {@code macaddr8}, {@code bit},
 * {@code varbit}, {@code pg_lsn}, {@code jsonpath}, {@code point}, {@code lseg}, {@code path},
 * {@code box}, {@code polygon}, {@code line}, {@code circle}, {@code tsvector}, {@code tid}, {@code
 * xid}, {@code xid8}, {@code cid}, {@code txid_snapshot}, {@code pg_snapshot}, {@code int2vector},
 * {@code oidvector}, {@code refcursor}, {@code unknown}, and their arrays (as {@code array_out}
 * text, or as Lists of Strings for those {@link PgTextValues} lists).
 *
 * <p><b>What it does not decode</b>, and rejects with an {@link IllegalArgumentException} naming
 * the type oid: every type whose oid is not one of those: user-defined types (enums, domains over
 * types not listed here, composites, ranges, multiranges, arrays of these), the builtin ranges and
 * multiranges, and builtins such as {@code regclass} or {@code tsquery}. {@code PgOutputDecoder}
 * decodes the user-defined types and the ranges with {@link PgBinaryCodec}s that {@link
 * PgTypeCatalog} builds from {@code pg_type} at Relation time, since the kind of a user type is not
 * in the pgoutput stream (a domain, for one, keeps its own oid in {@code
 * RelationInfo.valueTypeOids()} unless {@link PgTextValues} lists its base type); what stays
 * undecodable there is listed in {@link PgTypeCatalog}.
 *
 * <p>Sizes are checked: a value shorter or longer than its format, or an array header that lies
 * about dimensions or lengths, raises {@link IllegalArgumentException} naming the byte offset
 * within the value, never an index exception.
 */
public final class PgBinaryValues {

  private PgBinaryValues() {}

  /**
   * Decodes a whole binary value held in a byte array.
   *
   * @param typeOid the column's type oid (a domain already mapped to its base type)
   * @param buf the array
   * @param offset the index of the value's first byte
   * @param length the value's length in bytes
   * @return the value as {@link PgTextValues#decode(int, String)} gives it for the same value's
   *     text: Short, Integer, Long, Float, Double, BigDecimal, Boolean, String, byte[] (a copy),
   *     UUID, {@link PgJson}, a java.time type, {@link io.datum.cdc.event.PgInterval} or an
   *     unmodifiable List; never null (SQL NULL is not sent as a value)
   * @throws IllegalArgumentException if the type is not one this class decodes, or the bytes are
   *     not a valid value of the type
   */
  public static Object decode(int typeOid, byte[] buf, int offset, int length) {
    return decode(typeOid, new PgBinaryCursor(buf, offset, length));
  }

  private static Object decode(int typeOid, PgBinaryCursor c) {
    Object value = read(typeOid, c);
    if (c.remaining() != 0) { // the text only for a failure, not per value
      c.expectEnd("binary value of type oid " + Integer.toUnsignedString(typeOid));
    }
    return value;
  }

  /**
   * A decoder of one value after another that reuses its cursor: {@link #decode(int, byte[], int,
   * int)} without an object per value (a row path decodes millions; the cursor does not escape the
   * call, but it is too large a call for the JIT to prove it). Not thread-safe: one per reader.
   */
  public static final class Decoder {
    private final PgBinaryCursor cursor = new PgBinaryCursor(new byte[0], 0, 0);

    /** Creates a decoder. */
    public Decoder() {}

    /**
     * Decodes a binary value, as {@link PgBinaryValues#decode(int, byte[], int, int)}.
     *
     * @param typeOid the column's type oid (a domain already mapped to its base type)
     * @param buf the array
     * @param offset the index of the value's first byte
     * @param length the value's length in bytes
     * @return the value; see {@link PgBinaryValues#decode(int, byte[], int, int)}
     * @throws IllegalArgumentException as {@link PgBinaryValues#decode(int, byte[], int, int)}
     */
    public Object decode(int typeOid, byte[] buf, int offset, int length) {
      return PgBinaryValues.decode(typeOid, cursor.reset(buf, offset, length));
    }
  }

  /**
   * Decodes a whole binary value.
   *
   * @param typeOid the column's type oid (a domain already mapped to its base type)
   * @param value the value's bytes
   * @return see {@link #decode(int, byte[], int, int)}
   * @throws IllegalArgumentException as {@link #decode(int, byte[], int, int)}
   */
  public static Object decode(int typeOid, byte[] value) {
    return decode(typeOid, value, 0, value.length);
  }

  /**
   * Returns whether {@link #decode} handles a type oid (whatever the bytes).
   *
   * @param typeOid a type oid
   * @return true for the {@link PgBuiltinType}s and their array types
   */
  public static boolean supports(int typeOid) {
    return PgBuiltinType.of(typeOid) != null || PgBuiltinType.elementOf(typeOid) != null;
  }

  private static Object read(int typeOid, PgBinaryCursor c) {
    PgBuiltinType type = PgBuiltinType.of(typeOid);
    if (type != null) {
      return type.decodeBinary(c);
    }
    PgBuiltinType element = PgBuiltinType.elementOf(typeOid);
    if (element != null) {
      return element.arrays() == PgBuiltinType.ArrayForm.LIST
          ? PgBinaryArrays.decodeList(c, element.oid())
          : PgBinaryArrays.renderText(c, element.oid(), element.delimiter());
    }
    throw new IllegalArgumentException(
        "binary values of type oid "
            + Integer.toUnsignedString(typeOid)
            + " cannot be decoded: PgBinaryValues decodes the builtin types it lists; other"
            + " types (user-defined ones, ranges) need codecs from the type catalog"
            + " (PgTypeCatalog), which this decoder was not given");
  }

  /**
   * Builds the text of a binary value failure: column, relation, type oid(s), a hexadecimal excerpt
   * of the bytes, and the cause; the counterpart of {@link PgTextValues#describeFailure}.
   */
  public static String describeFailure(
      String column,
      String relation,
      int typeOid,
      int decodedAs,
      byte[] buf,
      int offset,
      int length,
      Throwable e) {
    return describeFailure(
        column,
        relation,
        "type oid "
            + Integer.toUnsignedString(typeOid)
            + (decodedAs == typeOid ? "" : " (decoded as builtin type oid " + decodedAs + ")"),
        buf,
        offset,
        length,
        e);
  }

  /**
   * Builds the text of a binary value failure: column, relation, the type as described by the
   * caller (for example {@code type public.mood (oid 16385)}), a hexadecimal excerpt of the bytes,
   * and the cause.
   */
  public static String describeFailure(
      String column,
      String relation,
      String type,
      byte[] buf,
      int offset,
      int length,
      Throwable e) {
    String cause = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    if (cause.length() > 300) {
      cause = cause.substring(0, 300) + "...";
    }
    StringBuilder hex = new StringBuilder("0x");
    int shown = Math.min(length, 32);
    for (int i = 0; i < shown; i++) {
      hex.append(Character.forDigit((buf[offset + i] >> 4) & 15, 16));
      hex.append(Character.forDigit(buf[offset + i] & 15, 16));
    }
    if (shown < length) {
      hex.append("...");
    }
    return "column \""
        + column
        + '"'
        + (relation == null ? "" : " of " + relation)
        + ": cannot decode binary value "
        + hex
        + " ("
        + length
        + " bytes) as "
        + type
        + ": "
        + cause;
  }
}
