package io.datum.cdc.core.types;

import io.datum.cdc.event.PgJson;
import java.util.Arrays;
import java.util.UUID;

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
    PgBinaryCursor c = new PgBinaryCursor(buf, offset, length);
    Object value = read(typeOid, c);
    c.expectEnd("binary value of type oid " + Integer.toUnsignedString(typeOid));
    return value;
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
   * @return true for the builtin types listed in the class description
   */
  public static boolean supports(int typeOid) {
    return PgTextValues.isBuiltin(typeOid)
        || PgBinaryText.renders(typeOid)
        || PgBinaryText.textArrayElement(typeOid) != 0;
  }

  private static Object read(int typeOid, PgBinaryCursor c) {
    switch (typeOid) {
      case PgTextValues.BOOL -> {
        fixed(c, 1, "bool");
        int b = c.u8("bool"); // boolsend: 1 or 0
        if (b > 1) {
          throw new IllegalArgumentException("bool byte is " + b + "; 0 or 1 expected");
        }
        return b == 1;
      }
      case PgTextValues.INT2 -> {
        fixed(c, 2, "int2");
        return c.i16("int2");
      }
      case PgTextValues.INT4 -> {
        fixed(c, 4, "int4");
        return c.i32("int4");
      }
      case PgTextValues.INT8 -> {
        fixed(c, 8, "int8");
        return c.i64("int8");
      }
      case PgTextValues.OID -> {
        fixed(c, 4, "oid");
        return Integer.toUnsignedLong(c.i32("oid"));
      }
      case PgTextValues.FLOAT4 -> {
        fixed(c, 4, "float4");
        return Float.intBitsToFloat(c.i32("float4"));
      }
      case PgTextValues.FLOAT8 -> {
        fixed(c, 8, "float8");
        return c.f64("float8");
      }
      case PgTextValues.NUMERIC -> {
        return PgBinaryScalars.numeric(c);
      }
      case PgTextValues.TEXT, PgTextValues.VARCHAR, PgTextValues.BPCHAR, PgTextValues.NAME -> {
        return c.restUtf8("text"); // textsend, varcharsend, bpcharsend, namesend: the text
      }
      case PgTextValues.CHAR -> {
        fixed(c, 1, "\"char\"");
        return charText(c.u8("\"char\""));
      }
      case PgTextValues.BYTEA -> {
        int at = c.skip(c.remaining(), "bytea"); // byteasend: the bytes themselves
        return Arrays.copyOfRange(c.array(), at, c.index());
      }
      case PgTextValues.JSON -> {
        return new PgJson(c.restUtf8("json")); // json_send: the text as stored
      }
      case PgTextValues.JSONB -> {
        return new PgJson(PgBinaryText.versioned(c, "jsonb")); // jsonb_send: 1, jsonb_out's text
      }
      case PgTextValues.UUID_OID -> {
        fixed(c, 16, "uuid");
        return new UUID(c.i64("uuid"), c.i64("uuid"));
      }
      case PgTextValues.DATE -> {
        fixed(c, 4, "date");
        return PgBinaryScalars.date(c);
      }
      case PgTextValues.TIME -> {
        fixed(c, 8, "time");
        return PgBinaryScalars.time(c);
      }
      case PgTextValues.TIMETZ -> {
        fixed(c, 12, "timetz");
        return PgBinaryScalars.timeTz(c);
      }
      case PgTextValues.TIMESTAMP -> {
        fixed(c, 8, "timestamp");
        return PgBinaryScalars.timestamp(c);
      }
      case PgTextValues.TIMESTAMPTZ -> {
        fixed(c, 8, "timestamptz");
        return PgBinaryScalars.timestampTz(c);
      }
      case PgTextValues.INTERVAL -> {
        fixed(c, 16, "interval");
        return PgBinaryScalars.interval(c);
      }
      default -> {
        int element = PgTextValues.elementOid(typeOid);
        if (element != 0) {
          return PgBinaryArrays.decodeList(c, element);
        }
        if (PgBinaryText.renders(typeOid)) {
          return PgBinaryText.render(typeOid, c);
        }
        int textElement = PgBinaryText.textArrayElement(typeOid);
        if (textElement != 0) {
          return PgBinaryArrays.renderText(c, textElement, PgBinaryText.delimiter(textElement));
        }
        throw new IllegalArgumentException(
            "binary values of type oid "
                + Integer.toUnsignedString(typeOid)
                + " cannot be decoded: PgBinaryValues decodes the builtin types it lists; other"
                + " types (user-defined ones, ranges) need codecs from the type catalog"
                + " (PgTypeCatalog), which this decoder was not given");
      }
    }
  }

  /** Checks that a fixed-size value has exactly its size. */
  private static void fixed(PgBinaryCursor c, int size, String type) {
    if (c.remaining() != size) {
      throw new IllegalArgumentException(
          type + " binary value must be " + size + " bytes, got " + c.remaining());
    }
  }

  /**
   * {@code charsend} sends the byte; {@code charout} (src/backend/utils/adt/char.c, PostgreSQL 15+)
   * prints NUL as the empty string, ASCII as itself and a byte with the high bit set as {@code
   * \ooo} (PostgreSQL 14 printed that byte raw, which is not valid UTF-8).
   */
  private static String charText(int b) {
    if (b == 0) {
      return "";
    } else if (b < 0x80) {
      return String.valueOf((char) b);
    }
    return "\\" + (b >> 6) + ((b >> 3) & 7) + (b & 7);
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
