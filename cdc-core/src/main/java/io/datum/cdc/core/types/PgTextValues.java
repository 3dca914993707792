package io.datum.cdc.core.types;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.event.PgJson;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Decodes PostgreSQL's text output of a value, by type oid, to the Java type fixed in {@link
 * io.datum.cdc.event.Row}'s documentation. Assumes the session settings the source uses: {@code
 * DateStyle=ISO}, {@code extra_float_digits=3}, {@code bytea_output=hex} (escape is accepted too),
 * {@code IntervalStyle=iso_8601} ({@code postgres} is accepted too). Type oids: {@code
 * src/include/catalog/pg_type.dat}; output formats: PostgreSQL docs, chapter 8 Data Types.
 *
 * <p>Types not listed here (enums, user types, geometric, network, ...) stay as their text, a
 * String. Arrays of the listed types (and of a few text-only builtins) become {@link
 * java.util.List}s, see {@link PgArrayValues}; dates and times: {@link PgTemporalValues}; numbers,
 * uuid and bytea: {@link PgScalarValues}.
 *
 * <p>The decoding methods throw {@link IllegalArgumentException} (or {@link
 * java.time.DateTimeException}, {@link ArithmeticException}) for text that does not parse; the
 * caller names the column.
 */
public final class PgTextValues {

  static final int BOOL = 16;
  static final int BYTEA = 17;
  static final int CHAR = 18;
  static final int NAME = 19;
  static final int INT8 = 20;
  static final int INT2 = 21;
  static final int INT4 = 23;
  static final int TEXT = 25;
  static final int OID = 26;
  static final int JSON = 114;
  static final int FLOAT4 = 700;
  static final int FLOAT8 = 701;
  static final int BPCHAR = 1042;
  static final int VARCHAR = 1043;
  static final int DATE = 1082;
  static final int TIME = 1083;
  static final int TIMESTAMP = 1114;
  static final int TIMESTAMPTZ = 1184;
  static final int INTERVAL = 1186;
  static final int TIMETZ = 1266;
  static final int NUMERIC = 1700;
  static final int UUID_OID = 2950;
  static final int JSONB = 3802;

  /** Builtin type names (pg_catalog) to oids: scalars, then arrays as {name, oid, element oid}. */
  private static final Object[][] BUILTINS = {
    {"bool", BOOL},
    {"bytea", BYTEA},
    {"char", CHAR},
    {"name", NAME},
    {"int8", INT8},
    {"int2", INT2},
    {"int4", INT4},
    {"text", TEXT},
    {"oid", OID},
    {"json", JSON},
    {"float4", FLOAT4},
    {"float8", FLOAT8},
    {"bpchar", BPCHAR},
    {"varchar", VARCHAR},
    {"date", DATE},
    {"time", TIME},
    {"timestamp", TIMESTAMP},
    {"timestamptz", TIMESTAMPTZ},
    {"interval", INTERVAL},
    {"timetz", TIMETZ},
    {"numeric", NUMERIC},
    {"uuid", UUID_OID},
    {"jsonb", JSONB},
    {"_bool", 1000, BOOL},
    {"_bytea", 1001, BYTEA},
    {"_char", 1002, CHAR},
    {"_name", 1003, NAME},
    {"_int2", 1005, INT2},
    {"_int4", 1007, INT4},
    {"_text", 1009, TEXT},
    {"_bpchar", 1014, BPCHAR},
    {"_varchar", 1015, VARCHAR},
    {"_int8", 1016, INT8},
    {"_float4", 1021, FLOAT4},
    {"_float8", 1022, FLOAT8},
    {"_oid", 1028, OID},
    {"_json", 199, JSON},
    {"_timestamp", 1115, TIMESTAMP},
    {"_date", 1182, DATE},
    {"_time", 1183, TIME},
    {"_timestamptz", 1185, TIMESTAMPTZ},
    {"_interval", 1187, INTERVAL},
    {"_numeric", 1231, NUMERIC},
    {"_timetz", 1270, TIMETZ},
    {"_uuid", 2951, UUID_OID},
    {"_jsonb", 3807, JSONB},
    // arrays of builtins kept as text (elements Strings): xml, money, cidr, inet, macaddr,
    // bit, varbit, pg_lsn, jsonpath
    {"_xml", 143, 142},
    {"_money", 791, 790},
    {"_cidr", 651, 650},
    {"_inet", 1041, 869},
    {"_macaddr", 1040, 829},
    {"_bit", 1561, 1560},
    {"_varbit", 1563, 1562},
    {"_pg_lsn", 3221, 3220},
    {"_jsonpath", 4073, 4072},
  };

  private static final Map<String, Integer> OID_BY_NAME = new HashMap<>();
  private static final Map<Integer, Integer> ELEMENT_BY_ARRAY = new HashMap<>();
  private static final Set<Integer> BUILTIN_OIDS = new HashSet<>();

  static {
    for (Object[] row : BUILTINS) {
      OID_BY_NAME.put((String) row[0], (Integer) row[1]);
      BUILTIN_OIDS.add((Integer) row[1]);
      if (row.length == 3) {
        ELEMENT_BY_ARRAY.put((Integer) row[1], (Integer) row[2]);
      }
    }
  }

  private PgTextValues() {}

  /**
   * Returns the oid of a builtin type this class decodes, by its pg_catalog name (as a Type message
   * names a domain's base type).
   *
   * @param name a type name such as {@code int4} or {@code _text}
   * @return the oid, or 0 if the name is not one this class decodes
   */
  public static int builtinOid(String name) {
    Integer oid = OID_BY_NAME.get(name);
    return oid == null ? 0 : oid;
  }

  /**
   * Returns whether an oid is a builtin type this class decodes.
   *
   * @param oid a type oid
   * @return true if it is listed here
   */
  public static boolean isBuiltin(int oid) {
    return BUILTIN_OIDS.contains(oid);
  }

  /**
   * Returns the element type of an array type this class decodes.
   *
   * @param arrayOid an array type oid such as 1007 ({@code _int4})
   * @return the element type oid, or 0 if {@code arrayOid} is not such an array type
   */
  static int elementOid(int arrayOid) {
    Integer element = ELEMENT_BY_ARRAY.get(arrayOid);
    return element == null ? 0 : element;
  }

  /**
   * Decodes a text value held in a byte array (UTF-8) without copying it first where the type
   * allows.
   *
   * @param typeOid the type oid (a domain already mapped to its base type)
   * @param bytes the array
   * @param offset the first byte of the value
   * @param length the value's length in bytes
   * @return the value, see the class description
   * @throws IllegalArgumentException if the text does not parse as the type
   */
  public static Object decode(int typeOid, byte[] bytes, int offset, int length) {
    switch (typeOid) {
      case INT2:
        return (short)
            PgScalarValues.parseInteger(bytes, offset, length, Short.MIN_VALUE, Short.MAX_VALUE);
      case INT4:
        return (int)
            PgScalarValues.parseInteger(
                bytes, offset, length, Integer.MIN_VALUE, Integer.MAX_VALUE);
      case INT8:
        return PgScalarValues.parseInteger(bytes, offset, length, Long.MIN_VALUE, Long.MAX_VALUE);
      case OID:
        return PgScalarValues.parseInteger(bytes, offset, length, 0, 0xFFFF_FFFFL);
      case BYTEA:
        return PgScalarValues.parseBytea(bytes, offset, length);
      case BOOL:
      case DATE:
      case TIME:
      case TIMETZ:
      case TIMESTAMP:
      case TIMESTAMPTZ:
      case INTERVAL:
      case NUMERIC:
      case FLOAT4:
      case FLOAT8:
      case UUID_OID:
        // ASCII-only output: ISO-8859-1 is the cheapest String construction
        return decode(typeOid, new String(bytes, offset, length, StandardCharsets.ISO_8859_1));
      default:
        return decode(typeOid, new String(bytes, offset, length, StandardCharsets.UTF_8));
    }
  }

  /**
   * Decodes a text value.
   *
   * @param typeOid the type oid (a domain already mapped to its base type)
   * @param text PostgreSQL's text output of the value
   * @return the value, see the class description
   * @throws IllegalArgumentException if the text does not parse as the type
   */
  public static Object decode(int typeOid, String text) {
    switch (typeOid) {
      case BOOL:
        if (text.equals("t")) {
          return Boolean.TRUE;
        } else if (text.equals("f")) {
          return Boolean.FALSE;
        }
        throw new IllegalArgumentException("boolean output is 't' or 'f'");
      case INT2:
        return Short.parseShort(text);
      case INT4:
        return Integer.parseInt(text);
      case INT8:
        return Long.parseLong(text);
      case OID:
        return Integer.toUnsignedLong(Integer.parseUnsignedInt(text));
      case FLOAT4:
        return Float.parseFloat(PgScalarValues.checkFloat(text));
      case FLOAT8:
        return Double.parseDouble(PgScalarValues.checkFloat(text));
      case NUMERIC:
        return PgScalarValues.parseNumeric(text);
      case TEXT:
      case VARCHAR:
      case BPCHAR:
      case NAME:
      case CHAR:
        return text;
      case BYTEA:
        byte[] raw = text.getBytes(StandardCharsets.UTF_8);
        return PgScalarValues.parseBytea(raw, 0, raw.length);
      case UUID_OID:
        return PgScalarValues.parseUuid(text);
      case JSON:
      case JSONB:
        return new PgJson(text);
      case DATE:
        return PgTemporalValues.parseDate(text);
      case TIME:
        return PgTemporalValues.parseTime(text);
      case TIMETZ:
        return PgTemporalValues.parseTimeTz(text);
      case TIMESTAMP:
        return PgTemporalValues.parseTimestamp(text);
      case TIMESTAMPTZ:
        return PgTemporalValues.parseTimestampTz(text);
      case INTERVAL:
        return PgTemporalValues.parseInterval(text);
      default:
        int element = elementOid(typeOid);
        return element == 0 ? text : PgArrayValues.parse(text, element);
    }
  }

  /**
   * Decodes a text value, naming the column if it does not parse.
   *
   * @param column the column name, for the error
   * @param typeOid the column's type oid (a domain already mapped to its base type)
   * @param text PostgreSQL's text output of the value
   * @return the value
   * @throws CdcDecodingException naming the column, the type oid and the text if it does not parse
   */
  public static Object decode(String column, int typeOid, String text) {
    try {
      return decode(typeOid, text);
    } catch (RuntimeException e) {
      throw new CdcDecodingException(
          describeFailure(column, null, typeOid, typeOid, excerpt(text), e), e);
    }
  }

  /** Builds the text of a value failure: column, type oid(s), an excerpt of the text, cause. */
  public static String describeFailure(
      String column, String relation, int typeOid, int decodedAs, String excerpt, Throwable e) {
    String cause = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    if (cause.length() > 200) {
      cause = cause.substring(0, 200) + "...";
    }
    return "column \""
        + column
        + '"'
        + (relation == null ? "" : " of " + relation)
        + ": cannot decode text value "
        + excerpt
        + " as type oid "
        + Integer.toUnsignedString(typeOid)
        + (decodedAs == typeOid ? "" : " (decoded as builtin type oid " + decodedAs + ")")
        + ": "
        + cause;
  }

  /** Quotes a value for an error message, cut to about 100 characters. */
  public static String excerpt(String text) {
    return text.length() <= 100
        ? '"' + text + '"'
        : '"' + text.substring(0, 100) + "\"... (" + text.length() + " characters)";
  }

  /** Quotes a UTF-8 value for an error message, cut to about 100 characters. */
  public static String excerpt(byte[] bytes, int offset, int length) {
    String text = new String(bytes, offset, Math.min(length, 400), StandardCharsets.UTF_8);
    if (text.length() <= 100 && length <= 400) {
      return '"' + text + '"';
    }
    return '"' + text.substring(0, Math.min(100, text.length())) + "\"... (" + length + " bytes)";
  }
}
