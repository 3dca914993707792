package io.datum.cdc.core.types;

import io.datum.cdc.event.PgJson;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;

/**
 * The builtin PostgreSQL types datum-cdc decodes, one row each: oid, {@code typname}, array type
 * oid, array delimiter, and how each format decodes it. Every decoder finds a builtin type here
 * (oids, names and array types: src/include/catalog/pg_type.dat; output formats: PostgreSQL docs,
 * chapter 8 Data Types, and the output functions the decoding methods name).
 *
 * <p>Two kinds of rows:
 *
 * <ul>
 *   <li><b>typed</b>: the value becomes the Java type {@link io.datum.cdc.event.Row} documents
 *       (Integer, BigDecimal, Instant, ...), from its text ({@link #decodeText}) as from its binary
 *       send format ({@link #decodeBinary}); arrays of it become {@code List}s of such values.
 *   <li><b>rendered</b>: the value stays a String, its output function's text: as sent in text
 *       mode, rendered from the send format in binary mode ({@code xml}, {@code inet}, geometric
 *       types, {@code tsvector}, ...). Arrays of some of these become {@code List}s of Strings
 *       ({@link ArrayForm#LIST}); the others stay their {@code array_out} text ({@link
 *       ArrayForm#TEXT}).
 * </ul>
 *
 * <p>Types without a row (user-defined types, ranges, {@code regclass}, ...) are decoded by the
 * codecs {@link PgTypeCatalog} builds, or stay as their text.
 */
public enum PgBuiltinType {
  BOOL(
      16,
      "bool",
      1000,
      ascii(PgScalarValues::parseBool),
      PgBinaryScalars::bool,
      PgBinaryOutput::boolText),
  BYTEA(
      17,
      "bytea",
      1001,
      fast(PgScalarValues::parseBytea, PgScalarValues::parseBytea),
      PgBinaryScalars::bytea,
      PgBinaryOutput::byteaText),
  CHAR(18, "char", 1002, utf8(text -> text), PgBinaryScalars::charValue, null),
  NAME(19, "name", 1003, utf8(text -> text), PgBinaryScalars::text, null),
  INT8(
      20,
      "int8",
      1016,
      fast(Long::parseLong, PgScalarValues::parseInt8),
      PgBinaryScalars::int8,
      null),
  INT2(
      21,
      "int2",
      1005,
      fast(Short::parseShort, PgScalarValues::parseInt2),
      PgBinaryScalars::int2,
      null),
  INT4(
      23,
      "int4",
      1007,
      fast(Integer::parseInt, PgScalarValues::parseInt4),
      PgBinaryScalars::int4,
      null),
  TEXT(25, "text", 1009, utf8(text -> text), PgBinaryScalars::text, null),
  OID(
      26,
      "oid",
      1028,
      fast(PgScalarValues::parseOid, PgScalarValues::parseOid),
      PgBinaryScalars::oid,
      null),
  JSON(114, "json", 199, utf8(PgScalarValues::parseJson), PgBinaryScalars::json, null),
  FLOAT4(
      700,
      "float4",
      1021,
      ascii(PgScalarValues::parseFloat4),
      PgBinaryScalars::float4,
      PgBinaryOutput::float4Text),
  FLOAT8(
      701,
      "float8",
      1022,
      ascii(PgScalarValues::parseFloat8),
      PgBinaryScalars::float8,
      PgBinaryOutput::float8Text),
  BPCHAR(1042, "bpchar", 1014, utf8(text -> text), PgBinaryScalars::text, null),
  VARCHAR(1043, "varchar", 1015, utf8(text -> text), PgBinaryScalars::text, null),
  DATE(
      1082,
      "date",
      1182,
      ascii(PgTemporalValues::parseDate),
      PgBinaryScalars::date,
      PgBinaryOutput::dateText),
  TIME(
      1083,
      "time",
      1183,
      ascii(PgTemporalValues::parseTime),
      PgBinaryScalars::time,
      PgBinaryOutput::timeText),
  TIMESTAMP(
      1114,
      "timestamp",
      1115,
      ascii(PgTemporalValues::parseTimestamp),
      PgBinaryScalars::timestamp,
      PgBinaryOutput::timestampText),
  TIMESTAMPTZ(
      1184,
      "timestamptz",
      1185,
      ascii(PgTemporalValues::parseTimestampTz),
      PgBinaryScalars::timestampTz,
      PgBinaryOutput::timestampTzText),
  INTERVAL(
      1186,
      "interval",
      1187,
      ascii(PgTemporalValues::parseInterval),
      PgBinaryScalars::interval,
      PgBinaryOutput::intervalText),
  TIMETZ(
      1266,
      "timetz",
      1270,
      ascii(PgTemporalValues::parseTimeTz),
      PgBinaryScalars::timeTz,
      PgBinaryOutput::timeTzText),
  NUMERIC(
      1700,
      "numeric",
      1231,
      ascii(PgScalarValues::parseNumeric),
      PgBinaryScalars::numeric,
      PgBinaryOutput::numericText),
  UUID(2950, "uuid", 2951, ascii(PgScalarValues::parseUuid), PgBinaryScalars::uuid, null),
  JSONB(3802, "jsonb", 3807, utf8(PgScalarValues::parseJson), PgBinaryScalars::jsonb, null),

  // rendered: Strings in both formats; arrays as Lists of Strings
  XML(142, "xml", 143, ArrayForm.LIST, PgBinaryText::utf8), // xml_send
  MONEY(790, "money", 791, ArrayForm.LIST, PgBinaryText::cash),
  CIDR(650, "cidr", 651, ArrayForm.LIST, c -> PgNetworkText.inet(c, true)),
  INET(869, "inet", 1041, ArrayForm.LIST, c -> PgNetworkText.inet(c, false)),
  MACADDR(829, "macaddr", 1040, ArrayForm.LIST, c -> PgNetworkText.macaddr(c, 6)),
  BIT(1560, "bit", 1561, ArrayForm.LIST, PgBinaryText::bits),
  VARBIT(1562, "varbit", 1563, ArrayForm.LIST, PgBinaryText::bits),
  PG_LSN(3220, "pg_lsn", 3221, ArrayForm.LIST, PgBinaryText::pgLsn),
  JSONPATH(4072, "jsonpath", 4073, ArrayForm.LIST, PgBinaryText::jsonpath),

  // rendered: Strings in both formats; arrays as their array_out text
  INT2VECTOR(22, "int2vector", 1006, ArrayForm.TEXT, PgBinaryText::int2vector),
  TID(27, "tid", 1010, ArrayForm.TEXT, PgBinaryText::tid),
  XID(28, "xid", 1011, ArrayForm.TEXT, PgBinaryText::xid),
  CID(29, "cid", 1012, ArrayForm.TEXT, PgBinaryText::xid), // cidsend/cidout as xid's
  OIDVECTOR(30, "oidvector", 1013, ArrayForm.TEXT, PgBinaryText::oidvector),
  POINT(600, "point", 1017, ArrayForm.TEXT, PgGeometryText::point),
  LSEG(601, "lseg", 1018, ArrayForm.TEXT, PgGeometryText::lseg),
  PATH(602, "path", 1019, ArrayForm.TEXT, PgGeometryText::path),
  BOX(603, "box", 1020, ArrayForm.TEXT, PgGeometryText::box, ';'), // typdelim ';'
  POLYGON(604, "polygon", 1027, ArrayForm.TEXT, PgGeometryText::polygon),
  LINE(628, "line", 629, ArrayForm.TEXT, PgGeometryText::line),
  UNKNOWN(705, "unknown", 0, ArrayForm.TEXT, PgBinaryText::utf8), // unknownsend; no array type
  CIRCLE(718, "circle", 719, ArrayForm.TEXT, PgGeometryText::circle),
  MACADDR8(774, "macaddr8", 775, ArrayForm.TEXT, c -> PgNetworkText.macaddr(c, 8)),
  REFCURSOR(1790, "refcursor", 2201, ArrayForm.TEXT, PgBinaryText::utf8), // textsend
  TXID_SNAPSHOT(2970, "txid_snapshot", 2949, ArrayForm.TEXT, PgBinaryText::snapshot),
  TSVECTOR(3614, "tsvector", 3643, ArrayForm.TEXT, PgBinaryText::tsvector),
  PG_SNAPSHOT(5038, "pg_snapshot", 5039, ArrayForm.TEXT, PgBinaryText::snapshot),
  XID8(5069, "xid8", 271, ArrayForm.TEXT, PgBinaryText::xid8);

  /** How a builtin type's arrays are given. */
  public enum ArrayForm {
    /** As an unmodifiable {@code List} of the element values (nested for several dimensions). */
    LIST,
    /** As the array's {@code array_out} text, a String. */
    TEXT
  }

  /** Decodes a value's text output. */
  @FunctionalInterface
  interface TextDecoder {
    /**
     * @param text the output text
     * @return the value
     * @throws IllegalArgumentException if the text does not parse
     */
    Object decode(String text);
  }

  /** Decodes a value's text output from its UTF-8 bytes. */
  @FunctionalInterface
  interface BytesDecoder {
    /**
     * @param utf8 the bytes
     * @param offset the first byte of the value
     * @param length the value's length in bytes
     * @return the value
     * @throws IllegalArgumentException if the text does not parse
     */
    Object decode(byte[] utf8, int offset, int length);
  }

  /** Decodes a whole binary value (the send format) to its Java value. */
  @FunctionalInterface
  interface BinaryDecoder {
    /**
     * @param c the value; consumed entirely, or the caller's end check fails
     * @return the value
     * @throws IllegalArgumentException if the bytes are not a valid value of the type
     */
    Object decode(PgBinaryCursor c);
  }

  /** Renders a whole binary value as the type's output function prints it. */
  @FunctionalInterface
  interface BinaryRenderer {
    /**
     * @param c the value; consumed entirely, or the caller's end check fails
     * @param zone the session time zone ({@code timestamptz}), or null if unknown
     * @return the output text
     * @throws IllegalArgumentException if the bytes are not a valid value of the type
     */
    String render(PgBinaryCursor c, ZoneId zone);
  }

  /** Renders a binary value that needs no session setting. */
  @FunctionalInterface
  interface PlainRenderer {
    /**
     * @param c the value; consumed entirely, or the caller's end check fails
     * @return the output text
     */
    String render(PgBinaryCursor c);
  }

  /** The text decoders of a typed row: from a String, and from UTF-8 bytes. */
  private record Text(TextDecoder string, BytesDecoder bytes) {}

  private static final PgBuiltinType[] BY_OID = new PgBuiltinType[5070];
  private static final PgBuiltinType[] BY_ARRAY_OID = new PgBuiltinType[5070];

  static {
    for (PgBuiltinType t : values()) {
      BY_OID[t.oid] = t;
      if (t.arrayOid != 0) {
        BY_ARRAY_OID[t.arrayOid] = t;
      }
    }
  }

  private final int oid;
  private final String typname;
  private final int arrayOid;
  private final ArrayForm arrays;
  private final char delimiter;
  private final Text text;
  private final BinaryDecoder binary;
  private final BinaryRenderer output;

  /** A typed row; {@code output} null: the output text is the binary value's {@code toString}. */
  PgBuiltinType(
      int oid,
      String typname,
      int arrayOid,
      Text text,
      BinaryDecoder binary,
      BinaryRenderer output) {
    this.oid = oid;
    this.typname = typname;
    this.arrayOid = arrayOid;
    this.arrays = ArrayForm.LIST;
    this.delimiter = ',';
    this.text = text;
    this.binary = binary;
    this.output = output;
  }

  /** A rendered row with the array delimiter {@code ,}. */
  PgBuiltinType(int oid, String typname, int arrayOid, ArrayForm arrays, PlainRenderer render) {
    this(oid, typname, arrayOid, arrays, render, ',');
  }

  /** A rendered row. */
  PgBuiltinType(
      int oid,
      String typname,
      int arrayOid,
      ArrayForm arrays,
      PlainRenderer render,
      char delimiter) {
    this.oid = oid;
    this.typname = typname;
    this.arrayOid = arrayOid;
    this.arrays = arrays;
    this.delimiter = delimiter;
    this.text = null;
    this.binary = render::render;
    this.output = (c, zone) -> render.render(c);
  }

  private static Text ascii(TextDecoder decoder) {
    // ASCII-only output: ISO-8859-1 is the cheapest String construction
    return new Text(
        decoder, (b, o, l) -> decoder.decode(new String(b, o, l, StandardCharsets.ISO_8859_1)));
  }

  private static Text utf8(TextDecoder decoder) {
    return new Text(
        decoder, (b, o, l) -> decoder.decode(new String(b, o, l, StandardCharsets.UTF_8)));
  }

  private static Text fast(TextDecoder decoder, BytesDecoder bytes) {
    return new Text(decoder, bytes);
  }

  /**
   * Returns the row of a builtin type oid.
   *
   * @param oid a type oid (unsigned)
   * @return the row, or null if the oid is not listed
   */
  public static PgBuiltinType of(int oid) {
    return oid >= 0 && oid < BY_OID.length ? BY_OID[oid] : null;
  }

  /**
   * Returns the element type of a builtin array type.
   *
   * @param arrayOid a type oid such as 1007 ({@code _int4})
   * @return the element type's row, or null if {@code arrayOid} is not the array type of a row
   */
  public static PgBuiltinType elementOf(int arrayOid) {
    return arrayOid >= 0 && arrayOid < BY_ARRAY_OID.length ? BY_ARRAY_OID[arrayOid] : null;
  }

  /**
   * Returns the oid of a builtin type that decodes to a typed value or a {@code List}, by its
   * {@code pg_catalog} name, as a Type message names a domain's base type: a typed row's name (such
   * as {@code int4}), or the array name ({@code _int4}, {@code _inet}) of a row whose arrays are
   * Lists.
   *
   * @param name a type name
   * @return the oid, or 0 for any other name (rendered scalars such as {@code inet} among them)
   */
  public static int oidNamed(String name) {
    boolean array = name.startsWith("_");
    String element = array ? name.substring(1) : name;
    for (PgBuiltinType t : values()) {
      if (t.typname.equals(element)) {
        if (array) {
          return t.arrays == ArrayForm.LIST ? t.arrayOid : 0;
        }
        return t.typed() ? t.oid : 0;
      }
    }
    return 0;
  }

  /**
   * The builtin ranges and multiranges and the ranges' arrays, by {@code typname} (oids:
   * src/include/catalog/pg_type.dat, pg_range.dat); they are decoded by catalog codecs, which
   * builtin oids always have.
   */
  private static final java.util.Map<String, Integer> BUILTIN_RANGES =
      java.util.Map.ofEntries(
          java.util.Map.entry("int4range", 3904),
          java.util.Map.entry("_int4range", 3905),
          java.util.Map.entry("numrange", 3906),
          java.util.Map.entry("_numrange", 3907),
          java.util.Map.entry("tsrange", 3908),
          java.util.Map.entry("_tsrange", 3909),
          java.util.Map.entry("tstzrange", 3910),
          java.util.Map.entry("_tstzrange", 3911),
          java.util.Map.entry("daterange", 3912),
          java.util.Map.entry("_daterange", 3913),
          java.util.Map.entry("int8range", 3926),
          java.util.Map.entry("_int8range", 3927),
          java.util.Map.entry("int4multirange", 4451),
          java.util.Map.entry("nummultirange", 4532),
          java.util.Map.entry("tsmultirange", 4533),
          java.util.Map.entry("tstzmultirange", 4534),
          java.util.Map.entry("datemultirange", 4535),
          java.util.Map.entry("int8multirange", 4536));

  /**
   * Returns the oid of a builtin type by its {@code pg_catalog} name, as a Type message names a
   * domain's base type (the innermost one, {@code getBaseType} in {@code logicalrep_write_typ},
   * src/backend/replication/logical/proto.c): any row's name ({@code int4}, {@code inet}, {@code
   * box}), its array's ({@code _int4}, {@code _box}), or a builtin range's or multirange's. A
   * column of a domain over a builtin type then decodes from what the stream says alone, also after
   * the domain was dropped.
   *
   * @param name a type name in {@code pg_catalog}
   * @return the oid, or 0 if the name is none of those (a {@code reg*} type, {@code tsquery}, ...)
   */
  public static int builtinOidNamed(String name) {
    boolean array = name.startsWith("_");
    String element = array ? name.substring(1) : name;
    for (PgBuiltinType t : values()) {
      if (t.typname.equals(element)) {
        return array ? t.arrayOid : t.oid;
      }
    }
    return BUILTIN_RANGES.getOrDefault(name, 0);
  }

  /**
   * Returns whether an oid is a typed builtin type or the array type of a row whose arrays are
   * Lists: the types whose values are not simply their text in text mode.
   *
   * @param oid a type oid
   * @return true if text mode decodes it to something other than its text
   */
  public static boolean decodesText(int oid) {
    PgBuiltinType t = of(oid);
    if (t != null) {
      return t.typed();
    }
    PgBuiltinType e = elementOf(oid);
    return e != null && e.arrays == ArrayForm.LIST;
  }

  /** Returns the type oid. */
  public int oid() {
    return oid;
  }

  /** Returns the {@code pg_catalog} type name, e.g. {@code int4}. */
  public String typname() {
    return typname;
  }

  /** Returns the array type's oid, or 0 if it has none. */
  public int arrayOid() {
    return arrayOid;
  }

  /** Returns how arrays of this type are given. */
  public ArrayForm arrays() {
    return arrays;
  }

  /** Returns {@code typdelim}, the separator of this type's elements in {@code array_out}. */
  public char delimiter() {
    return delimiter;
  }

  /** Returns true for a typed row, false for a rendered one (whose values are Strings). */
  public boolean typed() {
    return text != null;
  }

  /**
   * Decodes a value's text output.
   *
   * @param s the text
   * @return the typed value, or {@code s} itself for a rendered type
   * @throws IllegalArgumentException (or {@link java.time.DateTimeException}, {@link
   *     ArithmeticException}) if the text does not parse as the type
   */
  public Object decodeText(String s) {
    return text == null ? s : text.string().decode(s);
  }

  /**
   * Decodes a value's text output from its UTF-8 bytes, without a String first where the type
   * allows.
   *
   * @param utf8 the bytes
   * @param offset the first byte of the value
   * @param length the value's length in bytes
   * @return as {@link #decodeText(String)}
   * @throws IllegalArgumentException as {@link #decodeText(String)}
   */
  public Object decodeText(byte[] utf8, int offset, int length) {
    return text == null
        ? new String(utf8, offset, length, StandardCharsets.UTF_8)
        : text.bytes().decode(utf8, offset, length);
  }

  /**
   * Decodes a binary value to the value {@link #decodeText} gives for its text.
   *
   * @param c the value, consumed
   * @return the value
   * @throws IllegalArgumentException if the bytes are not a valid value of the type
   */
  Object decodeBinary(PgBinaryCursor c) {
    return binary.decode(c);
  }

  /**
   * Renders a binary value as the type's output function prints it.
   *
   * @param c the value, consumed
   * @param zone the session time zone, or null if unknown ({@code timestamptz} then fails)
   * @return the text
   * @throws IllegalArgumentException if the bytes are not a valid value of the type
   */
  String outputText(PgBinaryCursor c, ZoneId zone) {
    if (output != null) {
      return output.render(c, zone);
    }
    // int2/4/8, oid, the text types, "char", json, jsonb, uuid: their Java value's toString is
    // the output text (uuid_out prints lower case, as UUID.toString does)
    Object v = binary.decode(c);
    return v instanceof PgJson j ? j.text() : v.toString();
  }
}
