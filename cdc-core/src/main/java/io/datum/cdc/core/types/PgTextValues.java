package io.datum.cdc.core.types;

import io.datum.cdc.CdcDecodingException;
import java.nio.charset.StandardCharsets;

/**
 * Decodes PostgreSQL's text output of a value, by type oid, to the Java type fixed in {@link
 * io.datum.cdc.event.Row}'s documentation. Assumes the session settings the source uses: {@code
 * DateStyle=ISO}, {@code extra_float_digits=3}, {@code bytea_output=hex} (escape is accepted too),
 * {@code IntervalStyle=iso_8601} ({@code postgres} is accepted too). Type oids: {@code
 * src/include/catalog/pg_type.dat}; output formats: PostgreSQL docs, chapter 8 Data Types.
 *
 * <p>The typed rows of {@link PgBuiltinType} decode to their Java values; every other type (enums,
 * user types, geometric, network, ...) stays as its text, a String, here. Arrays of user types and
 * of the builtin ranges are decoded by their {@link PgBinaryCodec#textValue} (the catalog knows
 * their element type), which the decoder uses for those columns. Arrays of the typed rows (and of
 * the rendered rows whose arrays are Lists) become {@link java.util.List}s, see {@link
 * PgArrayValues}; dates and times: {@link PgTemporalValues}; numbers, uuid and bytea: {@link
 * PgScalarValues}.
 *
 * <p>The decoding methods throw {@link IllegalArgumentException} (or {@link
 * java.time.DateTimeException}, {@link ArithmeticException}) for text that does not parse; the
 * caller names the column.
 */
public final class PgTextValues {

  private PgTextValues() {}

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
    PgBuiltinType type = PgBuiltinType.of(typeOid);
    if (type != null) {
      return type.decodeText(bytes, offset, length);
    }
    return decodeOther(typeOid, new String(bytes, offset, length, StandardCharsets.UTF_8));
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
    PgBuiltinType type = PgBuiltinType.of(typeOid);
    return type != null ? type.decodeText(text) : decodeOther(typeOid, text);
  }

  /** An array of a builtin type whose arrays are Lists, or else the text itself. */
  private static Object decodeOther(int typeOid, String text) {
    PgBuiltinType element = PgBuiltinType.elementOf(typeOid);
    return element != null && element.arrays() == PgBuiltinType.ArrayForm.LIST
        ? PgArrayValues.parse(text, element.oid())
        : text;
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
